package io.poyang.benchmark.chaos;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

class LinearizabilityCheckerTest {

    private static CheckReport check(HistoryBuilder h) {
        return new LinearizabilityChecker(CheckBudget.defaults(), 1).check(h.build());
    }

    private static void assertLinearizable(HistoryBuilder h) {
        CheckReport r = check(h);
        assertEquals(Verdict.LINEARIZABLE, r.verdict(), r.format(true));
    }

    /** Asserts the history fails with exactly the given operation ids in its window, and returns the window. */
    private static FailingWindow assertFailsWithWindow(HistoryBuilder h, Long... ids) {
        CheckReport r = check(h);
        assertEquals(Verdict.NOT_LINEARIZABLE, r.verdict(), r.format(true));
        FailingWindow w = r.keys(Verdict.NOT_LINEARIZABLE).get(0).window();
        assertEquals(Arrays.asList(ids), w.operationIds(), w.format());
        return w;
    }

    // ---- linearizable histories pass ----

    @Test
    void emptyHistoryIsLinearizable() {
        CheckReport r = new LinearizabilityChecker().check(Arrays.asList());
        assertEquals(Verdict.LINEARIZABLE, r.verdict());
        assertTrue(r.keys().isEmpty());
    }

    @Test
    void sequentialPutsGetsCasAndRemovesPass() {
        assertLinearizable(new HistoryBuilder()
                .get(1, null, 0, 1)
                .put(1, "a", 2, 3)
                .get(2, "a", 4, 5)
                .cas(1, "a", "b", true, 6, 7)
                .cas(2, "a", "c", false, 8, 9)
                .get(3, "b", 10, 11)
                .remove(1, true, 12, 13)
                .remove(2, false, 14, 15)
                .get(3, null, 16, 17)
                .cas(1, null, "d", true, 18, 19)
                .get(2, "d", 20, 21));
    }

    @Test
    void overlappingPutsMayBeReadInEitherOrder() {
        // Two concurrent puts; later reads agree on whichever came last.
        assertLinearizable(new HistoryBuilder()
                .put(1, "a", 0, 10)
                .put(2, "b", 1, 9)
                .get(3, "a", 11, 12)
                .get(4, "a", 13, 14));
        assertLinearizable(new HistoryBuilder()
                .put(1, "a", 0, 10)
                .put(2, "b", 1, 9)
                .get(3, "b", 11, 12)
                .get(4, "b", 13, 14));
        // A read overlapping both may see either, or the state before them.
        assertLinearizable(new HistoryBuilder()
                .put(1, "a", 0, 10)
                .put(2, "b", 1, 9)
                .get(3, null, 2, 8)
                .get(4, "b", 3, 8)
                .get(5, "a", 4, 12));
    }

    @Test
    void readsConcurrentWithAWriteMayFlipOnlyOnce() {
        // r1 sees the new value, then r2 (started after r1 finished) still sees the old one: not linearizable.
        HistoryBuilder h = new HistoryBuilder()
                .put(1, "a", 0, 1)
                .put(2, "b", 10, 50)
                .get(3, "b", 11, 12)
                .get(4, "a", 13, 14);
        assertFailsWithWindow(h, 3L, 4L);
    }

    @Test
    void casChainPasses() {
        HistoryBuilder h = new HistoryBuilder().cas(0, null, "v0", true, 0, 1);
        for (int i = 0; i < 50; i++) {
            h.cas(i % 4, "v" + i, "v" + (i + 1), true, 10L * i + 2, 10L * i + 9);
            h.cas((i + 1) % 4, "v" + i, "lost" + i, false, 10L * i + 3, 10L * i + 12);
        }
        h.get(0, "v50", 1000, 1001);
        assertLinearizable(h);
    }

    @Test
    void concurrentCasesFromOneValueMayOnlyOneWin() {
        assertLinearizable(new HistoryBuilder()
                .put(0, "a", 0, 1)
                .cas(1, "a", "b", true, 2, 10)
                .cas(2, "a", "c", false, 3, 9)
                .cas(3, "a", "d", false, 4, 8)
                .get(0, "b", 11, 12));
    }

