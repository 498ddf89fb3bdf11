package io.poyang.fiber;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MisuseTest extends FiberTestSupport {

    /** Calls {@link InnerFrame}, so misuse messages must list two frames. */
    static final class OuterFrame extends FiberFrame<Void> {
        final FiberFrame<Void> inner;

        OuterFrame(FiberFrame<Void> inner) {
            this.inner = inner;
        }

        @Override
        public FrameCallResult execute(Object input) {
            return Fiber.call(inner, v -> Fiber.frameReturn());
        }
    }

    /** Runs the misbehaving step given to it. */
    static final class InnerFrame extends FiberFrame<Void> {
        final Function<InnerFrame, FrameCallResult> body;

        InnerFrame(Function<InnerFrame, FrameCallResult> body) {
            this.body = body;
        }

        @Override
        public FrameCallResult execute(Object input) {
            return body.apply(this);
        }

        FrameCallResult done(Object ignored) {
            return Fiber.frameReturn();
        }
    }

    /** Runs the misbehaving step in fiber "culprit" and returns the message the group was stopped with. */
    private String stopMessageOf(Function<InnerFrame, FrameCallResult> body) throws Exception {
        group.fireFiber("culprit", new OuterFrame(new InnerFrame(body)));
        Throwable e = failure(group.shutdownFuture());
        assertTrue(e instanceof FiberException, e.toString());
        String message = e.getMessage();
        assertTrue(message.contains("fiber 'culprit'"), message);
        assertTrue(message.contains("MisuseTest$InnerFrame <- MisuseTest$OuterFrame"), "frames listed: " + message);
        return message;
    }

    @Test
    void twoSuspendingCallsInOneStepStopTheGroup() throws Exception {
        String message = stopMessageOf(f -> {
            Fiber.yield(f::done);
            return Fiber.sleep(10, f::done);
        });
        assertTrue(message.contains("two suspending calls in one step (yield, then sleep)"), message);
    }

    @Test
    void aSuspendingCallFollowedByFrameReturnStopsTheGroup() throws Exception {
        FiberFuture<String> future = group.newFuture("f");
        String message = stopMessageOf(f -> {
            future.await(f::done);
            return Fiber.frameReturn();
        });
        assertTrue(message.contains("(await, then frameReturn)"), message);
    }

    @Test
    void returningATokenWithoutACallStopsTheGroup() throws Exception {
        String message = stopMessageOf(f -> FrameCallResult.SUSPEND);
        assertTrue(message.contains("made no suspending call"), message);
    }

    @Test
    void returningNullStopsTheGroup() throws Exception {
        String message = stopMessageOf(f -> null);
        assertTrue(message.contains("returned null"), message);
    }

    @Test
    void throwingAfterASuspendingCallStopsTheGroup() throws Exception {
        String message = stopMessageOf(f -> {
            Fiber.yield(f::done);
            throw new IllegalStateException("oops");
        });
        assertTrue(message.contains("after a suspending call (yield)"), message);
    }

    @Test
    void completingAFutureFromAnotherThreadThrowsAndStopsTheGroup() throws Exception {
        assertWrongThreadStops("FiberFuture.complete", () -> group.newFuture("f").complete("x"));
    }

    @Test
    void offeringToAChannelFromAnotherThreadThrowsAndStopsTheGroup() throws Exception {
        assertWrongThreadStops("FiberChannel.offer", () -> group.newChannel().offer("x"));
    }

    @Test
    void signallingAConditionFromAnotherThreadThrowsAndStopsTheGroup() throws Exception {
        assertWrongThreadStops("FiberCondition.signal", () -> group.newCondition("c").signal());
    }

    @Test
    void startingAFiberFromAnotherThreadThrowsAndStopsTheGroup() throws Exception {
        assertWrongThreadStops("Fiber.start", () -> new Fiber("f", group, valueFrame(1)).start());
    }

    private void assertWrongThreadStops(String op, Runnable misuse) throws Exception {
        // A fiber is parked in the group, so the stop message has frames to list.
        FiberFuture<Void> never = group.newFuture("never");
        group.fireFiber("culprit", new OuterFrame(new InnerFrame(f -> never.await(f::done))));
        waitUntil("the fiber waits", () -> {
            try {
                FiberGroupSnapshot.FiberInfo info = get(group.snapshot()).fiber("culprit");
                return info != null && "waiting".equals(info.state());
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        FiberException thrown = assertThrows(FiberException.class, misuse::run);
        assertTrue(thrown.getMessage().contains(op) && thrown.getMessage().contains("thread '"
                + Thread.currentThread().getName() + "'"), thrown.getMessage());
        Throwable e = failure(group.shutdownFuture());
        assertTrue(e.getMessage().contains(op), e.getMessage());
        assertTrue(e.getMessage().contains("fiber 'culprit' waiting on future 'never': "
                + "MisuseTest$InnerFrame <- MisuseTest$OuterFrame"), e.getMessage());
    }

    @Test
    void suspendingCallsOutsideAFiberStepAreRefused() throws Exception {
        FiberException offThread = assertThrows(FiberException.class, () -> Fiber.sleep(1, v -> Fiber.frameReturn()));
        assertTrue(offThread.getMessage().contains("not a fiber dispatcher"), offThread.getMessage());
        String inCallback = onDispatcher(group, () -> {
            try {
                Fiber.yield(v -> Fiber.frameReturn());
                return "accepted";
            } catch (FiberException e) {
                return e.getMessage();
            }
        });
        assertTrue(inCallback.contains("outside a fiber step"), inCallback);
    }

    @Test
    void aStoppedGroupDoesNotDisturbTheOtherGroupsOfItsDispatcher() throws Exception {
        FiberGroup healthy = new FiberGroup("healthy", dispatcher);
        get(dispatcher.startGroup(healthy));
        stopMessageOf(f -> FrameCallResult.RETURN);
        CompletableFuture<Integer> r = run(healthy, "still-fine", new FiberFrame<Integer>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.sleep(1, v -> Fiber.frameReturn(42));
            }
        });
        assertEquals(42, get(r));
    }
}
