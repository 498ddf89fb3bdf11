package io.poyang.raft.server;

import io.poyang.common.PoyangTimeoutException;
import io.poyang.net.BytesDecoder;
import io.poyang.raft.client.RaftClient;
import io.poyang.raft.client.RaftClientConfig;
import io.poyang.raft.client.RaftOutcomeUnknownException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertFalse;

class RaftClientTest {

    @TempDir
    Path dir;

    private RaftClient client;

    @AfterEach
    void stopClient() {
        if (client != null) {
            client.stop();
        }
    }

    private RaftClient clientFor(RaftCluster c) throws InterruptedException {
        return clientFor(c, new RaftClientConfig());
    }

    private RaftClient clientFor(RaftCluster c, RaftClientConfig cfg) throws InterruptedException {
        for (int n = 1; n <= c.nodeCount; n++) {
            cfg.node(n, "127.0.0.1:" + c.server(n).servicePort());
        }
        client = new RaftClient(cfg);
        client.start();
        client.waitForConnected(5_000);
        return client;
    }

    /**
     * A client that reaches each node of {@code c} through a {@link FreezableProxy}, made into
     * {@code proxies[node]} ({@code proxies.length} is the node count + 1); connected when it returns.
     */
    private RaftClient clientThroughProxies(RaftCluster c, FreezableProxy[] proxies) throws Exception {
        return clientThroughProxies(c, proxies, new RaftClientConfig());
    }

    private RaftClient clientThroughProxies(RaftCluster c, FreezableProxy[] proxies, RaftClientConfig cfg)
            throws Exception {
        for (int n = 1; n < proxies.length; n++) {
            proxies[n] = new FreezableProxy(c.server(n).servicePort(), 64 * 1024);
            cfg.node(n, "127.0.0.1:" + proxies[n].port());
        }
        client = new RaftClient(cfg);
        client.start();
        client.waitForConnected(5_000);
        return client;
    }

    /** A client whose exactly-once writes are resent after {@code attemptMillis} without an answer. */
    private RaftClient clientWithAttemptsOf(RaftCluster c, long attemptMillis) throws InterruptedException {
        RaftClientConfig cfg = new RaftClientConfig();
        cfg.exactlyOnceAttemptMillis = attemptMillis;
        return clientFor(c, cfg);
    }

    /** Everything the leader sends its followers arrives {@code millis} late. */
    private static void delayFollowers(RaftCluster c, int leader, long millis) {
        for (int n = 1; n <= 3; n++) {
            if (n != leader) {
                c.faults.delay(leader, n, millis);
            }
        }
    }

    private static long write(RaftClient client, long value, long timeoutMillis) throws Exception {
        byte[] r = client.write(1, 0, TestStateMachine.body(value), BytesDecoder.FACTORY, timeoutMillis)
                .get(timeoutMillis + 5_000, TimeUnit.MILLISECONDS);
        return ByteBuffer.wrap(r).getLong();
    }

