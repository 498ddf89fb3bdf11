package io.poyang.benchmark.chaos;

/**
 * How much the checker may spend on one key before it answers {@link Verdict#INCONCLUSIVE} instead of running
 * on: a number of search configurations (each costs a few words of memory) and a wall-clock time. Finding the
 * failing window of a key that is not linearizable gets the same budget again.
 */
public final class CheckBudget {

    public static final long DEFAULT_MAX_CONFIGURATIONS = 5_000_000;
    public static final long DEFAULT_MAX_MILLIS = 60_000;

    private final long maxConfigurationsPerKey;
    private final long maxMillisPerKey;

    public CheckBudget(long maxConfigurationsPerKey, long maxMillisPerKey) {
        if (maxConfigurationsPerKey < 1 || maxMillisPerKey < 1) {
            throw new IllegalArgumentException("the budget must be at least one configuration and one millisecond");
        }
        this.maxConfigurationsPerKey = maxConfigurationsPerKey;
        this.maxMillisPerKey = maxMillisPerKey;
    }

    public static CheckBudget defaults() {
        return new CheckBudget(DEFAULT_MAX_CONFIGURATIONS, DEFAULT_MAX_MILLIS);
    }

    public long maxConfigurationsPerKey() {
        return maxConfigurationsPerKey;
    }

    public long maxMillisPerKey() {
        return maxMillisPerKey;
    }
}
