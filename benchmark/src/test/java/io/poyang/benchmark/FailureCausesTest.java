package io.poyang.benchmark;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.*;

class FailureCausesTest {

    private static Map<String, Long> counts(Object... causeThenCount) {
        Map<String, Long> m = new HashMap<>();
        for (int i = 0; i < causeThenCount.length; i += 2) {
            m.put((String) causeThenCount[i], ((Number) causeThenCount[i + 1]).longValue());
        }
        return m;
    }

    @Test
    void failuresAreCountedByCauseAndTwoSnapshotsGiveTheWindow() {
        FailureCauses causes = new FailureCauses();
        causes.record("A");
        Map<String, Long> atStart = causes.snapshot();
        causes.record("A");
        causes.record("B");
        causes.record("B");
        assertEquals(counts("A", 2, "B", 2), causes.snapshot());
        assertEquals(counts("A", 1, "B", 2), FailureCauses.minus(causes.snapshot(), atStart));
        assertEquals(counts(), FailureCauses.minus(causes.snapshot(), causes.snapshot()), "causes that did not grow are left out");
    }

    @Test
    void countsAddUpByCause() {
        assertEquals(counts("a", 3, "b", 2, "c", 4), FailureCauses.plus(counts("a", 1, "b", 2), counts("a", 2, "c", 4)));
        assertEquals(9, FailureCauses.total(counts("a", 3, "b", 2, "c", 4)));
        assertEquals(0, FailureCauses.total(counts()));
    }

    @Test
    void theTopCausesComeMostFrequentFirstWithTheRestSummedAsOther() {
        Map<String, Long> all = counts("a", 1, "b", 7, "c", 3, "d", 3, "e", 5, "f", 2, "g", 6);
        Map<String, Long> expected = new LinkedHashMap<>();
        expected.put("b", 7L);
        expected.put("g", 6L);
        expected.put("e", 5L);
        expected.put("c", 3L);   // ties in name order
        expected.put("d", 3L);
        expected.put(FailureCauses.OTHER, 3L);   // f 2 + a 1
        assertEquals(new ArrayList<>(expected.entrySet()), new ArrayList<>(FailureCauses.top(all, 5).entrySet()));
        assertEquals(counts("x", 1), FailureCauses.top(counts("x", 1), 5), "no 'other' when nothing is left out");
        assertTrue(FailureCauses.top(counts(), 5).isEmpty());
    }

    @Test
    void causesBeyondTheLimitAreCountedAsOtherSoTheMapStaysSmall() {
        FailureCauses causes = new FailureCauses();
        for (int i = 0; i < FailureCauses.MAX_CAUSES + 10; i++) {
            causes.record("cause " + i);
        }
        causes.record("cause 0");   // a cause counted by name keeps its name
        Map<String, Long> s = causes.snapshot();
        assertEquals(FailureCauses.MAX_CAUSES + 1, s.size(), s.toString());
        assertEquals(10L, s.get(FailureCauses.OTHER));
        assertEquals(2L, s.get("cause 0"));
        long total = 0;
        for (long n : s.values()) {
            total += n;
        }
        assertEquals(FailureCauses.MAX_CAUSES + 11, total, "every failure is counted");
        Map<String, Long> top = FailureCauses.top(s, 5);
        assertEquals(6, top.size());
        assertEquals(total - 2 - 4, top.get(FailureCauses.OTHER), "other: the counted-as-other ones and those not shown");
    }

    @Test
    void failuresFromManyThreadsAreAllCounted() throws Exception {
        FailureCauses causes = new FailureCauses();
        int threads = 4;
        int each = 10_000;
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> started = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            String cause = t % 2 == 0 ? "even" : "odd";
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < each; i++) {
                    causes.record(cause);
                }
            });
            th.start();
            started.add(th);
        }
        go.countDown();
        for (Thread th : started) {
            th.join();
        }
        assertEquals(counts("even", 2 * each, "odd", 2 * each), causes.snapshot());
    }
}
