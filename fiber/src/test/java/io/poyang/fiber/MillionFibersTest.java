package io.poyang.fiber;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A million fibers in one group: all alive at once (each parked on a condition), then all
 * finished. Reports the heap each live fiber costs and what is left once they are done.
 */
class MillionFibersTest extends FiberTestSupport {

    private static final int FIBERS = 1_000_000;
    private static final int PER_STEP = 10_000;

    /** The smallest useful fiber body: wait once, then return. */
    static final class ChildFrame extends FiberFrame<Void> {
        private final FiberCondition gate;
        private final int[] finished;

        ChildFrame(FiberCondition gate, int[] finished) {
            this.gate = gate;
            this.finished = finished;
        }

        @Override
        public FrameCallResult execute(Object input) {
            return gate.await(this::done);
        }

        private FrameCallResult done(Void v) {
            finished[0]++;
            return Fiber.frameReturn();
        }
    }

    @Test
    void aMillionFibersLiveAndFinishInOneGroupWithoutTheHeapKeepingThem() throws Exception {
        FiberCondition gate = group.newCondition("gate");
        int[] finished = {0};
        long baseline = usedHeapAfterGc();
        long start = System.nanoTime();
        get(run("spawner", new FiberFrame<Void>() {
            int started;

            @Override
            public FrameCallResult execute(Object input) {
                for (int i = 0; i < PER_STEP; i++) {
                    new Fiber("child", getGroup(), new ChildFrame(gate, finished)).start();
                }
                started += PER_STEP;
                return started == FIBERS ? Fiber.frameReturn() : Fiber.yield(this::execute);
            }
        }));
        waitUntil("all children wait", () -> waiters(gate) == FIBERS);
        long alive = usedHeapAfterGc();
        gate.fireSignalAll();
        waitUntil("all children finish", () -> finishedCount(finished) == FIBERS);
        long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
        long after = usedHeapAfterGc();

        long bytesPerLiveFiber = (alive - baseline) / FIBERS;
        long retained = after - baseline;
        System.out.printf("million fibers: %d bytes per live waiting fiber (fiber + frame + wait node + resume point),"
                        + " %d KB retained after all finished, %d ms to start, park, wake and finish them%n",
                bytesPerLiveFiber, retained / 1024, elapsedMillis);
        assertEquals(0, (int) onDispatcher(group, () -> group.normalFiberCount()));
        assertTrue(bytesPerLiveFiber < 400, bytesPerLiveFiber + " bytes per live fiber");
        assertTrue(retained < 8 * 1024 * 1024, retained + " bytes still used after the fibers finished");
    }

    private int waiters(FiberCondition gate) {
        try {
            return onDispatcher(group, gate::waiterCount);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private int finishedCount(int[] finished) {
        try {
            return onDispatcher(group, () -> finished[0]);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static long usedHeapAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        // Several collections (System.gc is synchronous unless the JVM is told otherwise): the
        // lowest figure is the one with everything collectable collected.
        for (int i = 0; i < 4; i++) {
            System.gc();
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
