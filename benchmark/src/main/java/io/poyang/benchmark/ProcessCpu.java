package io.poyang.benchmark;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * CPU time used by this process and by server processes on this machine, so a run can report CPU
 * per operation. On a shared two-core machine throughput moves with whatever else runs, while the
 * CPU an operation costs moves much less: it is the figure that shows whether a change made the
 * path cheaper. Read twice (start and end of the measured window); the difference is what counts.
 */
final class ProcessCpu {

    private final List<ProcessHandle> servers = new ArrayList<>();
    /** Server processes were named: their CPU belongs in the figure, and without it there is none. */
    private final boolean serversNamed;
    /** A named server process was not running when the run started: the servers' sum would be partial. */
    private final boolean serverMissing;
    private final com.sun.management.OperatingSystemMXBean os;

    ProcessCpu(List<Long> serverPids) {
        java.lang.management.OperatingSystemMXBean bean = ManagementFactory.getOperatingSystemMXBean();
        os = bean instanceof com.sun.management.OperatingSystemMXBean
                ? (com.sun.management.OperatingSystemMXBean) bean : null;
        boolean missing = false;
        for (long pid : serverPids) {
            Optional<ProcessHandle> p = ProcessHandle.of(pid);
            if (p.isPresent()) {
                servers.add(p.get());
            } else {
                missing = true;
            }
        }
        serversNamed = !serverPids.isEmpty();
        serverMissing = missing;
    }

    /** Whether the run named server processes on this machine (whose CPU then counts, or makes the figure unknown). */
    boolean serversNamed() {
        return serversNamed;
    }

    /** This JVM's CPU time in nanoseconds (user + system, all threads), or -1 when the JVM cannot tell. */
    long ownNanos() {
        return os == null ? -1 : os.getProcessCpuTime();
    }

    /**
     * The server processes' CPU time in nanoseconds, or -1 when there are none, or one of them was
     * not running at the start or cannot be read (ended since, another user's): a partial sum would
     * pass for the servers' CPU.
     */
    long serversNanos() {
        if (servers.isEmpty() || serverMissing) {
            return -1;
        }
        long sum = 0;
        for (ProcessHandle p : servers) {
            Optional<Duration> d = p.info().totalCpuDuration();
            if (d.isEmpty()) {
                return -1;
            }
            sum += d.get().toNanos();
        }
        return sum;
    }

    /** CPU nanoseconds from {@code startNanos} to {@code endNanos}, two readings above; -1 when either is unknown. */
    static long between(long startNanos, long endNanos) {
        return startNanos < 0 || endNanos < 0 ? -1 : endNanos - startNanos;
    }
}
