package io.poyang.net;

import java.util.concurrent.CompletableFuture;

/**
 * Receives the outcome of a request: exactly one of the two methods is called, once. Errors are
 * {@link NetTimeoutException}, {@link NetConnectionException}, {@link RemoteException} or
 * {@link io.poyang.common.StoppedException}. Runs on the client's callback executor unless the
 * request asked for the I/O thread, where it must be quick and must never block.
 */
public interface RpcCallback<T> {

    void onSuccess(T body);

    void onFailure(Throwable error);

    /** A callback that completes {@code future} with the answer, or exceptionally with the failure. */
    static <T> RpcCallback<T> completing(CompletableFuture<T> future) {
        return new RpcCallback<T>() {
            @Override
            public void onSuccess(T body) {
                future.complete(body);
            }

            @Override
            public void onFailure(Throwable error) {
                future.completeExceptionally(error);
            }
        };
    }
}
