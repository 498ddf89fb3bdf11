package io.poyang.benchmark;

import java.util.Collections;
import java.util.Map;

/**
 * One kind of operation the benchmark drives (rpc, fiber, log, raft, put, get, mixed). The load
 * drivers, the timeline and the report are shared; a scenario only sets up what it measures and
 * performs one operation at a time.
 */
public interface Scenario {

    /** Starts what the operation needs (servers, clients, files). Called once, before the run. */
    void setUp(BenchOptions options) throws Exception;

    /** Independent clients; the asynchronous driver keeps --max-pending operations in flight on each. */
    int clients();

    /**
     * Starts one asynchronous operation on {@code client} and reports its end to {@code callback}
     * exactly once, from any thread, never from inside this call. Throws when the operation could
     * not even start (the driver counts it as failed and retries shortly).
     */
    void issue(int client, OpCallback callback) throws Exception;

    /**
     * Performs one blocking operation for caller thread {@code thread} (the --sync mode). Returns
     * normally on success; throws on failure, and a {@link java.util.concurrent.TimeoutException}
     * or a subclass of io.poyang.common.PoyangTimeoutException for a timeout.
     */
    void call(int thread) throws Exception;

    /**
     * A driver of the scenario's own, for operations that are not request/response (the fiber
     * ping-pong counts switches inside one thread). Null, the default, means the standard
     * asynchronous or --sync driver calls {@link #issue} or {@link #call}.
     */
    default LoadDriver ownDriver(RunStats stats, BenchOptions options) {
        return null;
    }

    /**
     * Process ids of the servers this run measures when they run in other processes on this
     * machine (child processes the scenario started, or {@code POYANG_BENCH_SERVER_PIDS} with
     * {@code --servers}); their CPU time goes into the report's CPU per operation. Empty when the
     * servers are in this process or elsewhere.
     */
    default java.util.List<Long> serverPids() {
        return Collections.emptyList();
    }

    /**
     * Server-side counters (fsyncs, batches, reads) that the run reads when the measured window
     * starts and ends, for the scenario's per-second {@link #extras}; null, the default, for none.
     */
    default CounterWindow counterWindow() {
        return null;
    }

    /** Op-specific figures added to the report (for example fsyncs_per_sec), over the measured seconds. */
    default Map<String, Object> extras(double measuredSeconds) {
        return Collections.emptyMap();
    }

    /**
     * Why the run cannot go on, checked as the run goes: a server process the scenario started has
     * exited. Null (the default) while all is well; otherwise the run ends with this reason and exit code 1.
     */
    default String failure() {
        return null;
    }

    /** Stops everything setUp started (also after a failed setUp). */
    void close() throws Exception;
}
