package io.poyang.common;

import io.poyang.testutil.Await;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LifeCycleTest {

    static class Component extends LifeCycle {
        final AtomicInteger starts = new AtomicInteger();
        final AtomicInteger stops = new AtomicInteger();
        volatile Exception failStartWith;
        volatile CountDownLatch startEntered;
        volatile CountDownLatch startMayFinish;
        volatile boolean stopDuringStart;

        @Override
        protected void doStart() throws Exception {
            starts.incrementAndGet();
            if (startEntered != null) {
                startEntered.countDown();
                assertTrue(startMayFinish.await(10, TimeUnit.SECONDS));
            }
            if (stopDuringStart) {
                stop();
            }
            if (failStartWith != null) {
                throw failStartWith;
            }
        }

        @Override
        protected void doStop() {
            stops.incrementAndGet();
        }

        void checkRunningPublic() {
            checkRunning();
        }
    }

    @Test
    void startThenStopRunsEachOnceAndWalksTheStates() {
        Component c = new Component();
        assertEquals(LifeCycle.Status.NEW, c.status());
        assertFalse(c.isRunning());
        c.start();
        assertEquals(LifeCycle.Status.RUNNING, c.status());
        assertTrue(c.isRunning());
        c.checkRunningPublic();
        c.stop();
        assertEquals(LifeCycle.Status.STOPPED, c.status());
        assertEquals(1, c.starts.get());
        assertEquals(1, c.stops.get());
    }

    @Test
    void secondStartIsRefusedWithAnActionableMessage() {
        Component c = new Component();
        c.start();
        IllegalStateException e = assertThrows(IllegalStateException.class, c::start);
        assertTrue(e.getMessage().contains("RUNNING") && e.getMessage().contains("create a new one"), e.getMessage());
        c.stop();
        assertThrows(IllegalStateException.class, c::start);
        assertEquals(1, c.starts.get());
    }

    @Test
    void secondStopIsANoOp() {
        Component c = new Component();
        c.start();
        c.stop();
        c.stop();
        assertEquals(1, c.stops.get());
        assertEquals(LifeCycle.Status.STOPPED, c.status());
    }

    @Test
    void stopBeforeStartMarksStoppedWithoutCallingDoStop() {
        Component c = new Component();
        c.stop();
        assertEquals(LifeCycle.Status.STOPPED, c.status());
        assertEquals(0, c.stops.get());
        assertThrows(IllegalStateException.class, c::start);
        assertEquals(0, c.starts.get());
    }

    @Test
    void checkRunningThrowsStoppedExceptionWithCodeUnlessRunning() {
        Component c = new Component();
        StoppedException before = assertThrows(StoppedException.class, c::checkRunningPublic);
        assertEquals(ErrorCode.STOPPED, before.code());
        assertTrue(before.getMessage().contains("NEW") && before.getMessage().contains("start it first"),
                before.getMessage());
        c.start();
        c.stop();
        StoppedException after = assertThrows(StoppedException.class, c::checkRunningPublic);
        assertTrue(after.getMessage().contains("STOPPED"), after.getMessage());
    }

    @Test
    void failedStartWithRuntimeExceptionCleansUpAndRethrowsIt() {
        Component c = new Component();
        IllegalArgumentException boom = new IllegalArgumentException("bad config");
        c.failStartWith = boom;
        assertSame(boom, assertThrows(IllegalArgumentException.class, c::start));
        assertEquals(LifeCycle.Status.STOPPED, c.status());
        assertEquals(1, c.stops.get(), "doStop cleans up after a failed start");
        c.stop();
        assertEquals(1, c.stops.get());
    }

    @Test
    void failedStartWithCheckedExceptionIsWrappedWithTheCause() {
        Component c = new Component();
        IOException io = new IOException("port 9000 in use");
        c.failStartWith = io;
        PoyangException e = assertThrows(PoyangException.class, c::start);
        assertSame(io, e.getCause());
        assertTrue(e.getMessage().contains("failed to start") && e.getMessage().contains("port 9000 in use"),
                e.getMessage());
        assertEquals(LifeCycle.Status.STOPPED, c.status());
    }

    @Test
    void stopFromOwnDoStartIsRefused() {
        Component c = new Component();
        c.stopDuringStart = true;
        assertThrows(IllegalStateException.class, c::start);
        assertEquals(LifeCycle.Status.STOPPED, c.status());
    }

    @Test
    void stopDuringStartWaitsForTheStartAndThenStops() throws Exception {
        Component c = new Component();
        c.startEntered = new CountDownLatch(1);
        c.startMayFinish = new CountDownLatch(1);
        Thread starter = new Thread(c::start, "starter");
        starter.start();
        assertTrue(c.startEntered.await(10, TimeUnit.SECONDS));
        assertEquals(LifeCycle.Status.STARTING, c.status());
        AtomicReference<Throwable> stopError = new AtomicReference<>();
        Thread stopper = new Thread(() -> {
            try {
                c.stop();
            } catch (Throwable t) {
                stopError.set(t);
            }
        }, "stopper");
        stopper.start();
        // The stopper must be parked on the monitor, not running doStop beside doStart.
        Await.until("stopper to block", 10_000, () -> stopper.getState() == Thread.State.WAITING);
        assertEquals(0, c.stops.get());
        c.startMayFinish.countDown();
        Await.join(starter, 10_000);
        Await.join(stopper, 10_000);
        assertEquals(null, stopError.get());
        assertEquals(LifeCycle.Status.STOPPED, c.status(), "a stop during start must not leave it RUNNING");
        assertEquals(1, c.stops.get());
    }

    /** A component whose start gives up when told of a stop, as RaftServer's recovery does. */
    static final class CancellableStart extends Component {
        final AtomicInteger told = new AtomicInteger();

        @Override
        protected void stopRequestedWhileStarting() {
            told.incrementAndGet();
            failStartWith = new IOException("recovery abandoned (test)");
            startMayFinish.countDown();
        }
    }

    @Test
    void stopDuringStartTellsTheStartWhichEndsAndTheStopReturnsWithoutTheWholeStart() throws Exception {
        CancellableStart c = new CancellableStart();
        c.startEntered = new CountDownLatch(1);
        c.startMayFinish = new CountDownLatch(1);
        AtomicReference<Throwable> startError = new AtomicReference<>();
        Thread starter = new Thread(() -> {
            try {
                c.start();
            } catch (Throwable t) {
                startError.set(t);
            }
        }, "starter");
        starter.start();
        assertTrue(c.startEntered.await(10, TimeUnit.SECONDS));

        // without the hook, this stop would wait for startMayFinish, which nothing else counts down
        c.stop();
        assertEquals(LifeCycle.Status.STOPPED, c.status());
        assertEquals(1, c.told.get());
        Await.join(starter, 10_000);
        assertTrue(startError.get() instanceof StoppedException, String.valueOf(startError.get()));
        assertTrue(startError.get().getMessage().contains("stopped while it started")
                && startError.get().getCause() instanceof IOException, startError.get().getMessage());
        assertEquals(1, c.stops.get(), "what the start had started is stopped once");
        c.stop();
        assertEquals(1, c.told.get(), "a later stop does not tell the start again");
    }
}
