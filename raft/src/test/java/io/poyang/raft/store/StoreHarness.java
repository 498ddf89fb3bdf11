package io.poyang.raft.store;

import io.poyang.fiber.Dispatcher;
import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberGroup;
import io.poyang.fiber.FrameCallResult;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** A store in its own dispatcher and fiber group, driven from the test thread. */
final class StoreHarness implements AutoCloseable {

    static final long TIMEOUT_SECONDS = 30;

    final Path dir;
    final Dispatcher dispatcher;
    final FiberGroup group;
    final ExecutorService io;
    final LogStoreConfig config;
    final LogStore store;
    private boolean closed;

    StoreHarness(Path dir, Consumer<LogStoreConfig> tweak) {
        this(dir, 3, tweak);
    }

    StoreHarness(Path dir, int ioThreads, Consumer<LogStoreConfig> tweak) {
        this.dir = dir;
        dispatcher = new Dispatcher("store-test-dispatcher");
        dispatcher.start();
        group = new FiberGroup("store-test", dispatcher);
        join(dispatcher.startGroup(group));
        io = LogStoreConfig.newIoExecutor("store-test-io", ioThreads);
        config = new LogStoreConfig(dir, io).segmentBytes(64 * 1024).indexEntriesPerFile(256).indexFlushEntries(64);
        if (tweak != null) {
            tweak.accept(config);
        }
        store = new LogStore("test-log", group, config);
    }

    RecoveredState open() {
        return call(store::init);
    }

    /** Runs a frame in a new fiber of the group and waits for its result. */
    <T> T call(Supplier<FiberFrame<T>> frame) {
        return join(callAsync(frame));
    }

    <T> CompletableFuture<T> callAsync(Supplier<FiberFrame<T>> frame) {
        CompletableFuture<T> result = new CompletableFuture<>();
        group.fireFiber("test-call", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.call(frame.get(), this::done);
            }

            private FrameCallResult done(T value) {
                result.complete(value);
                return Fiber.frameReturn();
            }

            @Override
            protected FrameCallResult handle(Throwable ex) {
                result.completeExceptionally(ex);
                return Fiber.frameReturn();
            }
        });
        return result;
    }

    /** Runs {@code task} on the dispatcher thread and returns its result. */
    <T> T on(Callable<T> task) {
        CompletableFuture<T> result = new CompletableFuture<>();
        group.fireFiber("test-task", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                try {
                    result.complete(task.call());
                } catch (Throwable e) {
                    result.completeExceptionally(e);
                }
                return Fiber.frameReturn();
            }
        });
        return join(result);
    }

    /** Polls {@code condition} on the dispatcher thread until it holds, failing after the deadline. */
    void waitFor(String what, Callable<Boolean> condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (!on(condition)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(200_000);
        }
    }

    static void waitFor(String what, java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(200_000);
        }
    }

    void append(List<LogItem> items) {
        on(() -> {
            store.append(items);
            return null;
        });
    }

    /** Waits (on a fiber, through the persisted condition) until persisted reaches {@code index}. */
    void awaitPersisted(long index) {
        call(() -> new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return check(null);
            }

            private FrameCallResult check(Void v) {
                if (store.failure() != null) {
                    throw store.failure();
                }
                if (store.persistedIndex() >= index) {
                    return Fiber.frameReturn();
                }
                return store.persistedCondition().await(this::check);
            }
        });
    }

    long persisted() {
        return on(store::persistedIndex);
    }

    List<LogItem> load(long start, int maxItems, int maxBytes) {
        return call(() -> store.load(start, maxItems, maxBytes));
    }

    /** Reads every item from {@code from} to {@code to}. */
    List<LogItem> loadAll(long from, long to) {
        List<LogItem> all = new ArrayList<>();
        long next = from;
        while (next <= to) {
            List<LogItem> part = load(next, 1000, 1 << 20);
            if (part.isEmpty()) {
                throw new AssertionError("no items from index " + next);
            }
            all.addAll(part);
            next += part.size();
        }
        return all;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            try {
                call(store::close);
            } finally {
                shutdown();
            }
        }
    }

    /** Stops without closing the store (like a crash, minus the page cache loss). */
    void shutdown() {
        closed = true;
        group.requestShutdown();
        try {
            group.shutdownFuture().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (Exception e) {
            // a fiber may be left waiting on purpose; the dispatcher stop drops it
        }
        dispatcher.stop();
        // Not shutdownNow: interrupting a thread inside a FileChannel call closes the channel.
        io.shutdown();
        try {
            io.awaitTermination(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static <T> T join(CompletableFuture<T> f) {
        try {
            return f.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException) {
                throw (RuntimeException) c;
            }
            throw new RuntimeException(c);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    // ---------------------------------------------------------------- items

    /** Deterministic body bytes for an index (and a salt), of a length that varies with the index. */
    static byte[] bodyFor(long index, int salt, int baseLen) {
        int len = baseLen + (int) (index * 7 % 97);
        byte[] b = new byte[len];
        long x = index * 0x9E3779B97F4A7C15L + salt;
        for (int i = 0; i < len; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b[i] = (byte) x;
        }
        return b;
    }

    static LogItem item(long index, int term, int prevTerm, byte[] body) {
        byte[] header = ("h" + index).getBytes(StandardCharsets.US_ASCII);
        return new LogItem(LogItem.TYPE_NORMAL, 7, term, prevTerm, index, 1_700_000_000_000L + index,
                index % 3 == 0 ? null : new ByteBody(header), new ByteBody(body));
    }

    /** Items from {@code from} to {@code to} of one term, following an item of {@code prevTerm}. */
    static List<LogItem> items(long from, long to, int term, int prevTerm, int salt, int baseLen) {
        List<LogItem> list = new ArrayList<>();
        int prev = prevTerm;
        for (long i = from; i <= to; i++) {
            list.add(item(i, term, prev, bodyFor(i, salt, baseLen)));
            prev = term;
        }
        return list;
    }

    static byte[] bodyOf(LogItem it) {
        return ((ByteBody) it.getBody()).toByteArray();
    }
}
