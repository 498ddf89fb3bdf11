package io.poyang.benchmark;

/**
 * A scenario's cleanup, step by step in order, where a step that fails does not skip the ones
 * after it: a client whose stop throws must still let the servers stop and their data go (left
 * running, they kept their directories open while the leftovers were deleted under them, and in a
 * long-lived JVM such as the tests' they ran on). {@link #finish} then throws the first failure,
 * with the later ones suppressed in it.
 */
public final class CleanupSteps {

    /** One step of a cleanup. */
    public interface Step {
        void run() throws Exception;
    }

    private Exception firstFailure;

    /** Runs {@code step}; a failure is kept for {@link #finish}. */
    public void run(Step step) {
        try {
            step.run();
        } catch (Exception e) {
            if (firstFailure == null) {
                firstFailure = e;
            } else if (e != firstFailure) {
                firstFailure.addSuppressed(e);
            }
        }
    }

    /** Throws the first step's failure, if one failed, once every step has run. */
    public void finish() throws Exception {
        if (firstFailure != null) {
            throw firstFailure;
        }
    }
}