    @Test
    void removesPass() {
        assertLinearizable(new HistoryBuilder()
                .remove(1, false, 0, 1)
                .put(1, "a", 2, 3)
                .remove(2, true, 4, 8)
                .remove(3, false, 5, 9)
                .get(1, null, 10, 11));
    }

    @Test
    void unknownWriteThatTookEffectPasses() {
        assertLinearizable(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .unknownPut(2, "b", 2, 100)
                .get(3, "b", 200, 201)
                .get(3, "b", 202, 203));
    }

    @Test
    void unknownWriteThatNeverTookEffectPasses() {
        assertLinearizable(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .unknownPut(2, "b", 2, 100)
                .get(3, "a", 200, 201)
                .get(3, "a", 202, 203));
    }

    @Test
    void unknownWriteMayTakeEffectLongAfterTheClientGaveUp() {
        // The proposal commits after a leader change: its value shows up after other writes completed.
        assertLinearizable(new HistoryBuilder()
                .unknownPut(2, "late", 0, 10)
                .put(1, "a", 20, 21)
                .get(3, "a", 22, 23)
                .get(3, "late", 30, 31));
    }

    @Test
    void unknownCasAndRemoveMayOrMayNotTakeEffect() {
        assertLinearizable(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .unknownCas(2, "a", "b", 2, 10)
                .get(3, "b", 11, 12)
                .unknownRemove(2, 13, 20)
                .get(3, "b", 21, 22)
                .get(3, null, 23, 24));
        assertLinearizable(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .unknownCas(2, "a", "b", 2, 10)
                .get(3, "a", 11, 12));
    }

    @Test
    void unknownWriteCannotTakeEffectBeforeItsInvocation() {
        HistoryBuilder h = new HistoryBuilder()
                .get(1, "x", 0, 1)
                .unknownPut(2, "x", 5, 10);
        assertFailsWithWindow(h, 1L);
    }

    @Test
    void unknownWriteTakesEffectAtMostOnce() {
        // Either read of "b" alone could be the unknown put landing late; both together cannot.
        HistoryBuilder h = new HistoryBuilder()
                .unknownPut(1, "b", 0, 5)
                .get(2, "b", 6, 7)
                .put(2, "c", 8, 9)
                .get(2, "b", 10, 11);
        FailingWindow w = assertFailsWithWindow(h, 2L, 3L, 4L);
        assertEquals(Arrays.asList(1L), Arrays.asList(w.optionalOperations().get(0).id()));
        assertLinearizable(new HistoryBuilder()
                .unknownPut(1, "b", 0, 5)
                .put(2, "c", 8, 9)
                .get(2, "b", 10, 11));
    }

    // ---- unknown writes take effect once at most: they cannot be seen, undone and seen again ----

    @Test
    void anUnknownWriteSeenCannotBeUnseen() {
        // b was read, so the unknown put landed; a later read of a (nobody wrote it again) would undo it
        CheckReport r = check(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .unknownPut(2, "b", 2, 30)
                .get(3, "b", 10, 11)
                .get(3, "a", 12, 13));
        assertEquals(Verdict.NOT_LINEARIZABLE, r.verdict(), r.format(true));
        assertLinearizable(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .unknownPut(2, "b", 2, 30)
                .get(3, "a", 10, 11)
                .get(3, "b", 12, 13));
    }

    @Test
    void anUnknownCasCannotFireTwice() {
        CheckReport r = check(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .unknownCas(2, "a", "b", 2, 30)
                .get(3, "b", 3, 4)
                .put(1, "a", 5, 6)
                .get(3, "b", 7, 8));
        assertEquals(Verdict.NOT_LINEARIZABLE, r.verdict(), r.format(true));
    }

    @Test
    void anUnknownRemoveCannotRemoveTwice() {
        CheckReport r = check(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .unknownRemove(2, 2, 30)
                .get(3, null, 3, 4)
                .put(1, "c", 5, 6)
                .get(3, null, 7, 8));
        assertEquals(Verdict.NOT_LINEARIZABLE, r.verdict(), r.format(true));
        assertLinearizable(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .unknownRemove(2, 2, 30)
                .put(1, "c", 5, 6)
                .get(3, null, 7, 8));
    }

