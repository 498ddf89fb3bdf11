package io.poyang.server.process;

import java.util.logging.Handler;
import java.util.logging.LogRecord;

/**
 * A java.util.logging handler that makes {@code PoyangNode.stop()} throw an Error, with no hook in
 * the node for it: a node process given a logging configuration that names this handler
 * ({@code -Djava.util.logging.config.file}) runs it on the stopping thread when the node logs the
 * start of its graceful stop, and the {@link OutOfMemoryError} it throws there (as a full heap would)
 * leaves {@code stop()} the way any Error from the stop would.
 */
public final class ErrorDuringStopLogHandler extends Handler {

    /** The message of the Error thrown. */
    static final String MESSAGE = "thrown by the test's log handler during the graceful stop";
    /** What {@code PoyangNode.stop()} logs as it begins, after the ready line and the signal. */
    static final String STOP_BEGINS = ": stopping: new writes refused";

    @Override
    public void publish(LogRecord record) {
        String m = record.getMessage();
        if (m != null && m.contains(STOP_BEGINS)) {
            throw new OutOfMemoryError(MESSAGE);
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
    }
}
