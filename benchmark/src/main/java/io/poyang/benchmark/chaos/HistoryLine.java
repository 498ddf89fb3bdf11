package io.poyang.benchmark.chaos;

import io.poyang.server.Json;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one-line text form of an {@link Operation} in a history file (see benchmark/README.md, "History file"):
 * space-separated {@code name=value} fields in a fixed order, strings always double-quoted with backslash
 * escapes so any key or value (spaces, quotes, newlines, the word "absent") survives the round trip, and the
 * bare word {@code absent} for a missing value.
 *
 * <pre>
 * id=7 client=2 op=cas key="k3" expect="c1-4" value="c2-7" invoke=1200 complete=2500 status=ok result=true
 * </pre>
 */
final class HistoryLine {

    static final String ABSENT = "absent";
    static final String FIELDS = "id, client, op, key, expect, value, invoke, complete, status, result, error";

    private HistoryLine() {
    }

    static String format(Operation op) {
        StringBuilder b = new StringBuilder(96);
        b.append("id=").append(op.id())
                .append(" client=").append(op.clientId())
                .append(" op=").append(op.kind().text())
                .append(" key=");
        Json.appendQuoted(b, op.key());
        if (op.kind() == OpKind.CAS) {
            b.append(" expect=");
            appendValue(b, op.expected());
        }
        if (op.value() != null) {
            b.append(" value=");
            Json.appendQuoted(b, op.value());
        }
        b.append(" invoke=").append(op.invokeNanos())
                .append(" complete=").append(op.completeNanos())
                .append(" status=").append(op.status().text());
        if (op.status() == OpStatus.OK) {
            b.append(" result=");
            switch (op.kind()) {
                case PUT:
                    b.append("ok");
                    break;
                case GET:
                    appendValue(b, op.readValue());
                    break;
                case CAS:
                    b.append(op.succeeded() ? "true" : "false");
                    break;
                default:
                    b.append(op.succeeded() ? "removed" : "not-found");
                    break;
            }
        } else if (op.error() != null) {
            b.append(" error=");
            Json.appendQuoted(b, op.error());
        }
        return b.toString();
    }

    /** {@code s} double-quoted and escaped, as in a history file; {@code absent} for null. */
    static String quote(String s) {
        StringBuilder b = new StringBuilder(s == null ? 6 : s.length() + 2);
        appendValue(b, s);
        return b.toString();
    }

    private static void appendValue(StringBuilder b, String s) {
        if (s == null) {
            b.append(ABSENT);
        } else {
            Json.appendQuoted(b, s);
        }
    }

    /**
     * A line of the final state the runner read from the nodes after the run: {@code node="n1"} declares a
     * node, {@code node="n1" key="k" value="v"} is a key the node holds (a key a node does not list is absent
     * there). {@code key} null: the declaration.
     */
    static String formatFinal(String node, String key, String value) {
        StringBuilder b = new StringBuilder(64).append("node=");
        Json.appendQuoted(b, node);
        if (key != null) {
            b.append(" key=");
            Json.appendQuoted(b, key);
            b.append(" value=");
            Json.appendQuoted(b, value);
        }
        return b.toString();
    }

    /** Whether {@code line} (not blank, not a comment) is a final-state line rather than an operation. */
    static boolean isFinal(String line) {
        return line.trim().startsWith("node=");
    }

    /** Parses a final-state line into {node, key, value}; key and value are null for a declaration. */
    static String[] parseFinal(String line, long lineNumber) throws HistoryFormatException {
        Map<String, Token> fields = tokenize(line, lineNumber);
        String node = string(fields, "node", lineNumber);
        if (!fields.containsKey("key")) {
            forbid(fields, "value", "a node declaration (no key=)", lineNumber);
            checkNoneLeft(fields, lineNumber);
            return new String[]{node, null, null};
        }
        String key = string(fields, "key", lineNumber);
        String value = string(fields, "value", lineNumber);
        checkNoneLeft(fields, lineNumber);
        return new String[]{node, key, value};
    }

    private static void checkNoneLeft(Map<String, Token> fields, long lineNumber) throws HistoryFormatException {
        if (!fields.isEmpty()) {
            throw new HistoryFormatException(lineNumber, "unexpected field '" + fields.keySet().iterator().next()
                    + "' in a final-state line (fields: node, key, value)");
        }
    }

