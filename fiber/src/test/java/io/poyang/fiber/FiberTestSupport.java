package io.poyang.fiber;

import io.poyang.common.TimeSource;
import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/** A started dispatcher and group per test, helpers to run frames and wait with deadlines. */
abstract class FiberTestSupport {

    static final long WAIT_SECONDS = 10;

    protected Dispatcher dispatcher;
    protected FiberGroup group;
    private final List<Dispatcher> extraDispatchers = new ArrayList<>();

    @BeforeEach
    void startDispatcher() throws Exception {
        ImpossibleStates.reset();
        // A short stop timeout: tests that leave fibers blocked forever should not slow the suite.
        dispatcher = new Dispatcher("test-dispatcher", TimeSource.SYSTEM, Dispatcher.DEFAULT_MAX_STEPS_PER_GROUP_ROUND,
                Dispatcher.DEFAULT_MAX_STEPS_PER_FIBER_RUN, 200);
        dispatcher.start();
        group = new FiberGroup("test-group", dispatcher);
        dispatcher.startGroup(group).get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @AfterEach
    void stopDispatcher() {
        dispatcher.stop();
        for (Dispatcher d : extraDispatchers) {
            d.stop();
        }
        assertEquals(0, ImpossibleStates.count(), "impossible states were reported");
    }

    Dispatcher newDispatcher(String name) {
        Dispatcher d = new Dispatcher(name);
        d.start();
        extraDispatchers.add(d);
        return d;
    }

    /** Runs {@code frame} in a new normal fiber of {@code g}; the future gets its result or error. */
    static <T> CompletableFuture<T> run(FiberGroup g, String fiberName, FiberFrame<T> frame) {
        CompletableFuture<T> cf = new CompletableFuture<>();
        g.fireFiber(fiberName, new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.call(frame, this::done);
            }

            private FrameCallResult done(T value) {
                cf.complete(value);
                return Fiber.frameReturn();
            }

            @Override
            protected FrameCallResult handle(Throwable ex) {
                cf.completeExceptionally(ex);
                return Fiber.frameReturn();
            }
        });
        return cf;
    }

    <T> CompletableFuture<T> run(String fiberName, FiberFrame<T> frame) {
        return run(group, fiberName, frame);
    }

    static <T> T get(CompletableFuture<T> cf) throws Exception {
        return cf.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    /** The error a future failed with. */
    static Throwable failure(CompletableFuture<?> cf) throws Exception {
        try {
            cf.get(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        fail("expected the future to fail");
        return null;
    }

    /** Runs {@code action} on the group's dispatcher thread and returns its value. */
    static <T> T onDispatcher(FiberGroup g, Supplier<T> action) throws Exception {
        CompletableFuture<T> cf = new CompletableFuture<>();
        g.getDispatcher().post(() -> {
            try {
                cf.complete(action.get());
            } catch (Throwable t) {
                cf.completeExceptionally(t);
            }
        });
        return get(cf);
    }

    static void waitUntil(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out waiting until " + what);
            }
            Thread.sleep(1);   // poll interval of a deadline-bound wait, not a synchronisation
        }
    }

    /** A frame that returns a fixed value through a resume step. */
    static FiberFrame<Integer> valueFrame(int value) {
        return new FiberFrame<Integer>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.frameReturn(value);
            }
        };
    }
}
