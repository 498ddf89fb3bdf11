package io.poyang.dtkv;

import io.poyang.raft.client.RaftCommands;

/**
 * The key rules and size limits of DtKV, checked the same way by the client (before sending) and
 * by the state machine (before applying).
 *
 * <p>A key is a path of segments joined by {@code '.'}: {@code app.db.url}. Every segment is
 * non-empty (no leading, trailing or doubled dot) and holds no ASCII control character (U+0000 to
 * U+001F, U+007F); anything else, any Unicode included, is allowed. A key is at most
 * {@link #MAX_KEY_BYTES} bytes of UTF-8 and at most {@link #MAX_DEPTH} segments. The empty key
 * {@code ""} names the root directory, which exists always and may be listed and watched, but not
 * written.
 */
public final class KvKeys {

    /** Longest key, in bytes of UTF-8. */
    public static final int MAX_KEY_BYTES = 8192;
    /** Most segments in a key ({@code a.b.c} has 3). */
    public static final int MAX_DEPTH = 64;
    /** Largest value, in bytes. */
    public static final int MAX_VALUE_BYTES = 4 * 1024 * 1024;
    /** Most keys in one batch operation. */
    public static final int MAX_BATCH_KEYS = 10_000;
    /**
     * Largest request, in bytes of its encoding ({@link KvReq#encodedSize()}): a write is one raft
     * entry, which must fit one frame between the nodes ({@link RaftCommands#MAX_WRITE_BODY_BYTES},
     * 8 MiB less 64 KiB). Only a batch, or a compareAndSet of two large values, comes near it.
     */
    public static final int MAX_REQUEST_BYTES = RaftCommands.MAX_WRITE_BODY_BYTES;
    /**
     * Largest answer of a whole-directory list or a batchGet, in bytes of its nodes' encodings: the
     * same as a request, so it fits the client's 8 MiB frame with room to spare. Over it the read
     * fails with {@link KvCode#ANSWER_TOO_LARGE}.
     */
    public static final int MAX_ANSWER_BYTES = MAX_REQUEST_BYTES;
    /**
     * A page of a list ({@link KvReq#listPage}) stops before the child that would take its nodes
     * over this many bytes; it always holds at least one child (one node, at most a 4 MiB value and
     * an 8 KiB key, fits the frame on its own).
     */
    public static final int MAX_LIST_PAGE_BYTES = 4 << 20;
    /**
     * The most children a page of a list holds when its request gives no limit: the page is then
     * the first of them by key, picked with a heap of this size, so a page of a large directory
     * does not sort all of it (it does visit every child: a page costs time in proportion to the
     * directory's size).
     */
    public static final int DEFAULT_LIST_PAGE_NODES = 10_000;
    /** Longest TTL or lock lease: 30 days. */
    public static final long MAX_TTL_MILLIS = 30L * 24 * 3600 * 1000;
    /** Longest tryLock wait: 1 day. */
    public static final long MAX_WAIT_MILLIS = 24L * 3600 * 1000;
    public static final char SEPARATOR = '.';
    /** The root directory's key. */
    public static final String ROOT = "";

    private KvKeys() {
    }

    /**
     * Checks a key that names a node (not the root) and returns {@link KvCode#SUCCESS},
     * {@link KvCode#INVALID_KEY} or {@link KvCode#KEY_TOO_LONG}. Allocates nothing.
     */
    public static KvCode check(String key) {
        if (key == null || key.isEmpty()) {
            return KvCode.INVALID_KEY;
        }
        int n = key.length();
        // A UTF-16 unit encodes as at most 3 UTF-8 bytes (a surrogate pair as 4 for 2 units), so
        // only keys past a third of the limit need their exact UTF-8 length.
        if (n > MAX_KEY_BYTES || n > MAX_KEY_BYTES / 3 && utf8Length(key) > MAX_KEY_BYTES) {
            return KvCode.KEY_TOO_LONG;
        }
        int segments = 1;
        char prev = SEPARATOR; // a leading dot is an empty first segment
        for (int i = 0; i < n; i++) {
            char c = key.charAt(i);
            if (c == SEPARATOR) {
                if (prev == SEPARATOR) {
                    return KvCode.INVALID_KEY;
                }
                segments++;
            } else if (c < 0x20 || c == 0x7F) {
                return KvCode.INVALID_KEY;
            } else if (Character.isSurrogate(c)) {
                // UTF-8 has no form for half a pair: it would go on the wire as '?', and two keys would be one
                if (!Character.isHighSurrogate(c) || i + 1 == n || !Character.isLowSurrogate(key.charAt(i + 1))) {
                    return KvCode.INVALID_KEY;
                }
                i++;
                c = key.charAt(i);
            }
            prev = c;
        }
        if (prev == SEPARATOR || segments > MAX_DEPTH) {
            return KvCode.INVALID_KEY;
        }
        return KvCode.SUCCESS;
    }

