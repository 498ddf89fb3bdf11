package io.poyang.fiber;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FiberFrameTest extends FiberTestSupport {

    /** A frame that calls {@code inner} (if any), records its steps, and optionally throws. */
    static final class Recorder extends FiberFrame<Integer> {
        final String name;
        final FiberFrame<Integer> inner;
        final List<String> log;
        final RuntimeException toThrow;
        final boolean handles;

        Recorder(String name, FiberFrame<Integer> inner, List<String> log, RuntimeException toThrow, boolean handles) {
            this.name = name;
            this.inner = inner;
            this.log = log;
            this.toThrow = toThrow;
            this.handles = handles;
        }

        @Override
        public FrameCallResult execute(Object input) {
            log.add(name + ".execute");
            if (toThrow != null) {
                throw toThrow;
            }
            if (inner == null) {
                return Fiber.frameReturn(1);
            }
            return Fiber.call(inner, this::afterInner);
        }

        private FrameCallResult afterInner(Integer v) {
            log.add(name + ".afterInner(" + v + ")");
            return Fiber.frameReturn(v + 1);
        }

        @Override
        protected FrameCallResult handle(Throwable ex) throws Throwable {
            log.add(name + ".handle(" + ex.getMessage() + ")");
            if (!handles) {
                throw ex;
            }
            setResult(-1);
            return Fiber.frameReturn();
        }

        @Override
        protected FrameCallResult doFinally() {
            log.add(name + ".finally");
            return Fiber.frameReturn();
        }
    }

    @Test
    void nestedCallsReturnResultsToTheirCallers() throws Exception {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        Recorder c = new Recorder("c", null, log, null, false);
        Recorder b = new Recorder("b", c, log, null, false);
        Recorder a = new Recorder("a", b, log, null, false);
        assertEquals(3, get(run("nested", a)));
        assertEquals(List.of("a.execute", "b.execute", "c.execute", "c.finally", "b.afterInner(1)", "b.finally",
                "a.afterInner(2)", "a.finally"), log);
    }

    @Test
    void errorGoesUpThroughThreeNestedFramesToTheFirstThatHandlesIt() throws Exception {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        Recorder c = new Recorder("c", null, log, new IllegalStateException("boom"), false);
        Recorder b = new Recorder("b", c, log, null, false);
        Recorder a = new Recorder("a", b, log, null, true);
        assertEquals(-1, get(run("errors", a)));
        assertEquals(List.of("a.execute", "b.execute", "c.execute",
                "c.handle(boom)", "c.finally",
                "b.handle(boom)", "b.finally",
                "a.handle(boom)", "a.finally"), log);
    }

    @Test
    void unhandledErrorReachesTheFiberAndFinallyRunsOncePerFrame() throws Exception {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        IllegalStateException boom = new IllegalStateException("boom");
        Recorder c = new Recorder("c", null, log, boom, false);
        Recorder b = new Recorder("b", c, log, null, false);
        Recorder a = new Recorder("a", b, log, null, false);
        assertSame(boom, failure(run("unhandled", a)));
        for (String frame : List.of("a", "b", "c")) {
            assertEquals(1, Collections.frequency(log, frame + ".finally"), frame + " finally count in " + log);
            assertEquals(1, Collections.frequency(log, frame + ".handle(boom)"), frame + " handle count in " + log);
        }
    }

    @Test
    void handleMaySuspendAndRecover() throws Exception {
        FiberFrame<String> frame = new FiberFrame<String>() {
            @Override
            public FrameCallResult execute(Object input) {
                throw new IllegalArgumentException("first try failed");
            }

            @Override
            protected FrameCallResult handle(Throwable ex) {
                return Fiber.sleep(1, v -> Fiber.frameReturn("recovered from " + ex.getMessage()));
            }
        };
        assertEquals("recovered from first try failed", get(run("recover", frame)));
    }

    @Test
    void errorInHandleGoesToTheCallerAfterFinally() throws Exception {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        FiberFrame<Void> inner = new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                throw new IllegalStateException("first");
            }

            @Override
            protected FrameCallResult handle(Throwable ex) {
                log.add("inner.handle(" + ex.getMessage() + ")");
                throw new IllegalStateException("second");
            }

            @Override
            protected FrameCallResult doFinally() {
                log.add("inner.finally");
                return Fiber.frameReturn();
            }
        };
        FiberFrame<String> outer = new FiberFrame<String>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.call(inner, v -> Fiber.frameReturn("no error?"));
            }

            @Override
            protected FrameCallResult handle(Throwable ex) {
                return Fiber.frameReturn("outer got " + ex.getMessage());
            }
        };
        assertEquals("outer got second", get(run("handle-throws", outer)));
        assertEquals(List.of("inner.handle(first)", "inner.finally"), log);
    }

    @Test
    void doFinallyMaySuspendAndRunsOnce() throws Exception {
        int[] finallyRuns = {0};
        FiberFrame<String> frame = new FiberFrame<String>() {
            @Override
            public FrameCallResult execute(Object input) {
                setResult("body");
                return Fiber.yield(v -> Fiber.frameReturn());
            }

            @Override
            protected FrameCallResult doFinally() {
                finallyRuns[0]++;
                return Fiber.sleep(2, v -> Fiber.frameReturn());
            }
        };
        assertEquals("body", get(run("finally-suspends", frame)));
        assertEquals(1, finallyRuns[0]);
    }

    @Test
    void errorInDoFinallyReplacesThePendingErrorAndKeepsItSuppressed() throws Exception {
        FiberFrame<Void> frame = new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                throw new IllegalStateException("body");
            }

            @Override
            protected FrameCallResult doFinally() {
                return Fiber.yield(v -> {
                    throw new IllegalStateException("finally");
                });
            }
        };
        Throwable e = failure(run("finally-throws", frame));
        assertEquals("finally", e.getMessage());
        assertEquals("body", e.getSuppressed()[0].getMessage());
    }

    @Test
    void doFinallyRunsOnceForEveryFrameWhenASleepingFiberIsInterrupted() throws Exception {
        int[] finallyRuns = new int[3];
        Throwable[] seen = new Throwable[1];
        FiberFrame<Void> level2 = new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.sleep(60_000, v -> Fiber.frameReturn());
            }

            @Override
            protected FrameCallResult doFinally() {
                finallyRuns[2]++;
                return Fiber.frameReturn();
            }
        };
        FiberFrame<Void> level1 = new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.call(level2, v -> Fiber.frameReturn());
            }

            @Override
            protected FrameCallResult doFinally() {
                finallyRuns[1]++;
                return Fiber.frameReturn();
            }
        };
        FiberFrame<Void> level0 = new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.call(level1, v -> Fiber.frameReturn());
            }

            @Override
            protected FrameCallResult handle(Throwable ex) {
                seen[0] = ex;
                return Fiber.frameReturn();
            }

            @Override
            protected FrameCallResult doFinally() {
                finallyRuns[0]++;
                return Fiber.frameReturn();
            }
        };
        Fiber sleeper = new Fiber("sleeper", group, level0);
        group.fireFiber(sleeper);
        waitUntil("the sleeper sleeps", () -> {
            try {
                return onDispatcher(group, () -> sleeper.state == Fiber.STATE_WAITING);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertTrue(onDispatcher(group, () -> {
            sleeper.interrupt();
            return true;
        }));
        waitUntil("the sleeper ends", () -> {
            try {
                return onDispatcher(group, sleeper::isFinished);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertTrue(seen[0] instanceof FiberInterruptedException, String.valueOf(seen[0]));
        assertEquals(1, finallyRuns[0]);
        assertEquals(1, finallyRuns[1]);
        assertEquals(1, finallyRuns[2]);
    }

    @Test
    void resumeContinuesAtOnceWithTheValue() throws Exception {
        FiberFrame<Integer> frame = new FiberFrame<Integer>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.resume(20, this::add);
            }

            private FrameCallResult add(Integer v) {
                return Fiber.frameReturn(v + 22);
            }
        };
        assertEquals(42, get(run("resume", frame)));
    }

    @Test
    void aFrameCanBeCalledAgainAfterItReturned() throws Exception {
        FiberFrame<Integer> reused = valueFrame(5);
        FiberFrame<Integer> frame = new FiberFrame<Integer>() {
            int sum;
            int calls;

            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.call(reused, this::add);
            }

            private FrameCallResult add(Integer v) {
                sum += v;
                if (++calls < 3) {
                    return Fiber.call(reused, this::add);
                }
                return Fiber.frameReturn(sum);
            }
        };
        assertEquals(15, get(run("reuse", frame)));
    }

    @Test
    void executeGetsNullAndAResultDefaultsToNull() throws Exception {
        Object[] input = {"not called"};
        FiberFrame<String> frame = new FiberFrame<String>() {
            @Override
            public FrameCallResult execute(Object in) {
                input[0] = in;
                return Fiber.frameReturn();
            }
        };
        assertNull(get(run("defaults", frame)));
        assertNull(input[0]);
    }

    @Test
    void aFrameOnAStackCannotBeCalledAgain() throws Exception {
        FiberFrame<Void> self = new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.call(this, v -> Fiber.frameReturn());
            }
        };
        CompletableFuture<Void> cf = run("self-call", self);
        Throwable e = failure(cf);
        assertTrue(e instanceof FiberException && e.getMessage().contains("already on the stack"), e.toString());
    }

    @Test
    void aBadArgumentToASuspendingCallIsAnOrdinaryErrorNotAMisuse() throws Exception {
        FiberFrame<String> frame = new FiberFrame<String>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.sleep(5, null);
            }

            @Override
            protected FrameCallResult handle(Throwable ex) {
                return Fiber.frameReturn(ex.getClass().getSimpleName() + ": " + ex.getMessage());
            }
        };
        assertEquals("IllegalArgumentException: sleep needs a resume point (this::nextStep)", get(run("bad-arg", frame)));
        assertEquals(false, group.shutdownFuture().isDone(), "the group still runs");
    }
}
