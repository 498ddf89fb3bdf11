package io.poyang.benchmark.chaos;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.*;

class FinalStateCheckTest {

    private final FinalStateCheck check = new FinalStateCheck(new LinearizabilityChecker(CheckBudget.defaults(), 1));

    /** Three nodes holding the same values. */
    private static Map<String, Map<String, String>> allNodes(Map<String, String> values) {
        Map<String, Map<String, String>> nodes = new HashMap<>();
        for (String n : new String[]{"n1", "n2", "n3"}) {
            nodes.put(n, values);
        }
        return nodes;
    }

    private static Map<String, String> values(String... keyValues) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put(keyValues[i], keyValues[i + 1]);
        }
        return m;
    }

    @Test
    void nodesHoldingTheLastWrittenValuesPass() {
        List<Operation> h = new HistoryBuilder()
                .key("x").put(1, "a", 0, 1)
                .key("y").put(2, "b", 0, 1)
                .key("x").put(1, "c", 2, 3)
                .key("y").remove(2, true, 2, 3)
                .build();
        FinalStateCheck.Result r = check.check(h, allNodes(values("x", "c")));
        assertTrue(r.passed(), r.format(true));
        assertTrue(r.disagreements().isEmpty());
        assertEquals(2, r.report().keys().size());
    }

    @Test
    void concurrentWritesMayEndInEitherValue() {
        HistoryBuilder h = new HistoryBuilder().put(1, "a", 0, 10).put(2, "b", 1, 9);
        assertTrue(check.check(h.build(), allNodes(values("k", "a"))).passed());
        assertTrue(check.check(h.build(), allNodes(values("k", "b"))).passed());
    }

    @Test
    void acknowledgedWriteMissingAtTheEndFailsWithTheWriteAndTheFinalRead() {
        List<Operation> h = new HistoryBuilder()
                .put(1, "a", 0, 1)
                .put(2, "b", 2, 3)    // acknowledged, then lost
                .build();
        FinalStateCheck.Result r = check.check(h, allNodes(values("k", "a")));
        assertEquals(Verdict.NOT_LINEARIZABLE, r.verdict(), r.format(true));
        FailingWindow w = r.report().key("k").window();
        assertEquals(2, w.operations().size(), w.format());
        assertEquals(2L, w.operations().get(0).id());
        assertEquals(FinalStateCheck.FINAL_READ_CLIENT, w.operations().get(1).clientId());
        assertEquals("a", w.operations().get(1).readValue());
    }

    @Test
    void unknownWriteMayOrMayNotHaveLanded() {
        HistoryBuilder h = new HistoryBuilder().put(1, "a", 0, 1).unknownPut(2, "b", 2, 100).unknownRemove(3, 3, 100);
        for (String end : new String[]{"a", "b", null}) {
            Map<String, String> v = new HashMap<>();
            if (end != null) {
                v.put("k", end);
            }
            FinalStateCheck.Result r = check.check(h.build(), allNodes(v));
            assertTrue(r.passed(), end + ":\n" + r.format(true));
        }
    }

    @Test
    void valueNobodyWroteFails() {
        List<Operation> h = new HistoryBuilder().key("x").put(1, "a", 0, 1).build();
        FinalStateCheck.Result r = check.check(h, allNodes(values("x", "a", "ghost-key", "boo")));
        assertEquals(Verdict.NOT_LINEARIZABLE, r.verdict());
        assertEquals(Verdict.LINEARIZABLE, r.report().key("x").verdict());
        FailingWindow w = r.report().key("ghost-key").window();
        assertEquals(1, w.operations().size());
        assertEquals("boo", w.operations().get(0).readValue());
    }

    @Test
    void keyAbsentOnEveryNodeAfterARemovePasses() {
        List<Operation> h = new HistoryBuilder().put(1, "a", 0, 1).remove(2, true, 2, 3).build();
        assertTrue(check.check(h, allNodes(Collections.emptyMap())).passed());
        // ... but a node still holding the removed value fails.
        Map<String, Map<String, String>> nodes = allNodes(Collections.emptyMap());
        nodes.put("n3", values("k", "a"));
        FinalStateCheck.Result r = check.check(h, nodes);
        assertEquals(Verdict.NOT_LINEARIZABLE, r.verdict());
        assertEquals(Arrays.asList("key \"k\": the nodes disagree: n1,n2=absent n3=\"a\"; \"a\" (n3) is not a state the "
                + "history can end in"), r.disagreements());
    }

    @Test
    void nodesThatDisagreeFailEvenWhenBothValuesCouldEndTheHistory() {
        List<Operation> h = new HistoryBuilder().put(1, "a", 0, 10).put(2, "b", 1, 9).build();
        Map<String, Map<String, String>> nodes = new HashMap<>();
        nodes.put("n1", values("k", "a"));
        nodes.put("n2", values("k", "a"));
        nodes.put("n3", values("k", "b"));
        FinalStateCheck.Result r = check.check(h, nodes);
        assertEquals(Verdict.NOT_LINEARIZABLE, r.verdict());
        assertEquals(Verdict.LINEARIZABLE, r.report().verdict(), "the majority value alone is fine");
        assertEquals(1, r.disagreements().size());
        assertTrue(r.disagreements().get(0).contains("\"b\" (n3) is a state the history can end in too"),
                r.disagreements().get(0));
        assertTrue(r.format(false).contains("NOT CONSISTENT: the nodes disagree on 1 key"), r.format(false));
    }

    @Test
    void unknownWriteMayLandAfterLaterAcknowledgedWritesAndEndTheHistory() {
        // The client gave up on "late" before "a" was written, but the proposal may commit after it.
        List<Operation> h = new HistoryBuilder().unknownPut(1, "late", 0, 1).put(2, "a", 5, 6).build();
        assertTrue(check.check(h, allNodes(values("k", "late"))).passed());
        assertTrue(check.check(h, allNodes(values("k", "a"))).passed());
    }

    @Test
    void unknownCasMayEndTheHistoryOnlyFromItsExpectedValue() {
        HistoryBuilder fires = new HistoryBuilder().put(1, "a", 0, 1).unknownCas(2, "a", "c", 2, 3);
        assertTrue(check.check(fires.build(), allNodes(values("k", "c"))).passed());
        HistoryBuilder cannot = new HistoryBuilder().put(1, "a", 0, 1).unknownCas(2, "b", "c", 2, 3);
        FinalStateCheck.Result r = check.check(cannot.build(), allNodes(values("k", "c")));
        assertEquals(Verdict.NOT_LINEARIZABLE, r.verdict(), r.format(true));
    }

    @Test
    void valueOfAFailedWriteAtTheEndFails() {
        List<Operation> h = new HistoryBuilder().put(1, "a", 0, 1).failedPut(2, "never", 2, 3).build();
        FinalStateCheck.Result r = check.check(h, allNodes(values("k", "never")));
        assertEquals(Verdict.NOT_LINEARIZABLE, r.verdict(), r.format(true));
    }

    @Test
    void finalStateThatRunsOutOfBudgetIsNoPass() {
        List<Operation> h = LinearizableHistoryGenerator.generate(5, 4, 1, 500, 0.0);
        FinalStateCheck tight = new FinalStateCheck(new LinearizabilityChecker(new CheckBudget(3, 60_000), 1));
        FinalStateCheck.Result r = tight.check(h, allNodes(Collections.emptyMap()));
        assertEquals(Verdict.INCONCLUSIVE, r.verdict(), r.format(true));
        assertFalse(r.passed());
    }
}