    @Test
    void unknownReadsAndFailedOperationsAreLeftOut() {
        CheckReport r = check(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .failedPut(2, "never", 2, 3)
                .unknownGet(3, 4, 5)
                .get(1, "a", 6, 7));
        assertEquals(Verdict.LINEARIZABLE, r.verdict());
        // A failed write that shows up is a violation: it was proven never to take effect.
        HistoryBuilder h = new HistoryBuilder()
                .put(1, "a", 0, 1)
                .failedPut(2, "never", 2, 3)
                .get(1, "never", 6, 7);
        assertFailsWithWindow(h, 3L);
    }

    @Test
    void keysAreCheckedIndependently() {
        HistoryBuilder h = new HistoryBuilder()
                .key("x").put(1, "1", 0, 1)
                .key("y").put(2, "1", 2, 3)
                .key("x").get(3, "1", 4, 5)
                .key("y").get(3, null, 6, 7);
        CheckReport r = check(h);
        assertEquals(Verdict.NOT_LINEARIZABLE, r.verdict());
        assertEquals(Verdict.LINEARIZABLE, r.key("x").verdict());
        assertEquals(Verdict.NOT_LINEARIZABLE, r.key("y").verdict());
        assertEquals(Arrays.asList(2L, 4L), r.key("y").window().operationIds());
        assertTrue(r.verdictLine().startsWith("NOT LINEARIZABLE: 1 of 2 keys (\"y\")"), r.verdictLine());
    }

    @Test
    void operationsThatTouchAtOneInstantMayGoInEitherOrder() {
        // The lenient reading of equal timestamps: a read invoked at the very nanosecond a put completed may still
        // come before it.
        assertLinearizable(new HistoryBuilder()
                .put(1, "a", 0, 5)
                .get(2, null, 5, 6));
        assertFailsWithWindow(new HistoryBuilder()
                .put(1, "a", 0, 5)
                .get(2, null, 6, 7), 1L, 2L);
    }

    @Test
    void casOnARemovedKeySucceedsOnlyWhenItExpectsAbsent() {
        assertLinearizable(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .remove(1, true, 2, 3)
                .cas(2, "a", "b", false, 4, 5)
                .cas(2, null, "c", true, 6, 7)
                .get(3, "c", 8, 9));
        assertFailsWithWindow(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .remove(1, true, 2, 3)
                .cas(2, "a", "b", true, 4, 5), 2L, 3L);
    }

    @Test
    void searchBacktracksOverOrdersThatPlaceTheSameOperationsButLeaveAnotherState() {
        // Every order of the three puts places the same operations; only one with "a" last explains the reads.
        // The memo must tell those configurations apart by the state they leave.
        assertLinearizable(new HistoryBuilder()
                .put(1, "a", 0, 10)
                .put(2, "b", 0, 10)
                .put(3, "c", 0, 10)
                .get(4, "b", 0, 10)
                .get(4, "a", 11, 12));
    }

    @Test
    void unknownCasFiresOnlyFromItsExpectedValue() {
        assertFailsWithWindow(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .unknownCas(2, "b", "c", 2, 3)
                .get(3, "c", 4, 5), 1L, 3L);
        // ... and from absent when that is what it expects.
        assertLinearizable(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .unknownRemove(2, 2, 3)
                .unknownCas(2, null, "c", 4, 5)
                .get(3, "c", 6, 7));
    }

    @Test
    void failedCasAndRemoveAreLeftOut() {
        // A failed CAS would explain the read of "b", a failed remove the absent read: neither may be used.
        List<Operation> ops = new HistoryBuilder().put(1, "a", 0, 1).get(3, "b", 6, 7).build();
        ops.add(Invocation.cas(10, 2, "k", "a", "b", 2).failed(3, "NOT_LEADER"));
        CheckReport r = new LinearizabilityChecker(CheckBudget.defaults(), 1).check(ops);
        assertEquals(Verdict.NOT_LINEARIZABLE, r.verdict(), r.format(true));
        ops = new HistoryBuilder().put(1, "a", 0, 1).get(3, null, 6, 7).build();
        ops.add(Invocation.remove(10, 2, "k", 2).failed(3, "NOT_LEADER"));
        r = new LinearizabilityChecker(CheckBudget.defaults(), 1).check(ops);
        assertEquals(Verdict.NOT_LINEARIZABLE, r.verdict(), r.format(true));
    }

