package io.poyang.raft.client;

/**
 * What the callback of {@link RaftClient#callLeaderExactlyOnce} may also implement to learn, as it
 * happens, that an attempt ended without its outcome — no answer within the attempt limit, its
 * connection lost, its node stepped down or failed with it in its log — and is being sent again.
 * That copy may still be applied, so a caller that later sends the request once more itself (under
 * the same sequence, after an answer that refused only that copy) must not report "not applied"
 * afterwards. Called on the I/O or timer thread before the resend; it must be quick and not block.
 */
public interface UnansweredAttemptListener {

    /** The attempt sent to node {@code nodeId} ended without an outcome because of {@code why}. */
    void onUnansweredAttempt(int nodeId, Throwable why);
}
