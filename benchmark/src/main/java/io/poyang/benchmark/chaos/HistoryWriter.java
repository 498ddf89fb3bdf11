package io.poyang.benchmark.chaos;

import java.io.BufferedWriter;
import java.io.Closeable;
import java.io.Flushable;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes a history file, one {@link Operation} per line in UTF-8, plus {@code #} comment lines (the run's
 * parameters, fault events). Safe to call from many client threads at once: each line is written whole under a
 * lock. Lines are buffered; {@link #close()} (or {@link #flush()}) writes them all out, so a normal end loses
 * nothing.
 */
public final class HistoryWriter implements Closeable, Flushable {

    /** The first line of every history file this writer starts. */
    public static final String HEADER = "# poyang chaos history v1";

    private final Writer out;
    private boolean closed;
    private long operations;

    /** Writes to {@code out}, starting with the {@link #HEADER} line. The writer owns {@code out} and closes it. */
    public HistoryWriter(Writer out) throws IOException {
        this.out = out instanceof BufferedWriter ? out : new BufferedWriter(out, 1 << 16);
        this.out.write(HEADER);
        this.out.write('\n');
    }

    /** Creates (or replaces) {@code file}. */
    public static HistoryWriter create(Path file) throws IOException {
        return new HistoryWriter(new OutputStreamWriter(Files.newOutputStream(file), StandardCharsets.UTF_8));
    }

    public synchronized void write(Operation op) throws IOException {
        ensureOpen();
        out.write(HistoryLine.format(op));
        out.write('\n');
        operations++;
    }

    /** A {@code # text} line; line breaks in {@code text} are kept inside the comment as \n. */
    public synchronized void comment(String text) throws IOException {
        ensureOpen();
        out.write("# ");
        out.write(text.replace("\r", "\\r").replace("\n", "\\n"));
        out.write('\n');
    }

    /**
     * The values every node held at the end of the run (node → key → value; a key a node does not list is
     * absent there), so {@code ./poyang chaos --check} checks the final state as the run did.
     */
    public synchronized void finalState(java.util.Map<String, java.util.Map<String, String>> valuesByNode)
            throws IOException {
        ensureOpen();
        for (java.util.Map.Entry<String, java.util.Map<String, String>> node
                : new java.util.TreeMap<>(valuesByNode).entrySet()) {
            out.write(HistoryLine.formatFinal(node.getKey(), null, null));
            out.write('\n');
            for (java.util.Map.Entry<String, String> kv : new java.util.TreeMap<>(node.getValue()).entrySet()) {
                if (kv.getValue() != null) {
                    out.write(HistoryLine.formatFinal(node.getKey(), kv.getKey(), kv.getValue()));
                    out.write('\n');
                }
            }
        }
    }

    /** Operations written so far. */
    public synchronized long operations() {
        return operations;
    }

    @Override
    public synchronized void flush() throws IOException {
        ensureOpen();
        out.flush();
    }

    @Override
    public synchronized void close() throws IOException {
        if (!closed) {
            closed = true;
            out.close();
        }
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("the history writer is closed");
        }
    }
}
