package io.poyang.raft.sm;

import io.poyang.codec.Encodable;

import java.util.Arrays;

/**
 * Committed entries handed to {@link StateMachine#apply}, in index order, with a slot per entry
 * for its result. The object is reused from call to call: read it during the call only.
 */
public final class ApplyBatch {

    private int size;
    private long[] indexes = new long[16];
    private int[] terms = new int[16];
    private int[] bizTypes = new int[16];
    private long[] timestamps = new long[16];
    private Encodable[] bodies = new Encodable[16];
    private Encodable[] results = new Encodable[16];
    private int[] errorCodes = new int[16];
    private String[] errorMessages = new String[16];
    private boolean resultsWanted;

    /** Number of entries. */
    public int size() {
        return size;
    }

    /** The log index of entry {@code i}. */
    public long index(int i) {
        check(i);
        return indexes[i];
    }

    /** The term of entry {@code i}. */
    public int term(int i) {
        check(i);
        return terms[i];
    }

    /** What the body of entry {@code i} is, as its writer said. */
    public int bizType(int i) {
        check(i);
        return bizTypes[i];
    }

    /** The leader's wall clock when it created entry {@code i}, in ms since the epoch (the same on every node). */
    public long timestampMillis(int i) {
        check(i);
        return timestamps[i];
    }

    /** The decoded body of entry {@code i} (see {@link StateMachine#newBodyDecoder}); null for an empty body. */
    public Encodable body(int i) {
        check(i);
        return bodies[i];
    }

    /**
     * True on the leader, where clients wait for results; false on followers, where a state machine
     * may skip building them.
     */
    public boolean resultsWanted() {
        return resultsWanted;
    }

    /** Sets what the writer of entry {@code i} gets back (null: an empty response). */
    public void setResult(int i, Encodable result) {
        check(i);
        results[i] = result;
    }

    /**
     * Refuses entry {@code i} for a business reason: its writer gets a BIZ_ERROR with
     * {@code bizCode} (non-zero) and {@code message}. The entry still counts as applied.
     */
    public void setError(int i, int bizCode, String message) {
        check(i);
        if (bizCode == 0) {
            throw new IllegalArgumentException("a business error needs a non-zero code");
        }
        errorCodes[i] = bizCode;
        errorMessages[i] = message;
    }

    // ---------------------------------------------------------------- for raft

    /** Empties the batch for reuse. */
    public void clear(boolean wantResults) {
        for (int i = 0; i < size; i++) {
            bodies[i] = null;
            results[i] = null;
            errorCodes[i] = 0;
            errorMessages[i] = null;
        }
        size = 0;
        resultsWanted = wantResults;
    }

    /** Adds an entry; returns its slot. */
    public int add(long index, int term, int bizType, long timestampMillis, Encodable body) {
        if (size == indexes.length) {
            int n = size * 2;
            indexes = Arrays.copyOf(indexes, n);
            terms = Arrays.copyOf(terms, n);
            bizTypes = Arrays.copyOf(bizTypes, n);
            timestamps = Arrays.copyOf(timestamps, n);
            bodies = Arrays.copyOf(bodies, n);
            results = Arrays.copyOf(results, n);
            errorCodes = Arrays.copyOf(errorCodes, n);
            errorMessages = Arrays.copyOf(errorMessages, n);
        }
        int i = size++;
        indexes[i] = index;
        terms[i] = term;
        bizTypes[i] = bizType;
        timestamps[i] = timestampMillis;
        bodies[i] = body;
        return i;
    }

    /** The result set for entry {@code i}, or null. */
    public Encodable result(int i) {
        return results[i];
    }

    /** The business error code set for entry {@code i}, or 0. */
    public int errorCode(int i) {
        return errorCodes[i];
    }

    public String errorMessage(int i) {
        return errorMessages[i];
    }

    private void check(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException("entry " + i + " of a batch of " + size);
        }
    }
}
