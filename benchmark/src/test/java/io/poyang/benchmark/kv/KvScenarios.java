package io.poyang.benchmark.kv;

import io.poyang.benchmark.Scenario;

/** For tests outside this package: KvScenarios that skip the preload, so gets find no key. */
public final class KvScenarios {

    private KvScenarios() {
    }

    public static Scenario withoutPreload(String op) {
        return new KvScenario(op, false);
    }
}
