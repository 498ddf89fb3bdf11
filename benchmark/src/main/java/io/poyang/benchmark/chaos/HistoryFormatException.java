package io.poyang.benchmark.chaos;

/** A history file line that cannot be read: the message names the line and says what is wrong with it. */
public final class HistoryFormatException extends Exception {

    private final long lineNumber;

    public HistoryFormatException(long lineNumber, String problem) {
        super("line " + lineNumber + ": " + problem);
        this.lineNumber = lineNumber;
    }

    /** The 1-based line number of the bad line. */
    public long lineNumber() {
        return lineNumber;
    }
}
