package io.poyang.benchmark.chaos;

import java.util.Locale;

/** What a chaos client asked of one key. Each key is a register: a value, or absent. */
public enum OpKind {
    /** Write a value, whatever was there. */
    PUT,
    /** Read the value, or learn that the key is absent. */
    GET,
    /** Compare-and-set: write a new value only if the key holds the expected value (or is absent, if that is what was expected). */
    CAS,
    /** Delete the key; the answer says whether it was there. */
    REMOVE;

    /** The name in a history file: {@code put}, {@code get}, {@code cas}, {@code remove}. */
    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The kind named {@code text} in a history file, or null. */
    static OpKind parse(String text) {
        for (OpKind k : values()) {
            if (k.text().equals(text)) {
                return k;
            }
        }
        return null;
    }
}
