package io.poyang.benchmark.chaos;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Checks a chaos history for linearizability. Each key is an independent register (put, get, CAS, remove), and
 * a history is linearizable exactly when the history of each key is (linearizability is compositional), so the
 * history is split by key and the keys are checked one by one, in parallel on a few threads. Each key gets a
 * {@link LinearizationSearch} (Wing–Gong–Lowe with memoisation) within a {@link CheckBudget}; a key that fails
 * gets a {@link FailingWindow} from {@link FailingWindowFinder}.
 *
 * <p>Operations: acknowledged ones took effect once, between invocation and completion, with their recorded
 * result; UNKNOWN ones may have taken effect at any time after their invocation, or never (an unknown read is
 * left out: it changes nothing); FAILED ones are left out. Every key starts absent.
 */
public final class LinearizabilityChecker {

    /** The quick first search: this many configurations, plus some per operation of the key. */
    private static final long QUICK_CONFIGURATIONS = 100_000;
    private static final long QUICK_CONFIGURATIONS_PER_OPERATION = 20;

    private final CheckBudget budget;
    private final int threads;

    /** The default budget, one thread per processor. */
    public LinearizabilityChecker() {
        this(CheckBudget.defaults(), Runtime.getRuntime().availableProcessors());
    }

    public LinearizabilityChecker(CheckBudget budget, int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, got " + threads);
        }
        this.budget = budget;
        this.threads = threads;
    }

    public CheckReport check(Collection<Operation> history) {
        long start = System.nanoTime();
        Map<String, List<Operation>> byKey = new TreeMap<>();
        for (Operation op : history) {
            byKey.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op);
        }
        List<KeyVerdict> verdicts = new ArrayList<>();
        if (threads == 1 || byKey.size() <= 1) {
            for (Map.Entry<String, List<Operation>> e : byKey.entrySet()) {
                verdicts.add(checkKey(e.getKey(), e.getValue()));
            }
        } else {
            ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, byKey.size()), r -> {
                Thread t = new Thread(r, "chaos-checker");
                t.setDaemon(true);
                return t;
            });
            try {
                List<Future<KeyVerdict>> futures = new ArrayList<>();
                for (Map.Entry<String, List<Operation>> e : byKey.entrySet()) {
                    futures.add(pool.submit(() -> checkKey(e.getKey(), e.getValue())));
                }
                for (Future<KeyVerdict> f : futures) {
                    verdicts.add(f.get());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while checking the history", e);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof RuntimeException) {
                    throw (RuntimeException) cause;
                }
                if (cause instanceof Error) {
                    throw (Error) cause;
                }
                throw new IllegalStateException(cause);
            } finally {
                pool.shutdownNow();
            }
        }
        return new CheckReport(verdicts, history.size(), System.nanoTime() - start);
    }

    /**
     * Checks the operations of one key (all must be on {@code key}).
     *
     * <p>A linearizable history is found linearizable by a quick search: the depth-first search goes straight
     * down a valid order, so it needs about one configuration per operation. A history that is not linearizable
     * is where a search can take long: proving that no order works means exploring every alternative, and
     * unknown-outcome writes multiply them. So when the quick search does not succeed, the checker first looks
     * for a short window that fails on its own where the search got stuck (that proves the violation, cheaply),
     * and only then runs the search with the whole budget.
     */
    public KeyVerdict checkKey(String key, List<Operation> operations) {
        long start = System.nanoTime();
        long deadline = deadline();
        KeyHistory h = new KeyHistory(key, operations);
        long quickBudget = Math.min(budget.maxConfigurationsPerKey(), QUICK_CONFIGURATIONS
                + QUICK_CONFIGURATIONS_PER_OPERATION * h.checkedCount());
        LinearizationSearch search = new LinearizationSearch(h.whole(), quickBudget, deadline, false);
        LinearizationSearch.Outcome outcome = search.run();
        long configurations = search.configurations();
        if (outcome == LinearizationSearch.Outcome.BUDGET_EXCEEDED && !search.outOfTime()) {
            FailingWindow window = FailingWindowFinder.find(h, search.furthestNanos(), false,
                    budget.maxConfigurationsPerKey(), deadline);
            if (window != null) {
                return new KeyVerdict(h, Verdict.NOT_LINEARIZABLE, configurations, System.nanoTime() - start,
                        window, null);
            }
            if (quickBudget < budget.maxConfigurationsPerKey()) {
                search = new LinearizationSearch(h.whole(), budget.maxConfigurationsPerKey(), deadline, false);
                outcome = search.run();
                configurations += search.configurations();
            }
        }
        switch (outcome) {
            case LINEARIZABLE:
                return new KeyVerdict(h, Verdict.LINEARIZABLE, configurations, System.nanoTime() - start, null, null);
            case BUDGET_EXCEEDED: {
                String reason = search.outOfTime()
                        ? String.format(Locale.ROOT, "the time budget of %.1f s per key ran out",
                        budget.maxMillisPerKey() / 1e3)
                        : String.format(Locale.ROOT, "the budget of %,d configurations per key ran out",
                        budget.maxConfigurationsPerKey());
                return new KeyVerdict(h, Verdict.INCONCLUSIVE, configurations, System.nanoTime() - start, null,
                        reason);
            }
            default: {
                // Proven not linearizable; the window gets a fresh time budget of its own.
                FailingWindow window = FailingWindowFinder.find(h, search.furthestNanos(), true,
                        budget.maxConfigurationsPerKey(), deadline());
                return new KeyVerdict(h, Verdict.NOT_LINEARIZABLE, configurations, System.nanoTime() - start,
                        window, null);
            }
        }
    }

    private long deadline() {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(budget.maxMillisPerKey());
    }
}
