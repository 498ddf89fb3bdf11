package io.poyang.benchmark;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Operations of one outcome (failed, or timed out) counted by cause ({@link FailureCause}), so the
 * report can say why they failed and not only how many did. Like {@link RunStats}' success counter
 * it is written from whichever thread completes an operation and read by the run's thread, whose
 * snapshots at the edges of the measured window differ to give the window. Only failures come
 * here, so a successful operation costs nothing more; a failure looks its cause up in a concurrent
 * map (the first of each cause adds a counter).
 */
public final class FailureCauses {

    /**
     * Distinct causes counted by name; further ones go to {@link #OTHER}. Causes are type names and
     * codes, so a run has a handful; the bound only keeps a scenario that put something unbounded
     * into its causes from growing the map without end.
     */
    static final int MAX_CAUSES = 64;
    /** The causes not shown (or not counted) by name. */
    public static final String OTHER = "other";

    private final ConcurrentHashMap<String, LongAdder> counts = new ConcurrentHashMap<>();

    public void record(String cause) {
        LongAdder counter = counts.get(cause);
        if (counter == null) {
            String name = counts.size() < MAX_CAUSES ? cause : OTHER;
            counter = counts.computeIfAbsent(name, k -> new LongAdder());
        }
        counter.increment();
    }

    /** The counts so far, by cause. */
    public Map<String, Long> snapshot() {
        Map<String, Long> m = new HashMap<>();
        for (Map.Entry<String, LongAdder> e : counts.entrySet()) {
            m.put(e.getKey(), e.getValue().sum());
        }
        return m;
    }

    /** What was counted between two snapshots, by cause; causes that did not grow are left out. */
    public static Map<String, Long> minus(Map<String, Long> later, Map<String, Long> earlier) {
        Map<String, Long> m = new HashMap<>();
        for (Map.Entry<String, Long> e : later.entrySet()) {
            long d = e.getValue() - earlier.getOrDefault(e.getKey(), 0L);
            if (d > 0) {
                m.put(e.getKey(), d);
            }
        }
        return m;
    }

    /** Two sets of counts added up, by cause. */
    public static Map<String, Long> plus(Map<String, Long> a, Map<String, Long> b) {
        Map<String, Long> m = new HashMap<>(a);
        for (Map.Entry<String, Long> e : b.entrySet()) {
            m.merge(e.getKey(), e.getValue(), Long::sum);
        }
        return m;
    }

    /** All the counts added up. */
    public static long total(Map<String, Long> counts) {
        long sum = 0;
        for (long n : counts.values()) {
            sum += n;
        }
        return sum;
    }

    /**
     * The {@code max} most frequent causes, most frequent first (ties in name order, so the report
     * is the same for the same counts), and the rest summed under {@link #OTHER}.
     */
    public static Map<String, Long> top(Map<String, Long> counts, int max) {
        List<Map.Entry<String, Long>> sorted = new ArrayList<>(counts.entrySet());
        // OTHER, if counted, is shown last with the causes left out below, never as one of the top
        sorted.removeIf(e -> e.getKey().equals(OTHER));
        sorted.sort(Comparator.comparing((Map.Entry<String, Long> e) -> e.getValue()).reversed()
                .thenComparing(Map.Entry::getKey));
        Map<String, Long> top = new LinkedHashMap<>();
        long rest = counts.getOrDefault(OTHER, 0L);
        for (Map.Entry<String, Long> e : sorted) {
            if (top.size() < max) {
                top.put(e.getKey(), e.getValue());
            } else {
                rest += e.getValue();
            }
        }
        if (rest > 0) {
            top.put(OTHER, rest);
        }
        return top;
    }
}
