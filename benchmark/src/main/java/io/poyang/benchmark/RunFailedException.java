package io.poyang.benchmark;

/** The run cannot go on (a server it started has died): the message says why, without a stack trace. */
public final class RunFailedException extends Exception {

    public RunFailedException(String message) {
        super(message);
    }
}
