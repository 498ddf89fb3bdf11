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
    private final com.sun.management.OperatingSystemMXBean os;

    ProcessCpu(List<Long> serverPids) {
        java.lang.management.OperatingSystemMXBean bean = ManagementFactory.getOperatingSystemMXBean();
        os = bean instanceof com.sun.management.OperatingSystemMXBean
                ? (com.sun.management.OperatingSystemMXBean) bean : null;
        for (long pid : serverPids) {
            ProcessHandle.of(pid).ifPresent(servers::add);
        }
    }

    /** This JVM's CPU time in nanoseconds (user + system, all threads), or -1 when the JVM cannot tell. */
    long ownNanos() {
        return os == null ? -1 : os.getProcessCpuTime();
    }

    /** The server processes' CPU time in nanoseconds, or -1 when there are none or one cannot be read. */
    long serversNanos() {
        if (servers.isEmpty()) {
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
}
