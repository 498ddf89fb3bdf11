package io.poyang.raft.store;

/** A log index with its term: the answer of {@link LogStore#findLastMatch}. */
public final class IndexTerm {

    private final long index;
    private final int term;

    public IndexTerm(long index, int term) {
        this.index = index;
        this.term = term;
    }

    public long getIndex() {
        return index;
    }

    public int getTerm() {
        return term;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IndexTerm && ((IndexTerm) o).index == index && ((IndexTerm) o).term == term;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(index) * 31 + term;
    }

    @Override
    public String toString() {
        return "(index " + index + ", term " + term + ")";
    }
}
