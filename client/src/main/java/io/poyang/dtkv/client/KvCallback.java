package io.poyang.dtkv.client;

/**
 * The outcome of an asynchronous KvClient operation, reported exactly once: the result, or the
 * error ({@link io.poyang.dtkv.KvException} with its code, or a raft/net exception such as
 * {@link io.poyang.raft.client.RaftOutcomeUnknownException}). Runs on the client's callback
 * executor unless the client was configured to call back on its I/O thread.
 */
public interface KvCallback<T> {

    void onSuccess(T result);

    void onFailure(Throwable error);
}
