package io.poyang.benchmark.chaos;

import java.util.Locale;

/** How an operation ended, as its client saw it. */
public enum OpStatus {
    /** Acknowledged with a result: it took effect exactly once, somewhere between its invocation and its completion. */
    OK,
    /**
     * Timed out or its connection dropped: it may have taken effect, at any time after its invocation (a
     * proposal can commit long after the client gave up), or never. Its result, if any, is not known.
     */
    UNKNOWN,
    /**
     * Rejected in a way that proves it never took effect (for example NOT_LEADER before it was proposed).
     * The checker leaves such operations out.
     */
    FAILED;

    /** The name in a history file: {@code ok}, {@code unknown}, {@code failed}. */
    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }

    static OpStatus parse(String text) {
        for (OpStatus s : values()) {
            if (s.text().equals(text)) {
                return s;
            }
        }
        return null;
    }
}
