package io.poyang.benchmark.chaos;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The runner's side of a history: one monotonic clock for every timestamp (nanoseconds since the recorder was
 * made), unique operation ids, and the completed operations, kept in memory for the checker and written to a
 * {@link HistoryWriter} as they complete. Client threads call it concurrently.
 *
 * <p>Use: {@code Invocation inv = recorder.invokePut(client, key, value);} just before sending the request, then
 * {@code recorder.record(inv.putOk(recorder.nowNanos()))} (or {@code inv.unknown(recorder.nowNanos(), "timeout")},
 * ...) once the answer, or the lack of one, is known.
 */
public final class HistoryRecorder implements Closeable {

    private final long originNanos = System.nanoTime();
    private final AtomicLong nextId = new AtomicLong(1);
    private final HistoryWriter writer;
    private final List<Operation> operations = new ArrayList<>();

    /** Records to {@code writer} (may be null: memory only). The recorder closes the writer. */
    public HistoryRecorder(HistoryWriter writer) {
        this.writer = writer;
    }

    /** The clock of this history: nanoseconds since the recorder was made. */
    public long nowNanos() {
        return System.nanoTime() - originNanos;
    }

    public Invocation invokePut(int clientId, String key, String value) {
        return Invocation.put(nextId.getAndIncrement(), clientId, key, value, nowNanos());
    }

    public Invocation invokeGet(int clientId, String key) {
        return Invocation.get(nextId.getAndIncrement(), clientId, key, nowNanos());
    }

    /** A compare-and-set from {@code expected} (null: absent) to {@code newValue}. */
    public Invocation invokeCas(int clientId, String key, String expected, String newValue) {
        return Invocation.cas(nextId.getAndIncrement(), clientId, key, expected, newValue, nowNanos());
    }

    public Invocation invokeRemove(int clientId, String key) {
        return Invocation.remove(nextId.getAndIncrement(), clientId, key, nowNanos());
    }

    /** Keeps a completed operation and writes its line. */
    public void record(Operation op) {
        synchronized (operations) {
            operations.add(op);
        }
        if (writer != null) {
            try {
                writer.write(op);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write the history file: " + e.getMessage(), e);
            }
        }
    }

    /** Writes the values the nodes held at the end (see {@link HistoryWriter#finalState}). */
    public void finalState(java.util.Map<String, java.util.Map<String, String>> valuesByNode) {
        if (writer != null) {
            try {
                writer.finalState(valuesByNode);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write the history file: " + e.getMessage(), e);
            }
        }
    }

    /** A {@code #} comment line in the history file, for example a fault event with its time. */
    public void note(String text) {
        if (writer != null) {
            try {
                writer.comment(text);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write the history file: " + e.getMessage(), e);
            }
        }
    }

    /** A copy of the operations recorded so far, in the order they completed. */
    public List<Operation> operations() {
        synchronized (operations) {
            return new ArrayList<>(operations);
        }
    }

    /** Flushes and closes the history file. */
    @Override
    public void close() throws IOException {
        if (writer != null) {
            writer.close();
        }
    }
}
