package io.poyang.raft.core;

import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberGroup;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.raft.store.LogStore;

/**
 * Makes the current term and vote durable (the store's status file: write, fsync, rename,
 * directory fsync) before anything that depends on them leaves this node: a vote, a vote request,
 * an answer to a leader of a new term. Raft state changes in memory first; whoever is about to
 * answer calls {@link #persist()} and answers when it returns. Concurrent saves coalesce in the
 * store. Dispatcher thread.
 */
final class StatusSaver {

    private static final PoyangLog log = PoyangLogs.get(StatusSaver.class);

    private final RaftState state;
    private final LogStore store;
    private final FiberGroup fiberGroup;
    /** The term and vote known to be durable. */
    private int savedTerm;
    private int savedVotedFor;
    private boolean backgroundRunning;

    StatusSaver(RaftState state, LogStore store, FiberGroup fiberGroup) {
        this.state = state;
        this.store = store;
        this.fiberGroup = fiberGroup;
    }

    /** After recovery: what the status file holds. */
    void markSaved(int term, int votedFor) {
        savedTerm = term;
        savedVotedFor = votedFor;
    }

    /** True when the current term and vote are durable. */
    boolean isSaved() {
        return savedTerm == state.currentTerm && savedVotedFor == state.votedFor;
    }

    /** A frame that returns once the current term and vote (as they are when it returns) are durable. */
    FiberFrame<Void> persist() {
        return new PersistFrame();
    }

    /** Starts a save without waiting for it (a leader that learned of a higher term from a response). */
    void persistInBackground() {
        if (isSaved() || backgroundRunning) {
            return;
        }
        backgroundRunning = true;
        new Fiber("status-save-" + state.groupId, fiberGroup, new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.call(new PersistFrame(), this::done);
            }

            private FrameCallResult done(Void v) {
                backgroundRunning = false;
                return Fiber.frameReturn();
            }

            @Override
            protected FrameCallResult handle(Throwable ex) {
                backgroundRunning = false;
                log.error("group {}: saving term {} failed", state.groupId, state.currentTerm, ex);
                return Fiber.frameReturn();
            }
        }).start();
    }

    private final class PersistFrame extends FiberFrame<Void> {
        private int term;
        private int votedFor;

        @Override
        public FrameCallResult execute(Object input) {
            return check(null);
        }

        private FrameCallResult check(Void v) {
            if (isSaved()) {
                return Fiber.frameReturn();
            }
            term = state.currentTerm;
            votedFor = state.votedFor;
            long commit = Math.min(state.commitIndex, store.persistedIndex());
            return Fiber.call(store.saveStatus(term, votedFor, commit), this::afterSave);
        }

        private FrameCallResult afterSave(Void v) {
            // Terms only grow and a vote is cast once per term, so if the state still holds what
            // this save wrote, the file holds it too (a later save could only write the same).
            if (state.currentTerm == term && state.votedFor == votedFor) {
                savedTerm = term;
                savedVotedFor = votedFor;
            }
            return check(null);
        }
    }
}
