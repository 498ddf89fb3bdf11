package io.poyang.benchmark.chaos;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

/** The checker, its end states and its windows against {@link BruteForceLinearizability} on thousands of tiny random histories. */
class CheckerCrossCheckTest {

    /** Values reads and CAS expectations use. */
    private static final String[] VALUES = {"a", "b", "c"};
    /** Values writes use: "d" and "e" are never read nor expected, which the checker treats specially. */
    private static final String[] WRITTEN = {"a", "b", "c", "d", "e"};

    @Test
    void agreesWithBruteForceOnRandomTinyHistories() {
        Random random = new Random(20240611);
        LinearizabilityChecker checker = new LinearizabilityChecker(CheckBudget.defaults(), 1);
        int failing = 0;
        int withUnknowns = 0;
        for (int round = 0; round < 4000; round++) {
            List<Operation> ops = randomHistory(random);
            boolean expected = BruteForceLinearizability.isLinearizable(ops);
            CheckReport report = checker.check(ops);
            Verdict verdict = report.verdict();
            String text = "round " + round + ":\n" + lines(ops) + report.format(true);
            assertEquals(expected ? Verdict.LINEARIZABLE : Verdict.NOT_LINEARIZABLE, verdict, text);
            if (!expected) {
                failing++;
                FailingWindow w = report.keys().get(0).window();
                assertFalse(w.operations().isEmpty(), text);
                Set<Long> ids = new HashSet<>();
                for (Operation op : ops) {
                    ids.add(op.id());
                }
                assertTrue(ids.containsAll(w.operationIds()), text);
            }
            if (ops.stream().anyMatch(o -> o.status() == OpStatus.UNKNOWN)) {
                withUnknowns++;
            }
        }
        // The generator must exercise both verdicts and unknown operations, or this test proves little.
        assertTrue(failing > 800 && failing < 3200, "failing histories: " + failing);
        assertTrue(withUnknowns > 1000, "histories with unknown operations: " + withUnknowns);
    }

    @Test
    void endStatesAgreeWithBruteForceOnRandomTinyHistories() {
        // The states a history can end in are what the report of a failing window shows as "before the window".
        // Unknown writes are frequent here: they are what makes the end states hard.
        Random random = new Random(20240612);
        int checked = 0;
        for (int round = 0; round < 4000; round++) {
            List<Operation> ops = randomHistory(random, 4);
            Set<String> expected = BruteForceLinearizability.endStates(ops);
            if (expected.isEmpty()) {
                continue;
            }
            KeyHistory h = new KeyHistory("k", ops);
            LinearizationSearch search = new LinearizationSearch(h.whole(), CheckBudget.DEFAULT_MAX_CONFIGURATIONS,
                    System.nanoTime() + TimeUnit.SECONDS.toNanos(10), true);
            String text = "round " + round + ":\n" + lines(ops);
            assertEquals(LinearizationSearch.Outcome.LINEARIZABLE, search.run(), text);
            Set<String> got = new HashSet<>();
            for (int id : search.endStates()) {
                got.add(h.values.value(id));
            }
            assertEquals(expected, got, text);
            checked++;
        }
        assertTrue(checked > 1000, "linearizable histories: " + checked);
    }

    @Test
    void everyWindowOfALinearizableHistoryIsLinearizable() {
        // A failing window is taken as proof that the whole history fails, so no window of a history that passes
        // may fail: whatever the window leaves out must only loosen it.
        Random random = new Random(20240613);
        int checked = 0;
        for (int round = 0; round < 2000; round++) {
            List<Operation> ops = randomHistory(random, 3);
            if (!BruteForceLinearizability.isLinearizable(ops)) {
                continue;
            }
            KeyHistory h = new KeyHistory("k", ops);
            Set<Long> starts = new TreeSet<>();
            for (Operation op : ops) {
                starts.add(op.invokeNanos());
            }
            String text = "round " + round + ":\n" + lines(ops);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            for (long end : h.completionTimes()) {
                assertEquals(LinearizationSearch.Outcome.LINEARIZABLE, new LinearizationSearch(h.prefix(end),
                        CheckBudget.DEFAULT_MAX_CONFIGURATIONS, deadline, false).run(), "prefix to " + end + ", " + text);
                for (long start : starts) {
                    if (start <= end) {
                        assertEquals(LinearizationSearch.Outcome.LINEARIZABLE, new LinearizationSearch(
                                h.window(start, end, Collections.emptySet()), CheckBudget.DEFAULT_MAX_CONFIGURATIONS,
                                deadline, false).run(), "window " + start + ".." + end + ", " + text);
                    }
                }
                assertNull(FailingWindowFinder.find(h, end, false, CheckBudget.DEFAULT_MAX_CONFIGURATIONS, deadline),
                        "a failing window near " + end + ", " + text);
            }
            checked++;
        }
        assertTrue(checked > 500, "linearizable histories: " + checked);
    }

    /** 2-3 clients, each doing 1-3 operations one after another, on a coarse clock so ties and overlaps abound. */
    static List<Operation> randomHistory(Random random) {
        return randomHistory(random, 1);
    }

    /** As {@link #randomHistory(Random)}, with {@code unknownInTen} operations in ten of unknown outcome. */
    static List<Operation> randomHistory(Random random, int unknownInTen) {
        List<Operation> ops = new ArrayList<>();
        int clients = 2 + random.nextInt(2);
        long id = 1;
        for (int c = 0; c < clients; c++) {
            long t = random.nextInt(3);
            int count = 1 + random.nextInt(3);
            for (int k = 0; k < count; k++) {
                long invoke = t + random.nextInt(3);
                long complete = invoke + random.nextInt(5);
                t = complete + 1;
                String value = WRITTEN[random.nextInt(WRITTEN.length)];
                String other = random.nextInt(4) == 0 ? null : VALUES[random.nextInt(VALUES.length)];
                Invocation inv;
                switch (random.nextInt(4)) {
                    case 0:
                        inv = Invocation.put(id++, c, "k", value, invoke);
                        break;
                    case 1:
                        inv = Invocation.get(id++, c, "k", invoke);
                        break;
                    case 2:
                        inv = Invocation.cas(id++, c, "k", other, value, invoke);
                        break;
                    default:
                        inv = Invocation.remove(id++, c, "k", invoke);
                        break;
                }
                int fate = random.nextInt(10);
                if (fate < unknownInTen) {
                    ops.add(inv.unknown(complete, "timeout"));
                    // The client gave up; it may be much later that the write lands.
                } else if (fate == unknownInTen) {
                    ops.add(inv.failed(complete, "NOT_LEADER"));
                } else {
                    switch (inv.kind()) {
                        case PUT:
                            ops.add(inv.putOk(complete));
                            break;
                        case GET:
                            ops.add(inv.getOk(complete, random.nextInt(4) == 0 ? null : VALUES[random.nextInt(VALUES.length)]));
                            break;
                        case CAS:
                            ops.add(inv.casOk(complete, random.nextBoolean()));
                            break;
                        default:
                            ops.add(inv.removeOk(complete, random.nextBoolean()));
                            break;
                    }
                }
            }
        }
        return ops;
    }

    private static String lines(List<Operation> ops) {
        StringBuilder b = new StringBuilder();
        for (Operation op : ops) {
            b.append(op).append('\n');
        }
        return b.toString();
    }
}
