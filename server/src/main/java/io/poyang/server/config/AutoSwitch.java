package io.poyang.server.config;

/**
 * A node setting that is on, off, or decided at start from what the node hosts ({@code auto}).
 * The log journal and batched appends are {@code auto} by default: they share one fsync and one
 * frame per round among a node's groups, which pays when there are several of them and costs a
 * second write of every byte (the journal) when there is one.
 */
public enum AutoSwitch {
    ON, OFF, AUTO;

    /** The value in a config file: true, false or auto (any case); null when it is none of these. */
    static AutoSwitch parse(String value) {
        if (value.equalsIgnoreCase("true")) {
            return ON;
        }
        if (value.equalsIgnoreCase("false")) {
            return OFF;
        }
        if (value.equalsIgnoreCase("auto")) {
            return AUTO;
        }
        return null;
    }

    /** On or off; {@code AUTO} takes {@code autoValue}. */
    public boolean resolve(boolean autoValue) {
        return this == AUTO ? autoValue : this == ON;
    }

    /** As written in a config file. */
    @Override
    public String toString() {
        return this == ON ? "true" : this == OFF ? "false" : "auto";
    }
}