    /** Parses one operation line (not a comment or blank line). */
    static Operation parse(String line, long lineNumber) throws HistoryFormatException {
        Map<String, Token> fields = tokenize(line, lineNumber);
        long id = number(fields, "id", lineNumber);
        long client = number(fields, "client", lineNumber);
        if (client < Integer.MIN_VALUE || client > Integer.MAX_VALUE) {
            throw new HistoryFormatException(lineNumber, "client=" + client + " is out of range of an int");
        }
        String opText = bare(fields, "op", lineNumber);
        OpKind kind = OpKind.parse(opText);
        if (kind == null) {
            throw new HistoryFormatException(lineNumber, "op=" + opText + " is not one of put, get, cas, remove");
        }
        String key = string(fields, "key", lineNumber);
        long invoke = number(fields, "invoke", lineNumber);
        long complete = number(fields, "complete", lineNumber);
        if (complete < invoke) {
            throw new HistoryFormatException(lineNumber, "complete=" + complete + " is before invoke=" + invoke);
        }
        String statusText = bare(fields, "status", lineNumber);
        OpStatus status = OpStatus.parse(statusText);
        if (status == null) {
            throw new HistoryFormatException(lineNumber, "status=" + statusText + " is not one of ok, unknown, failed");
        }

        Invocation inv;
        switch (kind) {
            case PUT:
                inv = Invocation.put(id, (int) client, key, string(fields, "value", lineNumber), invoke);
                forbid(fields, "expect", "op=put", lineNumber);
                break;
            case CAS:
                inv = Invocation.cas(id, (int) client, key, valueOrAbsent(fields, "expect", lineNumber),
                        string(fields, "value", lineNumber), invoke);
                break;
            case GET:
                inv = Invocation.get(id, (int) client, key, invoke);
                forbid(fields, "expect", "op=get", lineNumber);
                forbid(fields, "value", "op=get (its read value goes in result=)", lineNumber);
                break;
            default:
                inv = Invocation.remove(id, (int) client, key, invoke);
                forbid(fields, "expect", "op=remove", lineNumber);
                forbid(fields, "value", "op=remove", lineNumber);
                break;
        }

        Operation op;
        if (status == OpStatus.OK) {
            forbid(fields, "error", "status=ok", lineNumber);
            Token result = fields.remove("result");
            if (result == null) {
                throw new HistoryFormatException(lineNumber, "status=ok needs result= ("
                        + expectedResults(kind) + ")");
            }
            op = withResult(inv, complete, result, lineNumber);
        } else {
            forbid(fields, "result", "status=" + status.text() + " (only status=ok has a result)", lineNumber);
            Token error = fields.remove("error");
            String reason = null;
            if (error != null) {
                if (!error.quoted) {
                    throw new HistoryFormatException(lineNumber, "error= takes a double-quoted string, got " + error.text);
                }
                reason = error.text;
            }
            op = status == OpStatus.UNKNOWN ? inv.unknown(complete, reason) : inv.failed(complete, reason);
        }
        if (!fields.isEmpty()) {
            throw new HistoryFormatException(lineNumber, "unexpected field '" + fields.keySet().iterator().next()
                    + "' (fields: " + FIELDS + ")");
        }
        return op;
    }

    private static Operation withResult(Invocation inv, long complete, Token result, long lineNumber)
            throws HistoryFormatException {
        switch (inv.kind()) {
            case PUT:
                if (!result.quoted && result.text.equals("ok")) {
                    return inv.putOk(complete);
                }
                break;
            case GET:
                if (result.quoted) {
                    return inv.getOk(complete, result.text);
                }
                if (result.text.equals(ABSENT)) {
                    return inv.getOk(complete, null);
                }
                break;
            case CAS:
                if (!result.quoted && (result.text.equals("true") || result.text.equals("false"))) {
                    return inv.casOk(complete, result.text.equals("true"));
                }
                break;
            default:
                if (!result.quoted && (result.text.equals("removed") || result.text.equals("not-found"))) {
                    return inv.removeOk(complete, result.text.equals("removed"));
                }
                break;
        }
        throw new HistoryFormatException(lineNumber, "result=" + (result.quoted ? quote(result.text) : result.text)
                + " does not fit op=" + inv.kind().text() + " (" + expectedResults(inv.kind()) + ")");
    }

    private static String expectedResults(OpKind kind) {
        switch (kind) {
            case PUT:
                return "a put's result is ok";
            case GET:
                return "a get's result is a \"quoted value\" or absent";
            case CAS:
                return "a cas's result is true or false";
            default:
                return "a remove's result is removed or not-found";
        }
    }

    /** A field's raw text and whether it was written as a quoted string. */
    private static final class Token {
        final String text;
        final boolean quoted;

        Token(String text, boolean quoted) {
            this.text = text;
            this.quoted = quoted;
        }
    }

