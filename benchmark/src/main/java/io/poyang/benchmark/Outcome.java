package io.poyang.benchmark;

/** How one operation ended, as counted by the report. */
public enum Outcome {
    SUCCESS,
    /** An error other than a timeout (remote error, connection lost, flow control ...). */
    FAILED,
    /** No answer before the operation's deadline. */
    TIMEOUT
}
