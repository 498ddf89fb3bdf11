package io.poyang.common;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FuturesTest {

    @Test
    void theResultIsReturned() {
        assertEquals("v", Futures.await(CompletableFuture.completedFuture("v"), "a test"));
    }

    @Test
    void anUncheckedFailureIsThrownAsItIs() {
        StoppedException cause = new StoppedException("stopped");
        CompletableFuture<String> f = new CompletableFuture<>();
        f.completeExceptionally(cause);
        assertSame(cause, assertThrows(StoppedException.class, () -> Futures.await(f, "a test")));
        AssertionError error = new AssertionError("boom");
        CompletableFuture<String> g = new CompletableFuture<>();
        g.completeExceptionally(error);
        assertSame(error, assertThrows(AssertionError.class, () -> Futures.await(g, "a test")));
    }

    @Test
    void aCheckedFailureIsWrappedNamingWhatFailed() {
        IOException cause = new IOException("disk");
        CompletableFuture<String> f = new CompletableFuture<>();
        f.completeExceptionally(cause);
        PoyangException e = assertThrows(PoyangException.class, () -> Futures.await(f, "a test operation"));
        assertSame(cause, e.getCause());
        assertTrue(e.getMessage().startsWith("a test operation failed: java.io.IOException: disk"), e.getMessage());
    }

    @Test
    void anInterruptIsThrownAndKeptOnTheThread() {
        Thread.currentThread().interrupt();
        try {
            PoyangException e = assertThrows(PoyangException.class,
                    () -> Futures.await(new CompletableFuture<String>(), "a test operation"));
            assertTrue(e.getMessage().contains("interrupted while waiting for a test operation"), e.getMessage());
            assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept");
        } finally {
            Thread.interrupted();
        }
    }
}
