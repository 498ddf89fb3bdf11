package io.poyang.raft.core;

import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberFuture;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.log.WarningThrottle;
import io.poyang.net.RpcCallback;
import io.poyang.raft.client.RaftCommands;

import io.poyang.raft.store.LogFile;

import java.nio.ByteBuffer;

/**
 * Sends a snapshot's data file to a follower that is behind the leader's first log index, one
 * chunk at a time (each waits for its answer), as part of that follower's {@link Replicator}.
 * Returns true when the follower installed it. The snapshot is kept from deletion while it is sent.
 */
final class SnapshotSender extends FiberFrame<Boolean> {

    private static final PoyangLog log = PoyangLogs.get(SnapshotSender.class);

    private final RaftGroup g;
    private final Replicator replicator;
    private final SnapshotFiles.Snapshot snapshot;
    private LogFile file;
    private long offset;
    private int length;
    private boolean last;
    /** When the chunk in flight left, its lease stamp and its read round (what its answer proves). */
    private long sendNanos;
    private long leaseStamp;
    private long readRound;
    private boolean acquired;

    SnapshotSender(RaftGroup g, Replicator replicator, SnapshotFiles.Snapshot snapshot) {
        this.g = g;
        this.replicator = replicator;
        this.snapshot = snapshot;
    }

    @Override
    public FrameCallResult execute(Object input) {
        g.snapshotManager.acquire(snapshot);
        acquired = true;
        if (replicator.snapshotRefusals.inRun() || replicator.snapshotSendFailures.inRun()) {
            // a retry: the first attempt was logged, and its failures are (throttled)
            log.debug("group {}: sending {} to follower {} again", g.state.groupId, snapshot, replicator.peerId);
        } else {
            log.info("group {}: sending {} to follower {}", g.state.groupId, snapshot, replicator.peerId);
        }
        return g.blocking("snapshot-send-open", () -> g.snapshotManager.io().openForRead(snapshot.data))
                .await(this::afterOpen);
    }

    private FrameCallResult afterOpen(LogFile f) {
        file = f;
        return readNext();
    }

    private FrameCallResult readNext() {
        if (!replicator.isAlive()) {
            return Fiber.frameReturn(Boolean.FALSE);
        }
        long at = offset;
        int want = (int) Math.min(g.config.snapshotChunkBytes(), snapshot.dataBytes - at);
        LogFile f = file;
        return g.blocking("snapshot-send-read", () -> {
            // A fresh array per chunk: a timed-out request may still be encoded from its array later.
            byte[] b = new byte[want];
            int n = f.readFully(ByteBuffer.wrap(b), at);
            if (n < want) {
                throw new java.io.EOFException(snapshot.data + " ended at " + (at + n));
            }
            return b;
        }).await(this::afterRead);
    }

    private FrameCallResult afterRead(byte[] data) {
        length = data.length;
        last = offset + length >= snapshot.dataBytes;
        RaftState s = g.state;
        InstallSnapshotRequest req = new InstallSnapshotRequest(s.groupId, replicator.term(), s.selfId,
                snapshot.meta.lastIndex(), snapshot.meta.lastTerm(), snapshot.meta.members(), offset,
                snapshot.dataBytes, data, length, last, MembersCodec.toBytes(MembershipManager.membersOf(snapshot.meta)),
                snapshot.meta.format());
        FiberFuture<InstallSnapshotResponse> answer = g.fiberGroup.newFuture("snapshot-chunk");
        sendNanos = g.nowNanos();
        leaseStamp = g.leaseReads.sendStamp(sendNanos);
        readRound = g.reads.currentRound();
        g.transport.send(replicator.peerId, RaftCommands.INSTALL_SNAPSHOT, req, InstallSnapshotResponse.DECODER,
                g.config.replicationTimeoutMillis(), new RpcCallback<InstallSnapshotResponse>() {
                    @Override
                    public void onSuccess(InstallSnapshotResponse body) {
                        answer.fireComplete(body);
                    }

                    @Override
                    public void onFailure(Throwable error) {
                        answer.fireCompleteExceptionally(error);
                    }
                });
        return answer.await(this::afterAnswer);
    }

    private FrameCallResult afterAnswer(InstallSnapshotResponse resp) {
        RaftState s = g.state;
        if (!replicator.isAlive()) {
            return Fiber.frameReturn(Boolean.FALSE);
        }
        if (resp.term > s.currentTerm) {
            log.info("group {}: follower {} is in term {}; stepping down", s.groupId, replicator.peerId, resp.term);
            g.roleManager.becomeFollower(resp.term, 0);
            g.statusSaver.persistInBackground();
            return Fiber.frameReturn(Boolean.FALSE);
        }
        if (resp.term == replicator.term()) {
            // it took this leader's term: proof of leadership at the send time (a failed follower
            // answers in its own, older term and proves nothing, as in Replicator)
            replicator.onSnapshotAck(sendNanos, leaseStamp, readRound);
        }
        if (!resp.success) {
            WarningThrottle refusals = replicator.snapshotRefusals;
            if (refusals.occurred(System.nanoTime())) {
                long skipped = refusals.notLoggedBefore();
                log.warn("group {}: follower {} refused the chunk at offset {} of {} ({}); the transfer restarts"
                        + " later{}", s.groupId, replicator.peerId, offset, snapshot, resp.reason.isEmpty()
                        ? "no reason given" : resp.reason,
                        skipped > 0 ? " (" + skipped + " more refusals since the last warning)" : "");
            }
            return Fiber.frameReturn(Boolean.FALSE);
        }
        offset += length;
        if (last) {
            replicator.lastSnapshotIndex = snapshot.meta.lastIndex();
            long refused = replicator.snapshotRefusals.endRun();
            long failed = replicator.snapshotSendFailures.endRun();
            log.info("group {}: follower {} installed {}{}{}", s.groupId, replicator.peerId, snapshot.meta,
                    refused > 0 ? " after " + refused + " refused transfers" : "",
                    failed > 0 ? (refused > 0 ? " and " : " after ") + failed + " failed sends" : "");
            return Fiber.frameReturn(Boolean.TRUE);
        }
        return readNext();
    }

    @Override
    protected FrameCallResult handle(Throwable ex) {
        WarningThrottle failures = replicator.snapshotSendFailures;
        if (failures.occurred(System.nanoTime())) {
            long skipped = failures.notLoggedBefore();
            log.info("group {}: sending {} to follower {} failed at offset {}: {}; it is sent again later{}",
                    g.state.groupId, snapshot, replicator.peerId, offset, ex.toString(),
                    skipped > 0 ? " (" + skipped + " more failed sends since the last such line)" : "");
        }
        return Fiber.frameReturn(Boolean.FALSE);
    }

    @Override
    protected FrameCallResult doFinally() {
        if (acquired) {
            acquired = false;
            g.snapshotManager.release(snapshot);
        }
        LogFile f = file;
        file = null;
        if (f != null) {
            g.blocking("snapshot-send-close", () -> {
                f.close();
                return null;
            });
        }
        return Fiber.frameReturn();
    }

    @Override
    public String toString() {
        return "SnapshotSender[" + snapshot.meta + " -> " + replicator.peerId + " at " + offset + "]";
    }
}
