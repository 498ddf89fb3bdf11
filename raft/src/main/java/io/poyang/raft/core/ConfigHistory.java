package io.poyang.raft.core;

import java.util.ArrayList;

/**
 * The configurations in a group's log: the one in force at the latest snapshot (or the initial
 * one) and one per config-change entry after it. A configuration takes effect as soon as its entry
 * is in the log (appended, not committed — raft's rule for membership changes), so when a
 * follower's tail is truncated the configuration goes back to the last one still in the log, and a
 * snapshot records the configuration as of its own index. Dispatcher thread.
 */
final class ConfigHistory {

    private final ArrayList<Long> indexes = new ArrayList<>();
    private final ArrayList<Members> configs = new ArrayList<>();

    /** Starts over from {@code base}, in force at {@code index} (a snapshot's index, or 0). */
    void reset(long index, Members base) {
        indexes.clear();
        configs.clear();
        indexes.add(index);
        configs.add(base);
    }

    /** A config-change entry at {@code index} (above every one held). */
    void add(long index, Members m) {
        indexes.add(index);
        configs.add(m);
    }

    /** The configuration in force: the latest entry's. */
    Members latest() {
        return configs.get(configs.size() - 1);
    }

    /** The index of the latest config-change entry (or of the base). */
    long latestIndex() {
        return indexes.get(indexes.size() - 1);
    }

    /** The configuration in force at {@code index}: that of the last entry at or below it. */
    Members at(long index) {
        for (int i = indexes.size() - 1; i > 0; i--) {
            if (indexes.get(i) <= index) {
                return configs.get(i);
            }
        }
        return configs.get(0);
    }

    /** The log lost {@code index} and everything after it; returns the configuration now in force. */
    Members truncateFrom(long index) {
        while (indexes.size() > 1 && indexes.get(indexes.size() - 1) >= index) {
            indexes.remove(indexes.size() - 1);
            configs.remove(configs.size() - 1);
        }
        return latest();
    }

    /**
     * Forgets the entries before the one in force at {@code index}, a snapshot's index: nothing asks
     * for a configuration below it any more (snapshots are captured at the applied index, and the
     * commit index only grows; truncation stays above the commit index). The entries kept keep their
     * own indexes, so {@link #latestIndex} still names the latest config-change entry.
     */
    void compactTo(long index) {
        int inForce = 0;
        while (inForce + 1 < indexes.size() && indexes.get(inForce + 1) <= index) {
            inForce++;
        }
        indexes.subList(0, inForce).clear();
        configs.subList(0, inForce).clear();
    }

    /** How many configurations are held (the base and the entries after it). */
    int size() {
        return indexes.size();
    }

    @Override
    public String toString() {
        return "ConfigHistory" + indexes + configs;
    }
}