    // ---- classic violations fail with the right window ----

    @Test
    void staleReadFailsWithTheNewerWriteAndTheRead() {
        HistoryBuilder h = new HistoryBuilder()
                .put(1, "1", 0, 1)
                .get(2, "1", 2, 3)
                .put(1, "2", 4, 5)
                .get(3, "2", 6, 7)
                .get(2, "1", 8, 9)      // stale: "2" was written and even read before this read started
                .get(3, "2", 10, 11);
        FailingWindow w = assertFailsWithWindow(h, 4L, 5L);
        assertEquals(Arrays.asList("2"), w.stateBefore(), w.format());
        assertTrue(w.format().contains("<- completed last"), w.format());
    }

    @Test
    void lostWriteFailsWithTheAcknowledgedWriteAndTheReadThatMissedIt() {
        HistoryBuilder h = new HistoryBuilder()
                .put(1, "a", 0, 1)
                .put(2, "b", 2, 3)      // acknowledged ...
                .get(3, "a", 4, 5)      // ... but never visible
                .get(1, "a", 6, 7)
                .get(2, "a", 8, 9);
        FailingWindow w = assertFailsWithWindow(h, 2L, 3L);
        assertEquals(Arrays.asList("a"), w.stateBefore());
    }

    @Test
    void readOfAValueNeverWrittenFailsWithTheReadAlone() {
        HistoryBuilder h = new HistoryBuilder()
                .put(1, "a", 0, 1)
                .get(2, "a", 2, 3)
                .get(3, "ghost", 4, 5)
                .put(1, "b", 6, 7);
        FailingWindow w = assertFailsWithWindow(h, 3L);
        assertEquals(Arrays.asList("a"), w.stateBefore());
        assertTrue(w.format().contains("\"ghost\""), w.format());
    }

    @Test
    void casThatSucceededTwiceFromTheSameValueFails() {
        HistoryBuilder h = new HistoryBuilder()
                .put(1, "a", 0, 1)
                .cas(2, "a", "b", true, 2, 3)
                .cas(3, "a", "c", true, 4, 5)   // "a" was already swapped away
                .get(1, "c", 6, 7);
        assertFailsWithWindow(h, 2L, 3L);
    }

    @Test
    void concurrentCasesThatBothSucceededFromTheSameValueFail() {
        HistoryBuilder h = new HistoryBuilder()
                .put(1, "a", 0, 1)
                .cas(2, "a", "b", true, 2, 10)
                .cas(3, "a", "c", true, 3, 9);
        assertFailsWithWindow(h, 2L, 3L);
    }

    @Test
    void removeThatReportedRemovedOnAnAbsentKeyFails() {
        HistoryBuilder h = new HistoryBuilder()
                .put(1, "a", 0, 1)
                .remove(2, true, 2, 3)
                .get(3, null, 4, 5)
                .remove(1, true, 6, 7);       // nothing was there to remove
        FailingWindow w = assertFailsWithWindow(h, 3L, 4L);
        assertEquals(Arrays.asList((String) null), w.stateBefore());
        // On a key never written at all, the remove alone is the window.
        assertFailsWithWindow(new HistoryBuilder().remove(1, true, 0, 1), 1L);
    }

    @Test
    void violationAfterALongLinearizablePrefixGetsAShortWindow() {
        HistoryBuilder h = new HistoryBuilder();
        for (int i = 0; i < 2000; i++) {
            h.put(i % 3, "v" + i, 10L * i, 10L * i + 4);
            h.get((i + 1) % 3, "v" + i, 10L * i + 5, 10L * i + 9);
        }
        long put = h.nextId();
        h.put(0, "new", 100_000, 100_001);
        h.get(1, "v1999", 100_002, 100_003);
        FailingWindow w = assertFailsWithWindow(h, put, put + 1);
        assertEquals(Arrays.asList("v1999"), w.stateBefore());
    }

