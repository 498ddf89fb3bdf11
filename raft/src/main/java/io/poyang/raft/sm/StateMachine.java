package io.poyang.raft.sm;

import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.core.RaftGroup;

import java.io.IOException;
import java.io.InputStream;

/**
 * The application a raft group replicates. Raft feeds it committed entries in index order, asks it
 * for snapshots and hands it snapshots to install; everything it is given is already durable on a
 * majority of the group.
 *
 * <h2>Threads</h2>
 * {@link #apply}, {@link #takeSnapshot} and {@link #installSnapshot} run on the group's dispatcher
 * thread, which also runs the group's raft logic and other groups: they must not block (no I/O, no
 * locks held long, no waiting). {@link #readSnapshot} runs on an I/O thread and may block.
 * {@link #newBodyDecoder} is called on network I/O threads and on the dispatcher.
 *
 * <h2>Bodies</h2>
 * An entry's body is the command in the state machine's own encoding (usually a protobuf message).
 * On the leader a client's request body is decoded once, on the network thread, with
 * {@link #newBodyDecoder}; the decoded object goes into the log as it is (it is an
 * {@link Encodable}, written straight into the log and replication buffers) and reaches
 * {@link #apply} without being decoded again. Entries received from the leader or read back from
 * disk are decoded with the same decoder just before they are applied. A state machine that
 * wants raw bytes returns null from {@link #newBodyDecoder}: bodies then arrive as
 * {@link io.poyang.raft.store.ByteBody}.
 */
public interface StateMachine {

    /**
     * A fresh decoder for bodies of {@code bizType}, or null to keep bodies as raw bytes
     * ({@link io.poyang.raft.store.ByteBody}). The decoded value must write exactly the bytes it was
     * decoded from when encoded, because on the leader it is what goes into the log.
     */
    PbCallback<? extends Encodable> newBodyDecoder(int bizType);

    /**
     * Applies committed entries, in index order. Raft's own entries (a new leader's no-op,
     * membership changes) are left out, so indexes can skip, unless {@link #appliesRaftEntries()}. Sets each entry's result (sent back to the client that wrote it; null
     * for none) or business error with {@link ApplyBatch#setResult} / {@link ApplyBatch#setError}.
     * Dispatcher thread; must not block. An exception stops the group (the state machine can no
     * longer be trusted to match the others).
     */
    void apply(ApplyBatch batch);

    /**
     * Captures the state as of {@code meta.lastIndex()} (everything up to it applied, nothing
     * after) and returns the writer that streams it out. Called on the dispatcher thread between
     * two {@link #apply} calls; the writer then runs on an I/O thread while applying goes on, so it
     * must read a consistent picture (a copy, a copy-on-write view, versioned data), not the live
     * state.
     */
    SnapshotWriter takeSnapshot(SnapshotMeta meta);

    /**
     * Reads a snapshot into a new state object, on an I/O thread (blocking is fine). It must not
     * touch the live state: {@link #installSnapshot} swaps the result in afterwards. The stream
     * ends where the snapshot ends; its CRCs are checked as it is read. When the group is stopped
     * while it loads its snapshot at the start, the stream's next read of the file throws an
     * {@link IOException} (let it go out: the result is dropped, never installed).
     */
    Object readSnapshot(SnapshotMeta meta, InputStream data) throws IOException;

    /**
     * Replaces the live state with {@code state}, a value {@link #readSnapshot} returned. Dispatcher
     * thread, between applies; the next entry applied is {@code meta.lastIndex() + 1}.
     */
    void installSnapshot(SnapshotMeta meta, Object state);

    /**
     * Whether {@link #apply} also gets raft's own entries (a new leader's no-op, membership
     * changes) as entries with a null body, in their place in the index order; their results and
     * errors are ignored. A state machine that keeps a clock from entry timestamps, or acts when
     * the term changes, needs them: a new term then starts at its first entry (the new leader's
     * no-op, stamped with that leader's clock), not at whatever entry of its own comes next, and
     * the last index and term it applied are those of raft's snapshot metadata. Asked once, when
     * the group starts. Default: false.
     */
    default boolean appliesRaftEntries() {
        return false;
    }

    /**
     * The group this state machine belongs to is starting: called once, on the dispatcher thread,
     * before the group loads its snapshot or applies anything. A state machine that serves more
     * than {@link #apply} (timers that propose entries, fibers of its own, pushes to clients) keeps
     * {@code group} here: {@link RaftGroup#fiberGroup()} runs its fibers on the group's dispatcher
     * (so they see the state between applies, without locks), {@link RaftGroup#submit} proposes
     * entries. Default: nothing.
     */
    default void onStart(RaftGroup group) {
    }

    /**
     * This node's role in the group changed (or the leader it follows did): called on the dispatcher
     * thread as the change happens. When a node becomes leader it is called before the node applies
     * any entry of its term (its no-op included), so a state machine can prepare leader-only work
     * (expiry timers, say) against the state it had as a follower; {@code role} is then
     * {@link RaftRole#LEADER} and {@code leaderId} this node. When the group stops on this node (the
     * node stops, or the group is restarted or removed on a running node) it is called a last time
     * with {@link RaftRole#NONE} and {@code leaderId} 0, whatever the role was: a leader's work ends
     * there as at any loss of leadership (the node's client connections may still be open, as
     * after a restart of the group alone). Must be quick and must not block; an exception is
     * logged and ignored. Default: nothing.
     */
    default void onRoleChange(RaftRole role, int term, int leaderId) {
    }
}
