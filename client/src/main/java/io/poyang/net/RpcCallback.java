package io.poyang.net;

/**
 * Receives the outcome of a request: exactly one of the two methods is called, once. Errors are
 * {@link NetTimeoutException}, {@link NetConnectionException}, {@link RemoteException} or
 * {@link io.poyang.common.StoppedException}. Runs on the client's callback executor unless the
 * request asked for the I/O thread, where it must be quick and must never block.
 */
public interface RpcCallback<T> {

    void onSuccess(T body);

    void onFailure(Throwable error);
}