    /** Like {@link #check} but also accepts the root ({@code ""}): for list and watch. */
    public static KvCode checkDirOrRoot(String key) {
        return key != null && key.isEmpty() ? KvCode.SUCCESS : check(key);
    }

    /** Throws {@link KvException} when {@link #check} fails, with a message saying which rule. */
    public static void validate(String key) {
        KvCode c = check(key);
        if (c != KvCode.SUCCESS) {
            throw new KvException(c, key, explain(c, key));
        }
    }

    /** A message saying which rule the key breaks. */
    public static String explain(KvCode code, String key) {
        if (code == KvCode.KEY_TOO_LONG) {
            return "the key has " + utf8Length(key) + " bytes of UTF-8; at most " + MAX_KEY_BYTES + " are allowed";
        }
        if (code != KvCode.INVALID_KEY) {
            return code.meaning();
        }
        if (key == null || key.isEmpty()) {
            return "the key is empty; name a node like app.db.url";
        }
        if (key.charAt(0) == SEPARATOR || key.charAt(key.length() - 1) == SEPARATOR) {
            return "a key must not start or end with '.'";
        }
        if (key.contains("..")) {
            return "a key must not have an empty segment ('..')";
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x20 || c == 0x7F) {
                return "a key must not hold control characters (found U+" + String.format("%04X", (int) c)
                        + " at " + i + ")";
            }
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
                    i++;
                } else {
                    return "a key must be valid Unicode (found half of a UTF-16 surrogate pair, U+"
                            + String.format("%04X", (int) c) + ", at " + i + ")";
                }
            }
        }
        return "a key has at most " + MAX_DEPTH + " segments";
    }

    /** Checks a value's size: {@link KvCode#SUCCESS} or {@link KvCode#VALUE_TOO_LARGE}. Null counts as empty. */
    public static KvCode checkValue(byte[] value) {
        return value != null && value.length > MAX_VALUE_BYTES ? KvCode.VALUE_TOO_LARGE : KvCode.SUCCESS;
    }

    /**
     * Checks a request's encoded size against {@link #MAX_REQUEST_BYTES}: {@link KvCode#SUCCESS}, else
     * {@link KvCode#BATCH_TOO_LARGE} for a batch and {@link KvCode#VALUE_TOO_LARGE} for a single key
     * (a compareAndSet whose expected and new values are both large).
     */
    public static KvCode checkRequestSize(KvOp op, int requestBytes) {
        if (requestBytes <= MAX_REQUEST_BYTES) {
            return KvCode.SUCCESS;
        }
        return op == KvOp.BATCH_PUT || op == KvOp.BATCH_REMOVE || op == KvOp.BATCH_GET
                ? KvCode.BATCH_TOO_LARGE : KvCode.VALUE_TOO_LARGE;
    }

    /** Why {@link #checkRequestSize} failed, and what to do. */
    public static String explainRequestSize(KvOp op, int requestBytes) {
        String advice = op == KvOp.COMPARE_AND_SET ? "the expected and new values together are too large; compare a"
                + " smaller value (a version or hash kept next to the large one)" : "split the batch";
        return "the request takes " + requestBytes + " bytes; at most " + MAX_REQUEST_BYTES + " are allowed (a write"
                + " is one raft entry, which must fit one 8 MiB frame between the nodes): " + advice;
    }

    /** Checks a TTL or lease: {@link KvCode#SUCCESS} or {@link KvCode#INVALID_TTL}. */
    public static KvCode checkTtl(long ttlMillis) {
        return ttlMillis >= 1 && ttlMillis <= MAX_TTL_MILLIS ? KvCode.SUCCESS : KvCode.INVALID_TTL;
    }

    /** Checks a tryLock wait time: {@link KvCode#SUCCESS} or {@link KvCode#INVALID_TTL}. */
    public static KvCode checkWait(long waitMillis) {
        return waitMillis >= 0 && waitMillis <= MAX_WAIT_MILLIS ? KvCode.SUCCESS : KvCode.INVALID_TTL;
    }

    /** The parent's key: {@code "a.b"} for {@code "a.b.c"}, the root {@code ""} for {@code "a"}. */
    public static String parentOf(String key) {
        int dot = key.lastIndexOf(SEPARATOR);
        return dot < 0 ? ROOT : key.substring(0, dot);
    }

    /** The last segment: {@code "c"} for {@code "a.b.c"}. */
    public static String nameOf(String key) {
        return key.substring(key.lastIndexOf(SEPARATOR) + 1);
    }

    /** Whether {@code key} lies strictly inside directory {@code dir} (any depth); everything is inside the root. */
    public static boolean isUnder(String key, String dir) {
        if (dir.isEmpty()) {
            return !key.isEmpty();
        }
        return key.length() > dir.length() && key.charAt(dir.length()) == SEPARATOR && key.startsWith(dir);
    }

    /** Bytes of the string in UTF-8 (unpaired surrogates count as the 1-byte '?' Java writes for them). */
    public static int utf8Length(String s) {
        int n = s.length();
        int bytes = 0;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                bytes++;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                bytes += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                bytes++;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }
}
