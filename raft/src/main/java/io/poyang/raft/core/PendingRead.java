package io.poyang.raft.core;

import io.poyang.net.ReqContext;

/**
 * A read queued for the {@link ReadIndexManager}: the caller's task, its kind and deadline. For a
 * follower asking this leader for a read index, {@link #remote} holds the request to answer with
 * the confirmed index instead of a task to run.
 */
final class PendingRead {
    final ReadTask task;
    final ReadKind kind;
    final long deadlineNanos;
    final ReqContext remote;

    PendingRead(ReadTask task, ReadKind kind, long deadlineNanos, ReqContext remote) {
        this.task = task;
        this.kind = kind;
        this.deadlineNanos = deadlineNanos;
        this.remote = remote;
    }

    boolean isExpired(long nowNanos) {
        return deadlineNanos != Long.MAX_VALUE && nowNanos - deadlineNanos >= 0;
    }
}
