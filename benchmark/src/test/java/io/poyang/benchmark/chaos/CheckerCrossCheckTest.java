package io.poyang.benchmark.chaos;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.*;

/** The checker against {@link BruteForceLinearizability} on thousands of tiny random histories. */
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

    /** 2-3 clients, each doing 1-3 operations one after another, on a coarse clock so ties and overlaps abound. */
    static List<Operation> randomHistory(Random random) {
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
                if (fate == 0) {
                    ops.add(inv.unknown(complete, "timeout"));
                    // The client gave up; it may be much later that the write lands.
                } else if (fate == 1) {
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
