package io.poyang.benchmark;

import io.poyang.benchmark.fiber.FiberScenario;
import io.poyang.benchmark.log.LogScenario;
import io.poyang.benchmark.raft.RaftReadScenario;
import io.poyang.benchmark.raft.RaftScenario;
import io.poyang.benchmark.rpc.RpcScenario;

/** Maps --op to its scenario. A new op plugs in here. */
public final class Scenarios {

    private Scenarios() {
    }

    /** The scenario for {@code op}, or null when it is not built yet (see {@link #notBuiltYet}). */
    public static Scenario create(String op) {
        switch (op) {
            case "rpc":
                return new RpcScenario();
            case "fiber":
                return new FiberScenario();
            case "log":
                return new LogScenario();
            case "raft":
                return new RaftScenario();
            case "raft-read":
                return new RaftReadScenario();
            case "put":
            case "get":
            case "mixed":
                return new io.poyang.benchmark.kv.KvScenario(op);
            default:
                return null;
        }
    }

    /** Why an op cannot run yet: the issue that adds it. */
    public static String notBuiltYet(String op) {
        switch (op) {
            default:
                return "--op " + op + " is not built yet: the DtKV server issue adds put, get and mixed";
        }
    }
}
