package io.poyang.raft.store;

import java.util.Arrays;

/**
 * The terms of the log, as the indexes where a new term starts. Terms never decrease along the
 * log, so a handful of boundaries describe millions of entries, and {@link LogStore#termOf} and
 * the conflict search {@link LogStore#findLastMatch} need no disk I/O.
 */
final class TermIndex {

    private long[] startIndexes = new long[16];
    private int[] terms = new int[16];
    private int count;

    void clear() {
        count = 0;
    }

    int size() {
        return count;
    }

    long startIndexAt(int i) {
        return startIndexes[i];
    }

    int termAt(int i) {
        return terms[i];
    }

    /** Records that {@code index} has {@code term}; a no-op unless the term changes there. */
    void onAppend(long index, int term) {
        if (count > 0 && terms[count - 1] == term) {
            return;
        }
        if (count > 0 && (term < terms[count - 1] || index <= startIndexes[count - 1])) {
            throw new IllegalArgumentException("term " + term + " at index " + index + " goes backwards from term "
                    + terms[count - 1] + " starting at index " + startIndexes[count - 1]);
        }
        if (count == startIndexes.length) {
            startIndexes = Arrays.copyOf(startIndexes, count * 2);
            terms = Arrays.copyOf(terms, count * 2);
        }
        startIndexes[count] = index;
        terms[count] = term;
        count++;
    }

    /** The term of {@code index}, or 0 when it is before the first boundary. The caller checks the upper bound. */
    int termOf(long index) {
        int i = lastStartingAtOrBefore(index);
        return i < 0 ? 0 : terms[i];
    }

    /** The position of the last boundary starting at or before {@code index}, or -1. */
    private int lastStartingAtOrBefore(long index) {
        int lo = 0;
        int hi = count - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (startIndexes[mid] <= index) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    /**
     * The largest index whose term is at most {@code term}, among indexes up to {@code maxIndex};
     * or {@code firstIndex - 1} when even the first is newer. Terms only grow along the log, so the
     * indexes with term &le; {@code term} are a prefix.
     */
    long lastIndexWithTermAtMost(int term, long maxIndex, long firstIndex) {
        for (int i = 0; i < count; i++) {
            if (terms[i] > term) {
                long before = Math.max(startIndexes[i], firstIndex) - 1;
                return Math.min(before, maxIndex);
            }
        }
        return maxIndex;
    }

    /** Forgets boundaries from {@code index} on (the tail from {@code index} was truncated). */
    void truncateFrom(long index) {
        while (count > 0 && startIndexes[count - 1] >= index) {
            count--;
        }
    }

    /** Forgets boundaries wholly before {@code firstIndex}, keeping the one that covers it. */
    void removeBefore(long firstIndex) {
        int keepFrom = lastStartingAtOrBefore(firstIndex);
        if (keepFrom <= 0) {
            return;
        }
        System.arraycopy(startIndexes, keepFrom, startIndexes, 0, count - keepFrom);
        System.arraycopy(terms, keepFrom, terms, 0, count - keepFrom);
        count -= keepFrom;
    }

    /** "start:term,start:term" for boundaries starting at or before {@code upToIndex}. */
    String encode(long upToIndex) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < count && startIndexes[i] <= upToIndex; i++) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(startIndexes[i]).append(':').append(terms[i]);
        }
        return sb.toString();
    }

    /** Replaces the content with what {@link #encode} wrote. */
    void decode(String s) {
        clear();
        if (s == null || s.isEmpty()) {
            return;
        }
        for (String pair : s.split(",")) {
            int colon = pair.indexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("bad term boundary '" + pair + "'");
            }
            onAppend(Long.parseLong(pair.substring(0, colon)), Integer.parseInt(pair.substring(colon + 1)));
        }
    }
}
