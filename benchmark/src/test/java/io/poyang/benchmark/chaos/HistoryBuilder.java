package io.poyang.benchmark.chaos;

import java.util.ArrayList;
import java.util.List;

/** Hand-made histories for tests: operations on one key (changeable), ids in the order they are added. */
final class HistoryBuilder {

    private final List<Operation> ops = new ArrayList<>();
    private long nextId = 1;
    private String key = "k";

    HistoryBuilder key(String key) {
        this.key = key;
        return this;
    }

    HistoryBuilder put(int client, String value, long invoke, long complete) {
        ops.add(Operation.put(nextId++, client, key, value, invoke, complete));
        return this;
    }

    /** A get that read {@code value} (null: absent). */
    HistoryBuilder get(int client, String value, long invoke, long complete) {
        ops.add(Operation.get(nextId++, client, key, value, invoke, complete));
        return this;
    }

    HistoryBuilder cas(int client, String expected, String newValue, boolean swapped, long invoke, long complete) {
        ops.add(Operation.cas(nextId++, client, key, expected, newValue, swapped, invoke, complete));
        return this;
    }

    HistoryBuilder remove(int client, boolean removed, long invoke, long complete) {
        ops.add(Operation.remove(nextId++, client, key, removed, invoke, complete));
        return this;
    }

    HistoryBuilder unknownPut(int client, String value, long invoke, long gaveUp) {
        ops.add(Invocation.put(nextId++, client, key, value, invoke).unknown(gaveUp, "timeout"));
        return this;
    }

    HistoryBuilder unknownGet(int client, long invoke, long gaveUp) {
        ops.add(Invocation.get(nextId++, client, key, invoke).unknown(gaveUp, "connection dropped"));
        return this;
    }

    HistoryBuilder unknownCas(int client, String expected, String newValue, long invoke, long gaveUp) {
        ops.add(Invocation.cas(nextId++, client, key, expected, newValue, invoke).unknown(gaveUp, "timeout"));
        return this;
    }

    HistoryBuilder unknownRemove(int client, long invoke, long gaveUp) {
        ops.add(Invocation.remove(nextId++, client, key, invoke).unknown(gaveUp, "timeout"));
        return this;
    }

    HistoryBuilder failedPut(int client, String value, long invoke, long complete) {
        ops.add(Invocation.put(nextId++, client, key, value, invoke).failed(complete, "NOT_LEADER"));
        return this;
    }

    /** The id the next operation will get. */
    long nextId() {
        return nextId;
    }

    List<Operation> build() {
        return new ArrayList<>(ops);
    }
}
