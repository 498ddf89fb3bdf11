package io.poyang.server;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * SIGTERM and SIGINT for the node process: the first asks for a graceful stop, the second forces
 * it. The JVM's own handling (run the shutdown hooks, exit) cannot tell the two apart, so the node
 * takes the signals itself through {@code sun.misc.Signal} (module jdk.unsupported, present in every
 * JDK from 8 to 25). Where that is missing the node falls back to a shutdown hook: a graceful stop
 * on the first signal, no forcing on a second.
 */
final class StopSignals {

    /** What the signals do. */
    interface Listener {
        /** The first signal (name: "TERM" or "INT"); called on a signal thread, must return quickly. */
        void onStopRequested(String signal);

        /** Any later signal. */
        void onForceRequested(String signal);
    }

    private static final String[] SIGNALS = {"TERM", "INT"};

    private final AtomicInteger received = new AtomicInteger();
    /** The handlers install replaced, in the order of SIGNALS; null when not installed. */
    private sun.misc.SignalHandler[] previous;

    /** Installs the handlers; false when this JVM does not let the process take the signals. */
    boolean install(Listener listener) {
        sun.misc.SignalHandler[] replaced = new sun.misc.SignalHandler[SIGNALS.length];
        try {
            for (int i = 0; i < SIGNALS.length; i++) {
                replaced[i] = sun.misc.Signal.handle(new sun.misc.Signal(SIGNALS[i]), sig -> {
                    if (received.getAndIncrement() == 0) {
                        listener.onStopRequested(sig.getName());
                    } else {
                        listener.onForceRequested(sig.getName());
                    }
                });
            }
            previous = replaced;
            return true;
        } catch (LinkageError | IllegalArgumentException e) {
            return false;
        }
    }

    /**
     * Puts back the handlers {@link #install} replaced (the JVM's own, in a node process), for a run
     * that ends without starting the node: the JVM may go on (a test, an embedding program).
     */
    void restore() {
        sun.misc.SignalHandler[] p = previous;
        previous = null;
        if (p == null) {
            return;
        }
        for (int i = 0; i < SIGNALS.length; i++) {
            if (p[i] != null) {
                sun.misc.Signal.handle(new sun.misc.Signal(SIGNALS[i]), p[i]);
            }
        }
    }
}
