package io.poyang.raft.server;

import io.poyang.raft.client.RaftOutcomeUnknownException;
import io.poyang.raft.core.RaftGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** Exactly-once writes: (session, seq) applied once, a retry gets the first result, across snapshots and restarts. */
class ExactlyOnceTest {

    @TempDir
    Path dir;

    private static final long SESSION = 0x5e55_1011L;

    private static long occurrences(long[] values, long v) {
        long n = 0;
        for (long x : values) {
            if (x == v) {
                n++;
            }
        }
        return n;
    }

    private static long submit(RaftCluster c, long value, long seq) {
        return c.onLeader(1, g -> g.submit(0, TestStateMachine.body(value), 10_000, SESSION, seq)
                .thenApply(TestStateMachine::index));
    }

    @Test
    void aWriteRetriedAfterATimeoutIsAppliedOnceAndGetsTheFirstResult() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.sessionWindow(4)).start()) {
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            RaftGroup g = c.group(leader, 1);
            // the followers get everything 400 ms late: the write cannot commit before its 150 ms deadline
            for (int n = 1; n <= 3; n++) {
                if (n != leader) {
                    c.faults.delay(leader, n, 400);
                }
            }
            try {
                g.submit(0, TestStateMachine.body(100), 150, SESSION, 1).get(10, TimeUnit.SECONDS);
                throw new AssertionError("the write was acknowledged before its followers could have it");
            } catch (ExecutionException e) {
                assertInstanceOf(RaftOutcomeUnknownException.class, e.getCause());
            }
            c.faults.heal();
            // the retry: same session and seq; the first attempt is (or will be) in the log
            long index = submit(c, 100, 1);
            long[] values = c.checkIdentical(1);
            assertEquals(1, occurrences(values, 100), "the retried write was applied " + occurrences(values, 100)
                    + " times");
            long[] indexes = c.call(c.waitForLeader(1), 1, () -> c.machine(c.waitForLeader(1), 1).indexes());
            for (int i = 0; i < values.length; i++) {
                if (values[i] == 100) {
                    assertEquals(indexes[i], index, "the retry did not get the first application's result");
                }
            }

            // an acknowledged write retried: same result, not applied again
            long first = submit(c, 200, 2);
            assertEquals(first, submit(c, 200, 2));
            assertEquals(1, occurrences(c.checkIdentical(1), 200));

            // the table is in snapshots: after a snapshot on every node and a full restart, still known
            for (int n = 1; n <= 3; n++) {
                RaftCluster.join(c.group(n, 1).takeSnapshot());
            }
            for (int n = 1; n <= 3; n++) {
                c.stopNode(n);
            }
            for (int n = 1; n <= 3; n++) {
                c.startNode(n);
            }
            assertEquals(first, submit(c, 200, 2), "the session was forgotten in the restart");
            assertEquals(1, occurrences(c.checkIdentical(1), 200));

            // a window of 4: seq 2 falls out after 4 more writes, and a retry of it is answered "unknown"
            for (long seq = 3; seq <= 6; seq++) {
                submit(c, 300 + seq, seq);
            }
            int l = c.waitForLeader(1);
            try {
                c.group(l, 1).submit(0, TestStateMachine.body(200), 10_000, SESSION, 2).get(10, TimeUnit.SECONDS);
                throw new AssertionError("a seq below the session's window was applied or answered");
            } catch (ExecutionException e) {
                assertInstanceOf(RaftOutcomeUnknownException.class, e.getCause());
            }
            long[] end = c.checkIdentical(1);
            assertEquals(1, occurrences(end, 200));
            assertEquals(1, occurrences(end, 100));
        }
    }
}
