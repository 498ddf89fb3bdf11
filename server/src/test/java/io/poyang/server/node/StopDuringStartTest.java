package io.poyang.server.node;

import io.poyang.common.StoppedException;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.store.FileIo;
import io.poyang.raft.store.OpenFilesIo;
import io.poyang.server.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An embedding stops a node that is still starting (its owner is shutting down while the groups
 * recover long logs): the start gives up instead of running to its end first.
 */
class StopDuringStartTest {

    private static final long WAIT_MILLIS = 30_000;

    @TempDir
    Path tmp;

    /**
     * Before, {@code stop()} waited on the node's lock for the whole start: every group's log
     * recovery and replay, minutes on large logs, and only then stopped the node it had started.
     */
    @Test
    void aStopDuringTheGroupsRecoveryEndsTheStartAsStoppedAndTheNodeStartsLaterOnItsData() throws Exception {
        Path conf = tmp.resolve("config.properties");
        Path data = tmp.resolve("data");
        PoyangNode first = InProcessNodes.singleNode(conf, data, Collections.emptyMap());
        first.config().raft.segmentBytes(16 << 10);
        first.start();
        try (KvClient kv = new KvClient(new KvClientConfig().servers("127.0.0.1:" + first.servicePort()))) {
            kv.start();
            for (int i = 0; i < 300; i++) {
                kv.put("k" + i, "value " + i);
            }
        } finally {
            first.stop();
        }

        HeldRead held = new HeldRead(data.resolve("group-1").resolve("log"));
        PoyangNode node = InProcessNodes.singleNode(conf, data, Collections.emptyMap());
        node.config().raft.segmentBytes(16 << 10).logFileIo(held.io);
        AtomicReference<Throwable> startFailure = new AtomicReference<>();
        Thread starter = starter(node, startFailure);
        Thread stopper = new Thread(node::stop, "stopper");
        try {
            starter.start();
            assertTrue(held.reached.await(WAIT_MILLIS, TimeUnit.MILLISECONDS), "the recovery read nothing");
            stopper.start();
            // the stop has told the group to give up its recovery: the group's start fails at once
            // (the recovery itself ends at its next safe point, after the held read). The stopping
            // thread's state does not tell that: it waits on the way (for the service port's I/O
            // threads to end) before it tells the groups, and a release then let the recovery read
            // on (CI saw 3 reads).
            RaftGroup group = node.raftServer().group(1);
            Await.until("the group to give up its start", WAIT_MILLIS, () -> group.startedFuture().isDone());
        } finally {
            held.release.countDown();
        }
        stopper.join(WAIT_MILLIS);
        starter.join(WAIT_MILLIS);
        assertFalse(stopper.isAlive(), "the stop did not return");
        assertFalse(starter.isAlive(), "the start did not end");
        Throwable f = startFailure.get();
        assertTrue(f instanceof StoppedException && f.getMessage().contains("stopped while it started"),
                String.valueOf(f));
        assertEquals(0, held.readsAfterRelease.get(), "the recovery read on after the stop");
        assertEquals(Collections.emptyList(), held.io.openFiles(), "files of the abandoned start still open");
        assertFalse(node.isStopped(), "a start that did not end is not a stopped node");

        // the data directory was released and nothing was lost
        PoyangNode again = InProcessNodes.singleNode(conf, data, Collections.emptyMap());
        again.start();
        try (KvClient kv = new KvClient(new KvClientConfig().servers("127.0.0.1:" + again.servicePort()))) {
            kv.start();
            assertEquals("value 299", kv.getString("k299"));
        } finally {
            again.stop();
        }
    }

    /**
     * A stop that lands after the start's last check but before the start returned: before, the stop
     * stopped the raft server under the start, and the start went on to return as if the node served
     * (its ready line printed over a stopped server). The start and the stop must agree on which came
     * first: here the stop did, so the start fails as stopped and leaves nothing running.
     */
    @Test
    void aStopAfterTheStartsLastStepEndsTheStartAsStoppedNotAsReady() throws Exception {
        Path conf = tmp.resolve("config.properties");
        Path data = tmp.resolve("data");
        PoyangNode node = InProcessNodes.singleNode(conf, data, Collections.emptyMap());
        CountDownLatch reached = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        node.beforeStartCompletes = () -> {
            reached.countDown();
            try {
                release.await(WAIT_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        AtomicReference<Throwable> startFailure = new AtomicReference<>();
        Thread starter = starter(node, startFailure);
        Thread stopper = new Thread(node::stop, "stopper");
        try {
            starter.start();
            assertTrue(reached.await(WAIT_MILLIS, TimeUnit.MILLISECONDS), "the start never reached its end");
            int servicePort = node.servicePort();
            stopper.start();
            // the stop has cut the start: cutting it (the phase's compare-and-set) is the stop's first
            // step and takes no lock, so the stopping thread is BLOCKED only after it, in the raft
            // server's stop (a monitor taken on the way, a log handler's) or on the node's lock,
            // where it ends up until the release; either way the start's outcome is settled
            Await.until("the stop to wait for the start", WAIT_MILLIS,
                    () -> stopper.getState() == Thread.State.BLOCKED);
            release.countDown();
            stopper.join(WAIT_MILLIS);
            starter.join(WAIT_MILLIS);
            assertFalse(stopper.isAlive(), "the stop did not return");
            assertFalse(starter.isAlive(), "the start did not end");
            Throwable f = startFailure.get();
            assertTrue(f instanceof StoppedException && f.getMessage().contains("stopped while it started"),
                    "the start returned as if the node served, or failed otherwise: " + f);
            assertFalse(node.isStopped(), "a start that did not end is not a stopped node");
            assertTrue(portIsFree(servicePort), "the service port of the abandoned start is still open");
        } finally {
            release.countDown();
        }

        // the data directory was released: the node starts on it
        PoyangNode again = InProcessNodes.singleNode(conf, data, Collections.emptyMap());
        again.start();
        again.stop();
    }

    /** A thread (not started) that starts {@code node} and keeps what the start threw. */
    private static Thread starter(PoyangNode node, AtomicReference<Throwable> startFailure) {
        return new Thread(() -> {
            try {
                node.start();
            } catch (Throwable t) {
                startFailure.set(t);
            }
        }, "starter");
    }

    private static boolean portIsFree(int port) {
        try (java.net.ServerSocket s = new java.net.ServerSocket()) {
            s.bind(new java.net.InetSocketAddress("127.0.0.1", port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** A log FileIo that holds the first read under one directory until released, and counts the reads after. */
    private static final class HeldRead {
        final CountDownLatch reached = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger readsAfterRelease = new AtomicInteger();
        private final AtomicBoolean holding = new AtomicBoolean();
        final OpenFilesIo io;

        HeldRead(Path dir) {
            Path under = dir.toAbsolutePath();
            io = new OpenFilesIo(FileIo.DEFAULT, file -> {
                if (!file.toAbsolutePath().startsWith(under)) {
                    return;
                }
                if (holding.compareAndSet(false, true)) {
                    reached.countDown();
                    try {
                        if (!release.await(60, TimeUnit.SECONDS)) {
                            throw new IOException("the test never released the held read of " + file);
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IOException(e);
                    }
                } else if (release.getCount() == 0) {
                    readsAfterRelease.incrementAndGet();
                }
            });
        }
    }
}
