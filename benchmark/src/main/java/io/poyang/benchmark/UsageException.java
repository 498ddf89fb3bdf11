package io.poyang.benchmark;

/** A bad command line: the message says what is wrong and how to fix it; the command exits 2. */
public final class UsageException extends Exception {

    public UsageException(String message) {
        super(message);
    }
}
