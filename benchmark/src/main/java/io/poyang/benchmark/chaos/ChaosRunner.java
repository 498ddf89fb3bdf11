package io.poyang.benchmark.chaos;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;

/**
 * The fault-injecting half of {@code ./poyang chaos}: starts the node processes, drives the clients (recording
 * every operation through the {@link HistoryRecorder}: invocation stamped just before the request, completion as
 * soon as the answer or the timeout is known), injects the faults of the schedule, heals everything, and reads the
 * final value of every key from every node. {@link ChaosCommand} does the rest: the history file, the checks, the
 * report and the exit code. The runner is {@link ProcessChaosRunner} (node processes on loopback).
 */
public interface ChaosRunner {

    /**
     * Runs the test.
     *
     * @return node name to the keys it holds at the end and their values (a key a node does not list is absent)
     */
    Map<String, Map<String, String>> run(ChaosOptions options, HistoryRecorder recorder, PrintStream out)
            throws Exception;

    /**
     * Lines for the end of the report (operations, faults injected per kind, unavailability), given the
     * history the run recorded. Called after {@link #run}; none by default.
     */
    default List<String> summary(List<Operation> history) {
        return java.util.Collections.emptyList();
    }

    /** The runner: node processes on loopback. */
    static ChaosRunner create() {
        return new ProcessChaosRunner();
    }
}