    private static Map<String, Token> tokenize(String line, long lineNumber) throws HistoryFormatException {
        Map<String, Token> fields = new LinkedHashMap<>();
        int i = 0;
        int n = line.length();
        while (true) {
            while (i < n && (line.charAt(i) == ' ' || line.charAt(i) == '\t')) {
                i++;
            }
            if (i >= n) {
                return fields;
            }
            int nameStart = i;
            while (i < n && line.charAt(i) != '=' && line.charAt(i) != ' ' && line.charAt(i) != '\t') {
                i++;
            }
            String name = line.substring(nameStart, i);
            if (i >= n || line.charAt(i) != '=') {
                throw new HistoryFormatException(lineNumber, "expected name=value at column " + (nameStart + 1)
                        + ", got '" + name + "'");
            }
            if (!isFieldName(name)) {
                throw new HistoryFormatException(lineNumber, "bad field name '" + name + "' (fields: " + FIELDS + ")");
            }
            i++;
            Token token;
            if (i < n && line.charAt(i) == '"') {
                StringBuilder b = new StringBuilder();
                i = unescape(line, i + 1, b, name, lineNumber);
                token = new Token(b.toString(), true);
            } else {
                int start = i;
                while (i < n && line.charAt(i) != ' ' && line.charAt(i) != '\t') {
                    if (line.charAt(i) == '"') {
                        throw new HistoryFormatException(lineNumber, "stray quote in " + name
                                + "= (a string value must start with a quote)");
                    }
                    i++;
                }
                if (start == i) {
                    throw new HistoryFormatException(lineNumber, "field " + name + "= has no value");
                }
                token = new Token(line.substring(start, i), false);
            }
            if (i < n && line.charAt(i) != ' ' && line.charAt(i) != '\t') {
                throw new HistoryFormatException(lineNumber, "expected a space after the value of " + name + "=");
            }
            if (fields.put(name, token) != null) {
                throw new HistoryFormatException(lineNumber, "field " + name + "= appears twice");
            }
        }
    }

    private static boolean isFieldName(String name) {
        if (name.isEmpty()) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < 'a' || c > 'z') {
                return false;
            }
        }
        return true;
    }

    /** Reads a quoted string body starting after its opening quote; returns the index after the closing quote. */
    private static int unescape(String line, int i, StringBuilder out, String name, long lineNumber)
            throws HistoryFormatException {
        int n = line.length();
        while (i < n) {
            char c = line.charAt(i++);
            if (c == '"') {
                return i;
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (i >= n) {
                break;
            }
            char e = line.charAt(i++);
            switch (e) {
                case '"':
                    out.append('"');
                    break;
                case '\\':
                    out.append('\\');
                    break;
                case 'n':
                    out.append('\n');
                    break;
                case 'r':
                    out.append('\r');
                    break;
                case 't':
                    out.append('\t');
                    break;
                case 'u':
                    if (i + 4 > n) {
                        throw new HistoryFormatException(lineNumber, "short \\u escape in " + name + "=");
                    }
                    int code = 0;
                    for (int k = i; k < i + 4; k++) {
                        int digit = Character.digit(line.charAt(k), 16);
                        if (digit < 0) {
                            throw new HistoryFormatException(lineNumber, "bad \\u escape '\\u" + line.substring(i, i + 4)
                                    + "' in " + name + "= (four hex digits expected)");
                        }
                        code = code * 16 + digit;
                    }
                    out.append((char) code);
                    i += 4;
                    break;
                default:
                    throw new HistoryFormatException(lineNumber, "unknown escape '\\" + e + "' in " + name
                            + "= (escapes: \\\" \\\\ \\n \\r \\t, and \\u with four hex digits)");
            }
        }
        throw new HistoryFormatException(lineNumber, "unterminated string in " + name + "= (missing closing quote)");
    }

    private static Token required(Map<String, Token> fields, String name, long lineNumber)
            throws HistoryFormatException {
        Token t = fields.remove(name);
        if (t == null) {
            throw new HistoryFormatException(lineNumber, "missing field " + name + "=");
        }
        return t;
    }

    private static long number(Map<String, Token> fields, String name, long lineNumber) throws HistoryFormatException {
        Token t = required(fields, name, lineNumber);
        if (!t.quoted) {
            try {
                return Long.parseLong(t.text);
            } catch (NumberFormatException ignored) {
                // reported below
            }
        }
        throw new HistoryFormatException(lineNumber, name + "= takes a whole number, got "
                + (t.quoted ? quote(t.text) : t.text));
    }

    private static String bare(Map<String, Token> fields, String name, long lineNumber) throws HistoryFormatException {
        Token t = required(fields, name, lineNumber);
        if (t.quoted) {
            throw new HistoryFormatException(lineNumber, name + "= takes a bare word, not a quoted string");
        }
        return t.text;
    }

    private static String string(Map<String, Token> fields, String name, long lineNumber)
            throws HistoryFormatException {
        Token t = required(fields, name, lineNumber);
        if (!t.quoted) {
            throw new HistoryFormatException(lineNumber, name + "= takes a double-quoted string, got " + t.text);
        }
        return t.text;
    }

    private static String valueOrAbsent(Map<String, Token> fields, String name, long lineNumber)
            throws HistoryFormatException {
        Token t = required(fields, name, lineNumber);
        if (t.quoted) {
            return t.text;
        }
        if (t.text.equals(ABSENT)) {
            return null;
        }
        throw new HistoryFormatException(lineNumber, name + "= takes a double-quoted string or absent, got " + t.text);
    }

    private static void forbid(Map<String, Token> fields, String name, String why, long lineNumber)
            throws HistoryFormatException {
        if (fields.containsKey(name)) {
            throw new HistoryFormatException(lineNumber, "field " + name + "= does not belong with " + why);
        }
    }
}
