package io.poyang.fiber;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** {@link Dispatcher#runAtRoundEnd}: tasks deferred by the fibers of a round run once, after all of them. */
class RoundEndTaskTest extends FiberTestSupport {

    @Test
    void tasksDeferredByTheFibersOfARoundRunAfterAllOfThemInOrder() throws Exception {
        List<String> events = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Void> done = new CompletableFuture<>();
        // three fibers made ready in the same round: each records its step and defers a task; the
        // last deferred task defers one more, which runs in the same end of round
        onDispatcher(group, () -> {
            for (int i = 1; i <= 3; i++) {
                int n = i;
                group.fireFiber("f" + n, new FiberFrame<Void>() {
                    @Override
                    public FrameCallResult execute(Object input) {
                        events.add("fiber " + n);
                        Dispatcher.runAtRoundEnd(() -> {
                            events.add("task " + n);
                            if (n == 3) {
                                Dispatcher.runAtRoundEnd(() -> {
                                    events.add("task of task 3");
                                    done.complete(null);
                                });
                            }
                        });
                        return Fiber.frameReturn();
                    }
                });
            }
            return null;
        });
        get(done);
        assertEquals(List.of("fiber 1", "fiber 2", "fiber 3", "task 1", "task 2", "task 3", "task of task 3"), events);
    }

    @Test
    void aTaskThatThrowsDoesNotKeepTheOthersFromRunning() throws Exception {
        List<String> events = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Void> done = new CompletableFuture<>();
        onDispatcher(group, () -> {
            Dispatcher.runAtRoundEnd(() -> {
                throw new IllegalStateException("a failing round-end task (expected in this test)");
            });
            Dispatcher.runAtRoundEnd(() -> {
                events.add("second");
                done.complete(null);
            });
            return null;
        });
        get(done);
        assertEquals(List.of("second"), events);
    }

    @Test
    void offADispatcherThreadNothingIsDeferred() {
        assertFalse(Dispatcher.runAtRoundEnd(() -> {
            throw new AssertionError("ran off a dispatcher");
        }));
    }
}