    @Test
    void unknownOperationsThatCannotExplainAViolationAreListedAsConsidered() {
        HistoryBuilder h = new HistoryBuilder()
                .unknownPut(9, "u", 0, 3)
                .put(1, "1", 0, 1)
                .put(1, "2", 4, 5)
                .get(2, "1", 6, 7);
        FailingWindow w = assertFailsWithWindow(h, 3L, 4L);
        assertEquals(1, w.optionalOperations().size(), w.format());
        assertEquals(1L, w.optionalOperations().get(0).id());
        assertTrue(w.format().contains("none of them explains it"), w.format());
    }

    @Test
    void readsTheFailureDoesNotNeedAreLeftOutOfTheWindow() {
        HistoryBuilder h = new HistoryBuilder()
                .put(1, "1", 0, 1)
                .put(1, "2", 2, 6)
                .get(2, "1", 3, 4)   // overlap the put, so may see "1": fine, and not needed to show the failure
                .get(3, "1", 3, 5)
                .get(4, "1", 7, 8);  // stale: the put of "2" completed before this read started
        FailingWindow w = assertFailsWithWindow(h, 2L, 5L);
        assertTrue(w.format().contains("2 reads in this time span left out"), w.format());
    }

    @Test
    void reportPrintsEachOperationOnALineWithRelativeTimes() {
        HistoryBuilder h = new HistoryBuilder()
                .put(1, "1", 1_000_000, 2_000_000)
                .put(7, "2", 10_000_000, 11_000_000)
                .get(2, "1", 12_000_000, 13_500_000);
        CheckReport r = check(h);
        String text = r.format(false);
        List<String> lines = Arrays.asList(text.split("\n"));
        assertTrue(lines.get(0).startsWith("key \"k\": NOT LINEARIZABLE"), text);
        assertTrue(text.contains("key \"k\": NOT LINEARIZABLE: no order of the 2 operations below"), text);
        assertTrue(text.contains("before the window the key held: \"1\""), text);
        assertTrue(lines.stream().anyMatch(l -> l.matches(" +2 +7 put +\"2\" +ok +0\\.000 +1\\.000")), text);
        assertTrue(lines.stream().anyMatch(l -> l.matches(" +3 +2 get +\"1\" +2\\.000 +3\\.500  <- completed last.*")),
                text);
        assertTrue(lines.get(lines.size() - 1).startsWith("NOT LINEARIZABLE: 1 of 1 keys"), text);
    }

    @Test
    void casExpectingAbsentThatSucceededOnAPresentKeyFails() {
        assertFailsWithWindow(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .cas(2, null, "b", true, 2, 3), 1L, 2L);
    }

    @Test
    void casThatReportedFalseWhileTheKeyHeldTheExpectedValueFails() {
        assertFailsWithWindow(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .cas(2, "a", "b", false, 2, 3), 1L, 2L);
        assertFailsWithWindow(new HistoryBuilder()
                .cas(2, null, "b", false, 0, 1), 1L);
    }

    @Test
    void removeThatFoundNothingOnAPresentKeyFails() {
        assertFailsWithWindow(new HistoryBuilder()
                .put(1, "a", 0, 1)
                .remove(2, false, 2, 3), 1L, 2L);
    }

    @Test
    void stateBeforeTheWindowListsEveryValueAnUnknownPutCouldHaveLeft() {
        // Before the read of "never": the removes need one unknown put each, so both landed; either may be last.
        // (Of unknown puts of values nothing reads, the search tries one for all; "x" must not go missing here.)
        HistoryBuilder h = new HistoryBuilder()
                .unknownPut(1, "x", 0, 1)
                .unknownPut(2, "y", 0, 1)
                .remove(3, true, 2, 3)
                .cas(3, null, "z", false, 4, 5)
                .get(4, "never", 10, 11);
        FailingWindow w = assertFailsWithWindow(h, 5L);
        assertEquals(new HashSet<>(Arrays.asList("x", "y")), new HashSet<>(w.stateBefore()), w.format());
        // One unknown put used up by the remove, the other not: either value may be the state before the window.
        h = new HistoryBuilder()
                .unknownPut(1, "x", 0, 1)
                .unknownPut(2, "y", 0, 1)
                .remove(3, true, 2, 3)
                .get(4, "never", 10, 11);
        w = assertFailsWithWindow(h, 4L);
        assertEquals(new HashSet<>(Arrays.asList(null, "x", "y")), new HashSet<>(w.stateBefore()), w.format());
    }
}
