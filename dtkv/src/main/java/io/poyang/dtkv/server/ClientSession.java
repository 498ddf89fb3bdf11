package io.poyang.dtkv.server;

import io.poyang.dtkv.KvResp;

import java.util.Arrays;

/**
 * The exactly-once state of one client: which request seqs were applied and their answers, for
 * every seq the client has not acknowledged yet (at or above {@link #ackedBelow}). Answers live in
 * a ring indexed by seq, so recording and finding one allocates nothing; the ring doubles up to
 * the configured window when a client has more requests outstanding.
 */
final class ClientSession {

    final long most;
    final long least;
    long ackedBelow;
    long lastActiveMillis;
    private KvResp[] results;
    private long[] seqs;

    ClientSession(long most, long least, long ackedBelow, int initialCapacity) {
        this.most = most;
        this.least = least;
        this.ackedBelow = Math.max(1, ackedBelow);
        this.results = new KvResp[initialCapacity];
        this.seqs = new long[initialCapacity];
    }

    /** The answer recorded for {@code seq}, or null when it was not applied. */
    KvResp resultOf(long seq) {
        int slot = (int) (seq & (results.length - 1));
        return seqs[slot] == seq ? results[slot] : null;
    }

    /**
     * Forgets answers below {@code newAckedBelow}. Only moves forward.
     */
    void ack(long newAckedBelow) {
        if (newAckedBelow <= ackedBelow) {
            return;
        }
        long span = newAckedBelow - ackedBelow;
        if (span >= results.length) {
            Arrays.fill(results, null);
            Arrays.fill(seqs, 0);
        } else {
            for (long s = ackedBelow; s < newAckedBelow; s++) {
                int slot = (int) (s & (results.length - 1));
                if (seqs[slot] == s) {
                    seqs[slot] = 0;
                    results[slot] = null;
                }
            }
        }
        ackedBelow = newAckedBelow;
    }

    /** Whether {@code seq} fits the window (growing the ring up to {@code maxWindow} if needed). */
    boolean fits(long seq, int maxWindow) {
        long span = seq - ackedBelow + 1;
        // The limit before the ring's size: the ring is a power of two (past a limit that is not one)
        // and keeps its size after a burst, while a replica restored from a snapshot has a smaller
        // one; the answer must depend on the replicated state only, or replicas diverge.
        if (span > maxWindow) {
            return false;
        }
        if (span <= results.length) {
            return true;
        }
        int cap = results.length;
        while (cap < span) {
            cap <<= 1;
        }
        KvResp[] r = new KvResp[cap];
        long[] s = new long[cap];
        for (int i = 0; i < results.length; i++) {
            if (seqs[i] != 0) {
                int slot = (int) (seqs[i] & (cap - 1));
                r[slot] = results[i];
                s[slot] = seqs[i];
            }
        }
        results = r;
        seqs = s;
        return true;
    }

    /** Records the answer of an applied seq; the caller checked {@link #fits}. */
    void record(long seq, KvResp resp) {
        int slot = (int) (seq & (results.length - 1));
        seqs[slot] = seq;
        results[slot] = resp;
    }

    /** Visits recorded answers in seq order. */
    void forEachResult(ResultVisitor v) {
        long[] sorted = new long[results.length];
        int n = 0;
        for (long s : seqs) {
            if (s != 0) {
                sorted[n++] = s;
            }
        }
        Arrays.sort(sorted, 0, n);
        for (int i = 0; i < n; i++) {
            v.visit(sorted[i], resultOf(sorted[i]));
        }
    }

    interface ResultVisitor {
        void visit(long seq, KvResp resp);
    }

    int resultCount() {
        int n = 0;
        for (long s : seqs) {
            if (s != 0) {
                n++;
            }
        }
        return n;
    }
}
