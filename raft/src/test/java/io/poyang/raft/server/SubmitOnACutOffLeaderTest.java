package io.poyang.raft.server;

import io.poyang.codec.Encodable;
import io.poyang.raft.client.LeaderSteppedDownException;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.core.RaftGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Embedded writes ({@link RaftGroup#submit}) that a leader takes after it was cut off from its peers:
 * it can never commit them and steps down an election timeout later. One with a session is answered
 * at the step-down — {@link LeaderSteppedDownException}, send it again to the new leader — as a
 * network write with a session is; one without keeps waiting (a copy could be applied twice).
 * Before, the session write too waited for its deadline, and the embedder learned nothing until then.
 */
class SubmitOnACutOffLeaderTest {

    private static final long SESSION = 0x0c07_0ffL;
    /** Far beyond the test's waits: a write answered within them was not answered by its deadline. */
    private static final long WRITE_TIMEOUT_MILLIS = 300_000;

    @TempDir
    Path dir;

    private static long occurrences(long[] values, long v) {
        long n = 0;
        for (long x : values) {
            if (x == v) {
                n++;
            }
        }
        return n;
    }

    @Test
    void aSessionWriteIsAnsweredAtTheStepDownAndItsCopyIsAppliedOnceByTheNewLeaderWhileAPlainWriteWaits()
            throws Exception {
        // One callback thread: the answers of one step-down are queued to it in one dispatcher step,
        // so once a task queued after the session write's answer ran, any answer of the step-down ran.
        ExecutorService callbacks = Executors.newSingleThreadExecutor();
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.electionTimeoutMillis(1_000))) {
            c.callbackExecutor = callbacks;
            c.start();
            int old = c.waitForLeader(1);
            c.write(1, 1);
            RaftGroup oldLeader = c.group(old, 1);
            long committedBefore = oldLeader.commitIndex();

            c.faults.isolate(old);
            CompletableFuture<Encodable> plain = oldLeader.submit(0, TestStateMachine.body(500), WRITE_TIMEOUT_MILLIS);
            CompletableFuture<Encodable> session = oldLeader.submit(0, TestStateMachine.body(700),
                    WRITE_TIMEOUT_MILLIS, SESSION, 1);

            RaftCluster.waitFor("the cut-off leader to step down", () -> oldLeader.role() != RaftRole.LEADER);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> session.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS),
                    "the session write was not answered at the step-down");
            assertInstanceOf(LeaderSteppedDownException.class, e.getCause());
            LeaderSteppedDownException steppedDown = (LeaderSteppedDownException) e.getCause();
            assertEquals(old, steppedDown.nodeId());
            assertEquals(1, steppedDown.groupId());
            assertTrue(steppedDown.getMessage().contains("same session and seq"), steppedDown.getMessage());

            // the write had its index on the old leader, above what it could commit (the case under test)
            assertTrue(oldLeader.lastLogIndex() >= committedBefore + 2, "the cut-off leader took both writes");
            assertEquals(committedBefore, oldLeader.commitIndex(), "the cut-off leader committed nothing");
            callbacks.submit(() -> { }).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertFalse(plain.isDone(), "a write without a session was answered at the step-down: "
                    + describe(plain));

            // what the answer says to do: the copy goes to the new leader and is applied there
            int fresh = c.waitForLeader(1);
            assertNotEquals(old, fresh);
            c.group(fresh, 1).submit(0, TestStateMachine.body(700), 10_000, SESSION, 1)
                    .get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            for (int i = 0; i < 3; i++) {
                c.write(1, 2 + i);   // the new leader's entries take the old leader's indexes
            }

            c.faults.heal();
            // the old leader's entry under the plain write is overwritten: answered "not applied"
            ExecutionException notApplied = assertThrows(ExecutionException.class,
                    () -> plain.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
            assertInstanceOf(NotLeaderException.class, notApplied.getCause());
            long[] values = c.checkIdentical(1);
            assertEquals(1, occurrences(values, 700), "the session write was applied once");
            assertEquals(0, occurrences(values, 500), "the plain write of the cut-off leader was applied");
        } finally {
            callbacks.shutdown();
        }
    }

    private static String describe(CompletableFuture<?> f) {
        try {
            return String.valueOf(f.getNow(null));
        } catch (RuntimeException e) {
            return String.valueOf(e.getCause());
        }
    }
}
