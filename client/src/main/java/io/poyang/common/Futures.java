package io.poyang.common;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/** Waiting for a future in the blocking forms of the clients. */
public final class Futures {

    private Futures() {
    }

    /**
     * The result of {@code f}, waiting for it. Its failure is thrown as it is when unchecked (the
     * typed exceptions of the clients), else wrapped in a {@link PoyangException} that names
     * {@code what} (e.g. "a DtKV operation"); an interrupt is kept on the thread and thrown as a
     * PoyangException.
     */
    public static <T> T await(CompletableFuture<T> f, String what) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PoyangException("interrupted while waiting for " + what, e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException) {
                throw (RuntimeException) c;
            }
            if (c instanceof Error) {
                throw (Error) c;
            }
            throw new PoyangException(what + " failed: " + c, c);
        }
    }
}
