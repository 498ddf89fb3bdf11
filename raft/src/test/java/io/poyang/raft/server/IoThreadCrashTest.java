package io.poyang.raft.server;

import io.poyang.codec.PbCallback;
import io.poyang.log.ImpossibleStates;
import io.poyang.net.BytesBody;
import io.poyang.net.BytesDecoder;
import io.poyang.net.NioClient;
import io.poyang.net.NioClientConfig;
import io.poyang.net.Peer;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.WritePacket;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.store.ByteBody;
import io.poyang.raft.store.FaultyFileIo;
import io.poyang.raft.store.LogJournal;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An I/O thread of a node's service port crashes (a bug: here an Error thrown by an extension's
 * decoder, which the worker does not catch): the node says so, for health checks and metrics,
 * instead of going on as if nothing happened with a port that takes no connections. Likewise a
 * crash of the node's log journal threads (its writer, its checkpoint thread), which fails every
 * group's log on the node.
 */
class IoThreadCrashTest {

    /** A command of a service extension whose decoder fails with an Error. */
    private static final int CRASHING_COMMAND = 1_000;

    @TempDir
    Path dir;

    @AfterEach
    void forgetTheCrash() {
        ImpossibleStates.reset();   // the crash is reported as one, on purpose
    }

    @Test
    void aCrashedServiceIoThreadMakesTheServerReportAProblem() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 1, 1)) {
            c.serverTweak = b -> b.serviceExtension((server, service) -> service.register(CRASHING_COMMAND,
                    new ReqProcessor<Object>() {
                        @Override
                        public PbCallback<Object> createDecoder() {
                            throw new AssertionError("a deliberate crash of the service I/O thread, for the test");
                        }

                        @Override
                        public WritePacket process(ReqContext context, Object body) {
                            return null;
                        }
                    }));
            c.start();
            c.waitForLeader(1);
            RaftServer server = c.server(1);
            assertNull(server.ioProblem());

            NioClient client = new NioClient(new NioClientConfig());
            client.start();
            try {
                Peer p = client.addPeer("127.0.0.1:" + server.servicePort());
                // the answer never comes: the connection is closed with the thread
                client.sendRequest(p, WritePacket.request(CRASHING_COMMAND, new BytesBody(new byte[]{8, 1})),
                        BytesDecoder.FACTORY, 5_000);
                RaftCluster.waitFor("the crash to be seen", () -> server.ioProblem() != null);
            } finally {
                client.stop();
            }
            String problem = server.ioProblem();
            assertTrue(problem.startsWith("1 of 1 I/O thread of the service port crashed")
                    && problem.contains("restart the node"), problem);
            Map<String, Integer> crashed = server.crashedIoThreads();
            assertEquals(1, crashed.get("service"));
            assertEquals(0, crashed.get("replication"));
            assertEquals(0, crashed.get("replication_client"));
            assertEquals(1, ImpossibleStates.count());
            ImpossibleStates.reset();   // before the cluster's close checks that none was reported
            // the group itself is fine: raft goes on without the service port
            c.write(1, 42);
        }
    }

    /**
     * The log journal's writer or its checkpoint thread crashes (an Error in its I/O: a bug): the
     * writes after it fail with the journal's failure rather than hang, the node reports it for
     * health checks, and a restart of the node brings the group back with every acknowledged write.
     */
    @ParameterizedTest(name = "thread {0}")
    @ValueSource(strings = {"-journal", "-journal-checkpoint"})
    void aCrashedLogJournalThreadFailsTheWritesAndMakesTheServerReportAProblem(String threadSuffix) throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        AtomicLong crashes = new AtomicLong();
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> rc.logFileIo(io))) {
            c.serverTweak = b -> b.logJournal(true).logJournalFiles(3, LogJournal.MIN_FILE_BYTES);
            c.start();
            c.waitForLeader(1);
            for (long v = 1; v <= 100; v++) {
                c.write(1, v);   // acknowledged before the crash: must survive it
            }
            io.hook = new FaultyFileIo.Hook() {
                private void crashOnTheJournalThread() {
                    // the journal's threads are named raft-<node>-journal and raft-<node>-journal-checkpoint
                    if (Thread.currentThread().getName().endsWith(threadSuffix)) {
                        crashes.incrementAndGet();
                        throw new AssertionError("a deliberate crash of " + Thread.currentThread().getName()
                                + ", for the test");
                    }
                }

                @Override
                public void beforeWrite(Path file, long position, int length) {
                    crashOnTheJournalThread();
                }

                @Override
                public void beforeForce(Path file, boolean metadata) {
                    crashOnTheJournalThread();
                }
            };
            // Entries of 64 KiB (not test values: the state machine refuses them) fill the journal's
            // 4 MiB file: entering the next one starts a checkpoint. The writer crashes at the first.
            RaftGroup g = c.group(1, 1);
            ByteBody large = new ByteBody(new byte[64 << 10]);
            for (int i = 0; i < 1_000 && g.failure() == null; i++) {
                try {
                    g.submit(0, large, 10_000).get(20, TimeUnit.SECONDS);
                } catch (ExecutionException refusedOrFailed) {
                    // refused by the state machine, or failed by the crash under test: the loop checks which
                }
            }
            assertTrue(crashes.get() > 0, "the journal's " + threadSuffix + " thread never did I/O");
            Throwable failure = g.failure();
            assertTrue(failure != null && failure.getMessage().contains("deliberate crash")
                    && failure.getMessage().contains("restart the node"), String.valueOf(failure));
            // a write now fails at once, it does not hang
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> g.submit(0, TestStateMachine.body(101), 10_000).get(20, TimeUnit.SECONDS));
            System.out.println("JOURNAL CRASH " + threadSuffix + ": a write after it: " + e.getCause());
            String problem = c.server(1).ioProblem();
            assertTrue(problem != null && problem.contains("log journal failed") && problem.contains("deliberate crash")
                    && problem.contains("restart the node"), String.valueOf(problem));
            // the metrics' count of crashed I/O threads names the journal's thread that crashed
            Map<String, Integer> crashed = c.server(1).crashedIoThreads();
            boolean writer = threadSuffix.equals("-journal");
            assertEquals(writer ? 1 : 0, crashed.get("log_journal"), String.valueOf(crashed));
            assertEquals(writer ? 0 : 1, crashed.get("log_journal_checkpoint"), String.valueOf(crashed));
            assertEquals(0, crashed.get("service"));

            io.hook = new FaultyFileIo.Hook() {
            };
            c.restartNode(1);
            c.waitForLeader(1);
            assertNull(c.server(1).ioProblem());
            c.write(1, 102);
            long[] values = c.checkIdentical(1);
            for (int i = 0; i < 100; i++) {
                assertEquals(i + 1, values[i], "acknowledged value " + (i + 1) + " lost or moved");
            }
            assertEquals(102, values[values.length - 1]);
        }
    }
}
