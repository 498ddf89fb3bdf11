package io.poyang.benchmark.chaos;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static org.junit.jupiter.api.Assertions.*;

/**
 * Keeps the checker honest on time: a history the size of a 60 s chaos run (8 clients, 16 keys, 300,000
 * operations, 2 % of them unknown around faults) checks in seconds.
 */
class LargeHistoryTest {

    private static final int OPERATIONS = 300_000;

    @Test
    void largeLinearizableHistoryChecksInSeconds() {
        List<Operation> history = LinearizableHistoryGenerator.generate(42, 8, 16, OPERATIONS, 0.02);
        long casFromAValue = history.stream().filter(op -> op.kind() == OpKind.CAS && op.status() == OpStatus.OK
                && op.expected() != null && op.succeeded()).count();
        assertTrue(casFromAValue > 100, "the history holds CASes from a value that swapped: " + casFromAValue);
        LinearizabilityChecker checker = new LinearizabilityChecker(CheckBudget.defaults(), 2);
        long start = System.nanoTime();
        CheckReport report = checker.check(history);
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf(Locale.ROOT, "large history: %,d operations on 16 keys checked in %.2f s%n", OPERATIONS,
                seconds);
        assertEquals(Verdict.LINEARIZABLE, report.verdict(), report.format(false));
        assertEquals(16, report.keys().size());
        // Generous for a shared 2-core machine; a regression to exponential search blows far past it.
        assertTrue(seconds < 30, "checking took " + seconds + " s");
    }

    @Test
    void oneCorruptedReadInALargeHistoryIsFoundWithAOneOperationWindow() {
        List<Operation> history = new ArrayList<>(LinearizableHistoryGenerator.generate(7, 8, 16, OPERATIONS, 0.02));
        int target = -1;
        for (int i = OPERATIONS / 2; i < history.size(); i++) {
            Operation op = history.get(i);
            if (op.kind() == OpKind.GET && op.status() == OpStatus.OK) {
                target = i;
                break;
            }
        }
        Operation read = history.get(target);
        history.set(target, read.invocation().getOk(read.completeNanos(), "never-written"));
        long start = System.nanoTime();
        CheckReport report = new LinearizabilityChecker(CheckBudget.defaults(), 2).check(history);
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf(Locale.ROOT, "large history with one bad read: checked and window found in %.2f s%n",
                seconds);
        assertEquals(Verdict.NOT_LINEARIZABLE, report.verdict());
        KeyVerdict failing = report.keys(Verdict.NOT_LINEARIZABLE).get(0);
        assertEquals(read.key(), failing.key());
        assertEquals(1, report.keys(Verdict.NOT_LINEARIZABLE).size());
        assertEquals(List.of(read.id()), failing.window().operationIds(), failing.window().format());
        assertTrue(seconds < 60, "took " + seconds + " s");
    }
}
