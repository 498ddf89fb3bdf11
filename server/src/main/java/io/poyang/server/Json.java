package io.poyang.server;

import java.util.Base64;
import java.util.List;

/**
 * Builds one JSON object on one line, for the command lines' {@code --json} output and the health
 * endpoint: {@code new Json().field("key", "app.url").field("index", 12).toString()}. Strings are
 * escaped per RFC 8259; byte values that are not valid UTF-8 are written base64 under
 * {@code <name>_base64}.
 */
public final class Json {

    private final StringBuilder sb = new StringBuilder("{");
    private boolean first = true;

    private StringBuilder key(String name) {
        if (!first) {
            sb.append(',');
        }
        first = false;
        sb.append('"').append(escape(name)).append("\":");
        return sb;
    }

    public Json field(String name, String value) {
        if (value == null) {
            key(name).append("null");
        } else {
            key(name).append('"').append(escape(value)).append('"');
        }
        return this;
    }

    public Json field(String name, long value) {
        key(name).append(value);
        return this;
    }

    public Json field(String name, boolean value) {
        key(name).append(value);
        return this;
    }

    /** A value already written as JSON (a nested object or array). */
    public Json raw(String name, String json) {
        key(name).append(json);
        return this;
    }

    /** {@code name} as a string when the bytes are UTF-8 text, else {@code name_base64}. */
    public Json bytes(String name, byte[] value) {
        if (value == null) {
            return field(name, (String) null);
        }
        String text = Utf8.decodeOrNull(value);
        if (text != null) {
            return field(name, text);
        }
        return field(name + "_base64", Base64.getEncoder().encodeToString(value));
    }

    /** A JSON array of already-written JSON values. */
    public static String array(List<String> jsonValues) {
        return "[" + String.join(",", jsonValues) + "]";
    }

    @Override
    public String toString() {
        return sb.toString() + "}";
    }

    /** {@code s} escaped for the inside of a JSON string. */
    public static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length() + 8);
        appendEscaped(b, s);
        return b.toString();
    }

    /** Appends {@code s} double-quoted and escaped: a JSON string. */
    public static void appendQuoted(StringBuilder b, String s) {
        b.append('"');
        appendEscaped(b, s);
        b.append('"');
    }

    /**
     * Appends {@code s} escaped per RFC 8259: quote, backslash, newline, return and tab by their
     * short escapes; other control characters, DEL and unpaired surrogates as six-character
     * escapes (backslash, u, four hex digits), so the text survives being written to a UTF-8 file and read back (the chaos history depends on it).
     */
    private static void appendEscaped(StringBuilder b, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    b.append("\\\"");
                    break;
                case '\\':
                    b.append("\\\\");
                    break;
                case '\n':
                    b.append("\\n");
                    break;
                case '\r':
                    b.append("\\r");
                    break;
                case '\t':
                    b.append("\\t");
                    break;
                default:
                    boolean paired = Character.isHighSurrogate(c) && i + 1 < s.length()
                            && Character.isLowSurrogate(s.charAt(i + 1));
                    if (c < 0x20 || c == 0x7f || (Character.isSurrogate(c) && !paired)) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else if (paired) {
                        b.append(c).append(s.charAt(++i));
                    } else {
                        b.append(c);
                    }
                    break;
            }
        }
    }

    /** Strict UTF-8 decoding. */
    static final class Utf8 {
        private Utf8() {
        }

        static String decodeOrNull(byte[] b) {
            try {
                return java.nio.charset.StandardCharsets.UTF_8.newDecoder()
                        .decode(java.nio.ByteBuffer.wrap(b)).toString();
            } catch (java.nio.charset.CharacterCodingException e) {
                return null;
            }
        }
    }
}
