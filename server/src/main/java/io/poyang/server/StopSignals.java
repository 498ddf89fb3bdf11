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

    private final AtomicInteger received = new AtomicInteger();

    /** Installs the handlers; false when this JVM does not let the process take the signals. */
    boolean install(Listener listener) {
        try {
            for (String name : new String[]{"TERM", "INT"}) {
                sun.misc.Signal.handle(new sun.misc.Signal(name), sig -> {
                    if (received.getAndIncrement() == 0) {
                        listener.onStopRequested(sig.getName());
                    } else {
                        listener.onForceRequested(sig.getName());
                    }
                });
            }
            return true;
        } catch (LinkageError | IllegalArgumentException e) {
            return false;
        }
    }
}