    /**
     * The leader's host goes silent (its connection stays open: no reset comes, as when a machine
     * loses power or its network is black-holed) and the others elect another leader. The client
     * used to keep the silent node as the leader after a timeout and send every write there until
     * TCP gave up, minutes later.
     */
    @Test
    void aLeaderThatStopsAnsweringWithItsConnectionOpenIsLeftForTheNewLeader() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            FreezableProxy[] proxies = new FreezableProxy[4];
            try {
                clientThroughProxies(c, proxies);
                assertTrue(write(client, 1, 3_000) > 0);
                assertEquals(leader, client.knownLeader(1));

                proxies[leader].freeze();
                c.faults.isolate(leader);
                long start = System.nanoTime();
                long value = 2;
                while (true) {
                    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20),
                            "no write succeeded within 20 s of the leader going silent");
                    try {
                        write(client, value++, 1_000);
                        break;
                    } catch (ExecutionException e) {
                        assertInstanceOf(RaftOutcomeUnknownException.class, e.getCause(), "a timed-out write");
                    }
                }
                assertNotEquals(leader, client.knownLeader(1));
            } finally {
                for (FreezableProxy p : proxies) {
                    if (p != null) {
                        p.close();
                    }
                }
                c.faults.heal();
            }
        }
    }

    @Test
    void findsTheLeaderAndFollowsNotLeaderAnswersToIt() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            RaftClient client = clientFor(c);
            assertTrue(write(client, 1, 3_000) > 0);
            assertEquals(leader, client.knownLeader(1));
            int follower = leader % 3 + 1;
            client.updateLeader(1, follower);     // a stale belief
            long before = client.redirectCount();
            assertTrue(write(client, 2, 3_000) > 0);
            assertEquals(before + 1, client.redirectCount(), "one NOT_LEADER answer, followed to the leader");
            assertEquals(leader, client.knownLeader(1));
            long[] values = c.checkIdentical(1);
            assertEquals(2, values.length);
        }
    }

    @Test
    void retriesWithinTheDeadlineWhileANewLeaderIsElected() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            RaftClient client = clientFor(c);
            write(client, 1, 3_000);
            c.stopNode(leader);
            long retries = client.retryCount();
            // no leader for a while: the client keeps looking and sends when one is elected
            assertTrue(write(client, 2, 10_000) > 0);
            assertTrue(client.retryCount() > retries, "the write was retried");
            assertNotEquals(leader, client.knownLeader(1));
            c.checkIdentical(1);
        }
    }

    @Test
    void aWriteThatTimesOutInTheLogIsReportedAsOutcomeUnknown() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            RaftClient client = clientFor(c);
            write(client, 1, 3_000);
            c.faults.isolate(leader);   // the leader takes the write but cannot commit it
            try {
                write(client, 2, 300);
                throw new AssertionError("a write to a cut-off leader succeeded");
            } catch (ExecutionException e) {
                assertInstanceOf(RaftOutcomeUnknownException.class, e.getCause());
            }
            c.faults.heal();
            c.checkConsistent(1);
        }
    }

    /**
     * Found by the chaos runner (issue 11): after a membership change moved a group off a node that led it and
     * the node dropped the group, clients that still took it for the leader got BAD_REQUEST ("hosts no group")
     * on every request, at once, until something else made them look again — 40 s of failures in a 60 s run.
     * Such an answer now sends the client looking for the leader among the other nodes.
     */
    @Test
    void aNodeThatNoLongerHostsTheGroupSendsTheClientToTheLeader() throws Exception {
        RaftCluster cluster = new RaftCluster(dir, 4, 1);
        cluster.setMembers(1, 1, 2, 3);   // node 4 runs, hosting no group (a member the group was moved off)
        try (RaftCluster c = cluster.start()) {
            int leader = c.waitForLeader(1);
            RaftClient client = clientFor(c);
            write(client, 1, 3_000);
            client.updateLeader(1, 4);   // the stale belief a membership change leaves
            assertTrue(write(client, 2, 3_000) > 0);
            assertEquals(leader, client.knownLeader(1));
            assertEquals(2, c.checkIdentical(1).length);
        }
    }

    /**
     * The node taken for the leader no longer hosts the group, and the others answer the leader search
     * slowly (their traffic is frozen): the write still ends at its own deadline, not when the search
     * gives up (statusTimeoutMillis, 1 s).
     */
    @Test
    void aWriteSentToANodeThatNoLongerHostsTheGroupEndsAtItsDeadlineWhileTheSearchWaits() throws Exception {
        RaftCluster cluster = new RaftCluster(dir, 4, 1);
        cluster.setMembers(1, 1, 2, 3);
        try (RaftCluster c = cluster.start()) {
            c.waitForLeader(1);
            FreezableProxy[] proxies = new FreezableProxy[5];
            try {
                clientThroughProxies(c, proxies);
                assertTrue(write(client, 1, 3_000) > 0);
                for (int n = 1; n <= 3; n++) {
                    proxies[n].freeze();
                }
                client.updateLeader(1, 4);   // node 4 answers at once that it hosts no group 1
                long start = System.nanoTime();
                try {
                    write(client, 2, 300);
                    throw new AssertionError("a write succeeded with every host of the group frozen");
                } catch (ExecutionException e) {
                    assertInstanceOf(PoyangTimeoutException.class, e.getCause());
                }
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                // the search alone waits 1 s for the frozen nodes; 900 ms leaves the machine 600 ms of slack
                assertTrue(tookMillis < 900, "a 300 ms write ended after " + tookMillis + " ms");
            } finally {
                for (FreezableProxy p : proxies) {
                    if (p != null) {
                        p.close();
                    }
                }
            }
        }
    }

    @Test
    void aWriteNoLeaderTookIsATimeoutThatSaysNotApplied() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            RaftClient client = clientFor(c);
            write(client, 1, 3_000);
            int other = leader % 3 + 1;
            c.stopNode(leader);
            c.stopNode(other);   // one node of three: no leader can be elected
            try {
                write(client, 2, 1_500);
                throw new AssertionError("a write without a quorum succeeded");
            } catch (ExecutionException e) {
                assertInstanceOf(PoyangTimeoutException.class, e.getCause());
                assertFalse(e.getCause() instanceof RaftOutcomeUnknownException, "nobody took it: " + e.getCause());
            }
        }
    }

    /**
     * The leader's connection stops taking bytes (a frozen proxy): big writes fill the kernel buffers
     * and then the client's out buffers up to their cap, and a small write after them times out in
     * the write queue, never encoded. Its failure says not applied, not "may or may not be".
     */
    @Test
    void aWriteThatTimesOutBeforeItLeftTheClientIsReportedAsNotApplied() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            FreezableProxy[] proxies = new FreezableProxy[4];
            try {
                clientThroughProxies(c, proxies);
                assertTrue(write(client, 1, 3_000) > 0);
                proxies[leader].freeze();
                byte[] big = new byte[1 << 20];
                java.util.List<java.util.concurrent.CompletableFuture<byte[]>> ahead = new java.util.ArrayList<>();
                for (int i = 0; i < 48; i++) {   // 48 MiB: past the kernel buffers and the 16 MiB backlog cap
                    ahead.add(client.write(1, 0, new io.poyang.net.BytesBody(big), BytesDecoder.FACTORY, 2_000));
                }
                ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                        () -> write(client, 2, 500));
                assertInstanceOf(PoyangTimeoutException.class, e.getCause());
                assertFalse(e.getCause() instanceof RaftOutcomeUnknownException,
                        "it never left the client: " + e.getCause());
                for (java.util.concurrent.CompletableFuture<byte[]> f : ahead) {
                    try {
                        f.get(10, TimeUnit.SECONDS);
                    } catch (ExecutionException expected) {
                        // timed out on the frozen connection, one way or the other
                    }
                }
            } finally {
                for (FreezableProxy p : proxies) {
                    if (p != null) {
                        p.close();
                    }
                }
            }
        }
    }

    @Test
    void anExactlyOnceWriteIsResentAfterNoAnswerAndAppliedOnce() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            RaftClient client = clientWithAttemptsOf(c, 200);
            io.poyang.raft.client.RaftSession session = client.newSession();
            byte[] first = session.write(1, 0, TestStateMachine.body(1), BytesDecoder.FACTORY, 5_000).get(10, TimeUnit.SECONDS);
            // the followers get everything 700 ms late: no attempt of 200 ms is answered; the client
            // sends the write again (same session and seq) until the delayed copies commit
            delayFollowers(c, leader, 700);
            long retries = client.retryCount();
            byte[] r = session.write(1, 0, TestStateMachine.body(2), BytesDecoder.FACTORY, 20_000).get(30, TimeUnit.SECONDS);
            assertTrue(client.retryCount() > retries, "the write was not sent again");
            c.faults.heal();
            long index = ByteBuffer.wrap(r).getLong();
            long[] values = c.checkIdentical(1);
            long twos = java.util.Arrays.stream(values).filter(v -> v == 2).count();
            assertEquals(1, twos, "the resent write was applied " + twos + " times");
            long[] indexes = c.call(c.waitForLeader(1), 1, () -> c.machine(c.waitForLeader(1), 1).indexes());
            for (int i = 0; i < values.length; i++) {
                if (values[i] == 2) {
                    assertEquals(indexes[i], index, "the answer is not the first application's result");
                }
            }
            // the caller's own retry of an acknowledged write: the same result, not applied again
            byte[] again = session.retry(2, 1, 0, TestStateMachine.body(2), BytesDecoder.FACTORY, 5_000)
                    .get(10, TimeUnit.SECONDS);
            assertEquals(index, ByteBuffer.wrap(again).getLong());
            assertEquals(2, c.checkIdentical(1).length);
            assertTrue(ByteBuffer.wrap(first).getLong() > 0);
        }
    }

    @Test
    void anExactlyOnceWriteWhoseUnansweredAttemptMayBeInTheLogIsNotReportedAsNotApplied() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            RaftClient client = clientWithAttemptsOf(c, 100);
            io.poyang.raft.client.RaftSession session = client.newSession();
            session.write(1, 0, TestStateMachine.body(1), BytesDecoder.FACTORY, 5_000).get(10, TimeUnit.SECONDS);
            // the first attempt reaches the leader's log but commits only after the attempt gave up
            delayFollowers(c, leader, 400);
            long retries = client.retryCount();
            java.util.concurrent.CompletableFuture<byte[]> w =
                    session.write(1, 0, TestStateMachine.body(42), BytesDecoder.FACTORY, 1_000);
            RaftCluster.waitFor("the first attempt to go unanswered", () -> client.retryCount() > retries || w.isDone());
            // every later attempt is certainly refused (STOPPING) until the deadline
            c.group(leader, 1).refuseNewWrites();
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> w.get(10, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof RaftOutcomeUnknownException,
                    "the caller was told " + e.getCause() + ", and the first attempt was in the log");
            c.faults.heal();
            RaftCluster.waitFor("the first attempt to be applied", () ->
                    java.util.Arrays.stream(c.values(leader, 1)).anyMatch(v -> v == 42));
        }
    }

    /**
     * A leader cut off from its peers (the client still reaching it) takes an exactly-once write it can
     * never commit. When check-quorum ends its leadership it answers the write "stepped down, outcome
     * unknown" at once, and the client sends it to the new leader, which applies it once. Attempts are
     * as long as the deadline here, so that answer is the only thing that can make the client resend.
     */
    @Test
    void anExactlyOnceWriteTakenByALeaderCutOffFromItsPeersIsAppliedOnceByTheNewLeader() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            RaftClient client = clientWithAttemptsOf(c, 60_000);
            io.poyang.raft.client.RaftSession session = client.newSession();
            session.write(1, 0, TestStateMachine.body(1), BytesDecoder.FACTORY, 5_000).get(10, TimeUnit.SECONDS);
            assertEquals(leader, client.knownLeader(1));
            long committedBefore = c.group(leader, 1).commitIndex();

            c.faults.isolate(leader);
            byte[] r = session.write(1, 0, TestStateMachine.body(2), BytesDecoder.FACTORY, 20_000)
                    .get(30, TimeUnit.SECONDS);
            assertTrue(ByteBuffer.wrap(r).getLong() > committedBefore);
            assertTrue(c.group(leader, 1).lastLogIndex() > c.group(leader, 1).commitIndex(),
                    "the cut-off leader took the write");
            assertNotEquals(leader, client.knownLeader(1));

            c.faults.heal();
            long twos = java.util.Arrays.stream(c.checkIdentical(1)).filter(v -> v == 2).count();
            assertEquals(1, twos, "the write was applied " + twos + " times");
        }
    }

    /**
     * The leader's process stops answering the client too (frozen behind its proxy, as a paused
     * process — SIGSTOP, a long GC pause — or a black-holed network: the connection stays open and
     * nothing comes back) and is cut off from its peers, which elect another leader. The client's
     * heartbeat (1 s by default) finds the silent connection within about 2 s and closes it: the
     * exactly-once writes pending there are sent to the new leader, same session and seq, and applied
     * once well within their deadline; a plain write pending there ends outcome-unknown with the lost
     * connection and is not sent again. Attempts are as long as the deadline here, so noticing the
     * silent connection is the only thing that can move the writes: with the network layer's 10 s
     * heartbeat they all waited out their 8 s deadline on the frozen connection.
     */
    @Test
    void exactlyOnceWritesPendingOnALeaderThatWentSilentAreAppliedOnceByTheNewLeader() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            FreezableProxy[] proxies = new FreezableProxy[4];
            try {
                RaftClientConfig cfg = new RaftClientConfig();
                cfg.exactlyOnceAttemptMillis = 60_000;
                clientThroughProxies(c, proxies, cfg);
                io.poyang.raft.client.RaftSession session = client.newSession();
                session.write(1, 0, TestStateMachine.body(1), BytesDecoder.FACTORY, 5_000).get(10, TimeUnit.SECONDS);
                assertEquals(leader, client.knownLeader(1));

                // nothing the frozen leader says later (a "stepped down" answer) reaches the client
                proxies[leader].freeze();
                long deadlineMillis = 8_000;
                int exactlyOnceWrites = 5;
                java.util.List<java.util.concurrent.CompletableFuture<byte[]>> pending = new java.util.ArrayList<>();
                for (int i = 0; i < exactlyOnceWrites; i++) {
                    pending.add(session.write(1, 0, TestStateMachine.body(100 + i), BytesDecoder.FACTORY, deadlineMillis));
                }
                java.util.concurrent.CompletableFuture<byte[]> plain = client.write(1, 0, TestStateMachine.body(999),
                        BytesDecoder.FACTORY, deadlineMillis);
                c.faults.isolate(leader);

                for (int i = 0; i < exactlyOnceWrites; i++) {
                    byte[] r = pending.get(i).get(deadlineMillis + 5_000, TimeUnit.MILLISECONDS);
                    assertTrue(ByteBuffer.wrap(r).getLong() > 0, "exactly-once write " + i);
                }
                ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                        () -> plain.get(deadlineMillis + 5_000, TimeUnit.MILLISECONDS));
                assertInstanceOf(RaftOutcomeUnknownException.class, e.getCause(), "the plain write");
                Throwable why = e.getCause().getCause();
                assertTrue(why instanceof io.poyang.net.NetConnectionException
                                && !(why instanceof io.poyang.net.NetNotSentException),
                        "the plain write ended when the silent connection was closed, not at its deadline: " + why);
                assertNotEquals(leader, client.knownLeader(1), "the client writes to the new leader");

                c.faults.heal();
                long[] values = c.checkIdentical(1);
                for (int i = 0; i < exactlyOnceWrites; i++) {
                    long v = 100 + i;
                    long times = java.util.Arrays.stream(values).filter(x -> x == v).count();
                    assertEquals(1, times, "exactly-once write " + v + " was applied " + times + " times");
                }
                assertFalse(java.util.Arrays.stream(values).anyMatch(x -> x == 999),
                        "the plain write never left the frozen connection; it was sent again");
            } finally {
                for (FreezableProxy p : proxies) {
                    if (p != null) {
                        p.close();
                    }
                }
                c.faults.heal();
            }
        }
    }
}
