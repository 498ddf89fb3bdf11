package io.poyang.fiber;

import java.util.Collections;
import java.util.List;

/**
 * A picture of a fiber group at one moment: its live fibers, what each waits on and for how long,
 * and their frames. Immutable; print it with {@link #toString()}. Obtained with
 * {@link FiberGroup#snapshot()} or as text with {@link FiberGroup#dumpState(long)}.
 */
public final class FiberGroupSnapshot {

    /** One live fiber. */
    public static final class FiberInfo {
        private final String name;
        private final boolean daemon;
        private final String state;
        private final String waitingOn;
        private final long waitingMillis;
        private final List<String> frames;

        FiberInfo(String name, boolean daemon, String state, String waitingOn, long waitingMillis,
                  List<String> frames) {
            this.name = name;
            this.daemon = daemon;
            this.state = state;
            this.waitingOn = waitingOn;
            this.waitingMillis = waitingMillis;
            this.frames = Collections.unmodifiableList(frames);
        }

        public String name() {
            return name;
        }

        public boolean daemon() {
            return daemon;
        }

        /** "ready", "running" or "waiting". */
        public String state() {
            return state;
        }

        /** What the fiber waits on ("future 'x'", "condition 'y'", "sleep" …), or null when not waiting. */
        public String waitingOn() {
            return waitingOn;
        }

        /** How long the fiber has been waiting, by the dispatcher's clock. */
        public long waitingMillis() {
            return waitingMillis;
        }

        /** Frame names, innermost first. */
        public List<String> frames() {
            return frames;
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder();
            sb.append("fiber '").append(name).append('\'');
            if (daemon) {
                sb.append(" (daemon)");
            }
            sb.append(' ').append(state);
            if (waitingOn != null) {
                sb.append(" on ").append(waitingOn).append(" for ").append(waitingMillis).append(" ms");
            }
            sb.append(": ").append(String.join(" <- ", frames));
            return sb.toString();
        }
    }

    private final String groupName;
    private final String dispatcherName;
    private final boolean shouldStop;
    private final boolean finished;
    private final int normalFibers;
    private final int daemonFibers;
    private final List<FiberInfo> fibers;

    FiberGroupSnapshot(String groupName, String dispatcherName, boolean shouldStop, boolean finished,
                       int normalFibers, int daemonFibers, List<FiberInfo> fibers) {
        this.groupName = groupName;
        this.dispatcherName = dispatcherName;
        this.shouldStop = shouldStop;
        this.finished = finished;
        this.normalFibers = normalFibers;
        this.daemonFibers = daemonFibers;
        this.fibers = Collections.unmodifiableList(fibers);
    }

    public String groupName() {
        return groupName;
    }

    public boolean shouldStop() {
        return shouldStop;
    }

    public boolean finished() {
        return finished;
    }

    public int normalFibers() {
        return normalFibers;
    }

    public int daemonFibers() {
        return daemonFibers;
    }

    public List<FiberInfo> fibers() {
        return fibers;
    }

    /** The fiber with this name, or null. */
    public FiberInfo fiber(String name) {
        for (FiberInfo f : fibers) {
            if (f.name.equals(name)) {
                return f;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        sb.append("fiber group '").append(groupName).append("' on dispatcher '").append(dispatcherName).append("'");
        if (finished) {
            sb.append(" finished");
        } else if (shouldStop) {
            sb.append(" shutting down");
        }
        sb.append(": ").append(normalFibers).append(" normal and ").append(daemonFibers).append(" daemon fibers");
        for (FiberInfo f : fibers) {
            sb.append("\n  ").append(f);
        }
        return sb.toString();
    }
}
