package io.poyang.fiber;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SnapshotTest extends FiberTestSupport {

    /** A named frame that calls a waiting frame, so the snapshot shows two frames. */
    static final class ReplicatorFrame extends FiberFrame<Void> {
        final FiberFrame<Void> inner;

        ReplicatorFrame(FiberFrame<Void> inner) {
            this.inner = inner;
        }

        @Override
        public FrameCallResult execute(Object input) {
            return Fiber.call(inner, v -> Fiber.frameReturn());
        }

        @Override
        public String toString() {
            return "ReplicatorFrame[peer=2]";
        }
    }

    static final class WaitFrame extends FiberFrame<Void> {
        final SleepYieldJoinTest.Waiter waiter;

        WaitFrame(SleepYieldJoinTest.Waiter waiter) {
            this.waiter = waiter;
        }

        @Override
        public FrameCallResult execute(Object input) throws Throwable {
            return waiter.startWait(v -> Fiber.frameReturn());
        }
    }

    @Test
    void aSnapshotListsEveryFiberWhatItWaitsOnAndItsFrames() throws Exception {
        FiberFuture<Long> append = group.newFuture("append");
        FiberCondition a = group.newCondition("newEntries");
        FiberCondition b = group.newCondition("roleChanged");
        FiberChannel<String> requests = group.newChannel("requests");
        onDispatcher(group, () -> {
            new Fiber("replicator", group, new ReplicatorFrame(new WaitFrame(r -> append.await(5_000, v -> r.execute(null)))))
                    .start();
            new Fiber("heartbeat", group, new WaitFrame(r -> Fiber.sleep(60_000, r)), true).start();
            new Fiber("apply", group, new WaitFrame(r -> a.await(b, r))).start();
            new Fiber("leader", group, new WaitFrame(r -> requests.takeAll(new ArrayList<>(), r))).start();
            return null;
        });
        waitUntil("all wait", () -> {
            try {
                return get(group.snapshot()).fibers().stream().allMatch(f -> "waiting".equals(f.state()));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        FiberGroupSnapshot s = get(group.snapshot());
        assertEquals(3, s.normalFibers());
        assertEquals(1, s.daemonFibers());
        FiberGroupSnapshot.FiberInfo replicator = s.fiber("replicator");
        assertEquals("future 'append' (timeout 5000 ms)", replicator.waitingOn());
        assertEquals(List.of("SnapshotTest$WaitFrame", "ReplicatorFrame[peer=2]"), replicator.frames());
        assertTrue(s.fiber("heartbeat").daemon());
        assertEquals("sleep (timeout 60000 ms)", s.fiber("heartbeat").waitingOn());
        assertEquals("condition 'newEntries' or condition 'roleChanged'", s.fiber("apply").waitingOn());
        assertEquals("channel 'requests'", s.fiber("leader").waitingOn());

        // The text form is what a person debugging a stuck group reads; it is printable from any thread.
        String text = group.dumpState(5_000);
        assertTrue(text.contains("fiber 'replicator' waiting on future 'append' (timeout 5000 ms) for "), text);
        assertTrue(text.contains("SnapshotTest$WaitFrame <- ReplicatorFrame[peer=2]"), text);
        assertTrue(text.contains("fiber 'heartbeat' (daemon) waiting on sleep"), text);
    }

    @Test
    void aReadyFiberHasNothingItWaitsOn() throws Exception {
        FiberGroupSnapshot s = onDispatcher(group, () -> {
            new Fiber("ready", group, valueFrame(1)).start();
            return group.takeSnapshot();
        });
        assertEquals("ready", s.fiber("ready").state());
        assertNull(s.fiber("ready").waitingOn());
    }

    @Test
    void dumpStateShowsTheDispatcherStackWhenAStepBlocksTheThread() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch blocking = new CountDownLatch(1);
        group.fireFiber("bad-citizen", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) throws InterruptedException {
                blocking.countDown();
                // Breaking the rules on purpose: blocking the dispatcher thread.
                release.await(WAIT_SECONDS, TimeUnit.SECONDS);
                return Fiber.frameReturn();
            }
        });
        assertTrue(blocking.await(WAIT_SECONDS, TimeUnit.SECONDS));
        String text = group.dumpState(50);
        release.countDown();
        assertTrue(text.contains("did not answer within 50 ms"), text);
        assertTrue(text.contains("CountDownLatch.await"), text);
    }
}
