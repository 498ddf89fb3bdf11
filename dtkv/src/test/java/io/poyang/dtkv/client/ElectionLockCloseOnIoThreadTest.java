package io.poyang.dtkv.client;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ElectionLock#close()} called on the client's I/O thread (a future callback with
 * {@code callbackOnIoThread}, or a listener that an inline executor runs there) must not wait for
 * the unlock's answer there: that thread is the one that delivers it, so close() stalled for the
 * client's whole timeout. It returns at once, and the lock is released all the same.
 */
class ElectionLockCloseOnIoThreadTest {

    private static final long TIMEOUT_MILLIS = 10_000;
    /** Far below the timeout the old close() waited out on the I/O thread. */
    private static final long PROMPT_MILLIS = 2_000;

    @Test
    @Timeout(60)
    void closeInAFutureCallbackOnTheIoThreadReturnsAtOnceAndReleasesTheLock() throws Exception {
        LockTestClients.withTwoClients(new KvClientConfig().callbackOnIoThread(true), TIMEOUT_MILLIS, (a, other) -> {
            CompletableFuture<Long> acquired = new CompletableFuture<>();
            ElectionLock election = a.electionLock("leader", 60_000, listener(acquired, null));
            election.start();
            acquired.get(10, TimeUnit.SECONDS);

            AtomicReference<String> thread = new AtomicReference<>();
            CompletableFuture<Long> closeTook = new CompletableFuture<>();
            // the callback form, not a future's whenComplete: a future already complete when the
            // stage is added runs it on the caller's thread
            Runnable closeHere = () -> {
                thread.set(Thread.currentThread().getName());
                long t0 = System.nanoTime();
                election.close();
                closeTook.complete(System.nanoTime() - t0);
            };
            a.put("k", "v".getBytes(StandardCharsets.UTF_8), new KvCallback<Long>() {
                @Override
                public void onSuccess(Long index) {
                    closeHere.run();
                }

                @Override
                public void onFailure(Throwable error) {
                    closeHere.run();
                }
            });
            assertClosedPromptly(closeTook, thread);
            assertFalse(election.isLeader());
            assertReleased(other);
        });
    }

    @Test
    @Timeout(60)
    void closeInAListenerRunInlineOnTheIoThreadReturnsAtOnceAndReleasesTheLock() throws Exception {
        // an executor that runs everything inline: the grant's answer and the listener run on the I/O thread
        LockTestClients.withTwoClients(new KvClientConfig().callbackExecutor(Runnable::run), TIMEOUT_MILLIS, (a, other) -> {
            AtomicReference<ElectionLock> self = new AtomicReference<>();
            AtomicReference<String> thread = new AtomicReference<>();
            CompletableFuture<Long> closeTook = new CompletableFuture<>();
            CompletableFuture<Long> acquired = new CompletableFuture<>();
            ElectionLock election = a.electionLock("leader", 60_000, listener(acquired, () -> {
                thread.set(Thread.currentThread().getName());
                long t0 = System.nanoTime();
                self.get().close();   // the application steps down as soon as it is elected
                closeTook.complete(System.nanoTime() - t0);
            }));
            self.set(election);
            election.start();
            assertClosedPromptly(closeTook, thread);
            assertFalse(election.isLeader());
            assertReleased(other);
        });
    }

    /** closeAsync() completes once the release is answered: the lock is free for another client then. */
    @Test
    @Timeout(60)
    void closeAsyncCompletesOnceTheLockIsReleased() throws Exception {
        LockTestClients.withTwoClients(new KvClientConfig(), TIMEOUT_MILLIS, (a, other) -> {
            CompletableFuture<Long> acquired = new CompletableFuture<>();
            ElectionLock election = a.electionLock("leader", 60_000, listener(acquired, null));
            election.start();
            acquired.get(10, TimeUnit.SECONDS);
            CompletableFuture<Void> closed = election.closeAsync();
            closed.get(10, TimeUnit.SECONDS);
            assertTrue(other.lock("leader").tryLock(60_000, 0), "closeAsync() completed before the release");
            assertSame(closed, election.closeAsync(), "a second close is the first one");
            other.lock("leader").unlock();
        });
    }

    private static void assertClosedPromptly(CompletableFuture<Long> closeTook, AtomicReference<String> thread)
            throws Exception {
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(closeTook.get(30, TimeUnit.SECONDS));
        assertTrue(thread.get().contains("-io-"), "close() was not called on an I/O thread but on " + thread.get());
        assertTrue(tookMillis < PROMPT_MILLIS, "close() on the I/O thread took " + tookMillis + " ms");
    }

    /** Another client can take the lock the closed election lock held. */
    private static void assertReleased(KvClient other) {
        Await.until("another client to take the released lock", () -> other.lock("leader").tryLock(60_000, 0));
        other.lock("leader").unlock();
    }

    private static ElectionLock.Listener listener(CompletableFuture<Long> acquired, Runnable onAcquired) {
        return new ElectionLock.Listener() {
            @Override
            public void onAcquired(long fencingToken) {
                if (onAcquired != null) {
                    onAcquired.run();
                }
                acquired.complete(fencingToken);
            }

            @Override
            public void onLost() {
            }
        };
    }
}
