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
    /** The log entry type: {@link io.poyang.raft.store.LogItem#TYPE_NORMAL}, or TYPE_CONFIG_CHANGE for a membership entry. */
    int entryType = io.poyang.raft.store.LogItem.TYPE_NORMAL;
    /** False for raft's own entries, which take no flow-control room. */
    boolean flowCounted = true;
    /** Exactly-once writes: the client's session id and this write's sequence number (0: none). */
    long sessionId;
    long sessionSeq;
    /**
     * A repeat of this write is applied at most once (it has a raft session, or it carries the state
     * machine's own session, as a DtKV write does), so a client may send it again to another leader. When this
     * node stops leading with the write not committed as far as it knows, it answers it at once —
     * outcome unknown, {@link io.poyang.raft.client.RaftCommands#SYS_ERROR_STEPPED_DOWN} — instead of
     * keeping it until its index is applied or its deadline passes: a leader cut off from its peers
     * learns neither before the deadline, while the client could have had it done by the new leader.
     */
    boolean answerAtStepDown;
    /** Assigned by the leader writer; 0 until then. */
    long index;
    int term;
    /** When the leader writer gave it its index (the dispatcher's cached clock); 0 before. For the latency metric. */
    long takenNanos;

    WriteTask(int bizType, Encodable body, int flowBytes, long deadlineNanos, ReqContext context,
              CompletableFuture<Encodable> future) {
        this.bizType = bizType;
        this.body = body;
        this.flowBytes = flowBytes;
        this.deadlineNanos = deadlineNanos;
        this.context = context;
        this.future = future;
    }

    /** A configuration entry of raft's own (membership changes); answered with no result once applied. */
    static WriteTask config(Members m, long deadlineNanos, CompletableFuture<Encodable> future) {
        WriteTask t = new WriteTask(0, MembersCodec.encode(m), 0, deadlineNanos, null, future);
        t.entryType = io.poyang.raft.store.LogItem.TYPE_CONFIG_CHANGE;
        t.flowCounted = false;
        return t;
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
