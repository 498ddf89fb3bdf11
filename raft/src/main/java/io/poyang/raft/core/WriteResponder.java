package io.poyang.raft.core;

import io.poyang.codec.Encodable;
import io.poyang.common.FlowControlException;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.common.StoppedException;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.RemoteException;
import io.poyang.net.ResponseCode;
import io.poyang.net.WritePacket;
import io.poyang.raft.client.LeaderSteppedDownException;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.client.RaftCommands;
import io.poyang.raft.client.RaftOutcomeUnknownException;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Answers writes (dispatcher thread) and gives their flow-control room back, in one atomic per
 * batch: call {@link #flush()} after a batch of answers. A network write is answered with a packet
 * through its connection's I/O worker, which writes every answer queued for the connection at
 * once; an embedded write's future is completed on the callback executor, never on the
 * dispatcher.
 */
final class WriteResponder {

    private static final PoyangLog log = PoyangLogs.get(WriteResponder.class);

    private final int groupId;
    /** This node: named in a {@link LeaderSteppedDownException}. */
    private final int selfId;
    private final WriteFlowControl flowControl;
    private final Executor callbackExecutor;
    private int releaseCount;
    private long releaseBytes;
    /** The dispatcher's cached clock (no system call per write). */
    private final java.util.function.LongSupplier clock;
    /**
     * Metrics, written on the dispatcher only and read racily: latency of the client writes that got
     * an index, from the leader writer taking them to their answer (log, replication, commit, apply).
     */
    final io.poyang.common.DurationHistogram latency = new io.poyang.common.DurationHistogram();
    /** Client writes answered: applied, refused by the state machine, failed by raft. */
    long succeeded;
    long rejected;
    long failed;

    WriteResponder(int groupId, int selfId, WriteFlowControl flowControl, Executor callbackExecutor,
                   java.util.function.LongSupplier clock) {
        this.groupId = groupId;
        this.selfId = selfId;
        this.flowControl = flowControl;
        this.callbackExecutor = callbackExecutor;
        this.clock = clock;
    }

    private void measure(WriteTask t) {
        if (t.flowCounted && t.takenNanos != 0) {
            latency.record(clock.getAsLong() - t.takenNanos);
        }
    }

    void succeed(WriteTask t, Encodable result) {
        release(t);
        measure(t);
        if (t.flowCounted) {
            succeeded++;
        }
        if (t.context != null) {
            t.context.respond(WritePacket.response(result));
        } else {
            completeLater(t, result, null);
        }
    }

    /** The state machine refused the write with its own code. */
    void bizError(WriteTask t, int bizCode, String message) {
        release(t);
        measure(t);
        if (t.flowCounted) {
            rejected++;
        }
        if (t.context != null) {
            t.context.respond(WritePacket.bizError(bizCode, message));
        } else {
            completeLater(t, null, new RemoteException(ResponseCode.BIZ_ERROR, bizCode, message));
        }
    }

    /**
     * Fails a write with a {@link ResponseCode}; {@code detail} is the leader id for NOT_LEADER.
     * Only NOT_LEADER, FLOW_CONTROL, TIMEOUT and STOPPING say "not applied"; SYS_ERROR says "the
     * outcome is unknown".
     */
    void fail(WriteTask t, int responseCode, int detail, String message) {
        release(t);
        measure(t);
        if (t.flowCounted) {
            failed++;
        }
        if (t.context != null) {
            t.context.respond(WriteTask.errorPacket(responseCode, detail, message));
        } else {
            completeLater(t, null, toException(responseCode, detail, message));
        }
    }

    private Throwable toException(int responseCode, int detail, String message) {
        switch (responseCode) {
            case ResponseCode.NOT_LEADER:
                return new NotLeaderException(groupId, detail, message);
            case ResponseCode.FLOW_CONTROL:
                return new FlowControlException(message);
            case ResponseCode.TIMEOUT:
                return new PoyangTimeoutException(message);
            case ResponseCode.STOPPING:
                return new StoppedException(message);
            case ResponseCode.SYS_ERROR:
                if (detail == RaftCommands.SYS_ERROR_STEPPED_DOWN) {
                    // only writes a copy of which is safe get it (ApplyManager.answerUncommittedAtStepDown):
                    // the embedder can tell "send it again" from "no answer by the deadline"
                    return new LeaderSteppedDownException(groupId, selfId, message);
                }
                return new RaftOutcomeUnknownException(groupId, message, null);
            default:
                return new RaftOutcomeUnknownException(groupId, message, null);
        }
    }

    private void release(WriteTask t) {
        if (t.flowCounted) {
            releaseCount++;
            releaseBytes += t.flowBytes;
        }
    }

    /** Gives the room of the writes answered since the last flush back, in one atomic. */
    void flush() {
        if (releaseCount != 0) {
            flowControl.release(releaseCount, releaseBytes);
            releaseCount = 0;
            releaseBytes = 0;
        }
    }

    private void completeLater(WriteTask t, Encodable value, Throwable error) {
        Runnable r = () -> {
            if (error == null) {
                t.future.complete(value);
            } else {
                t.future.completeExceptionally(error);
            }
        };
        try {
            callbackExecutor.execute(r);
        } catch (RejectedExecutionException e) {
            log.warn("group {}: the callback executor refused a write's answer; completing it here", groupId);
            r.run();
        }
    }

    /** Completes an embedder's future on the callback executor (never on the dispatcher or an I/O thread). */
    <T> void completeLater(java.util.concurrent.CompletableFuture<T> f, T value, Throwable error) {
        Runnable r = () -> {
            if (error == null) {
                f.complete(value);
            } else {
                f.completeExceptionally(error);
            }
        };
        try {
            callbackExecutor.execute(r);
        } catch (RejectedExecutionException e) {
            r.run();
        }
    }
}
