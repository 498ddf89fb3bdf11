package io.poyang.raft.core;

import io.poyang.codec.Encodable;
import io.poyang.net.ReqContext;
import io.poyang.net.ResponseCode;
import io.poyang.net.WritePacket;

import java.util.concurrent.CompletableFuture;

/**
 * One client write on its way through a group: admitted on a network thread (or by
 * {@link RaftGroup#submit}), given a log index by the {@link LeaderWriter}, answered by the
 * {@link ApplyManager} once applied (or failed earlier). Exactly one of {@link #context} (a network
 * write, answered with a packet) and {@link #future} (an embedded write) is set.
 */
final class WriteTask {

    final int bizType;
    final Encodable body;
    /** Bytes counted against the group's flow control. */
    final int flowBytes;
    /** When the writer gives up, on System.nanoTime's scale (Long.MAX_VALUE: never). */
    final long deadlineNanos;
    final ReqContext context;
    final CompletableFuture<Encodable> future;
    /** Assigned by the leader writer; 0 until then. */
    long index;
    int term;

    WriteTask(int bizType, Encodable body, int flowBytes, long deadlineNanos, ReqContext context,
              CompletableFuture<Encodable> future) {
        this.bizType = bizType;
        this.body = body;
        this.flowBytes = flowBytes;
        this.deadlineNanos = deadlineNanos;
        this.context = context;
        this.future = future;
    }

    boolean isExpired(long nowNanos) {
        return deadlineNanos != Long.MAX_VALUE && nowNanos - deadlineNanos >= 0;
    }

    @Override
    public String toString() {
        return "WriteTask(bizType " + bizType + ", index " + index + ", term " + term + ")";
    }

    /** Builds the network answer for a failure; embedded writes get the matching exception. */
    static WritePacket errorPacket(int responseCode, int detail, String message) {
        return detail == 0 ? WritePacket.error(responseCode, message)
                : WritePacket.error(responseCode, detail, message);
    }

    static boolean isKnownNotApplied(int responseCode) {
        return responseCode == ResponseCode.NOT_LEADER || responseCode == ResponseCode.FLOW_CONTROL
                || responseCode == ResponseCode.TIMEOUT || responseCode == ResponseCode.STOPPING;
    }
}
