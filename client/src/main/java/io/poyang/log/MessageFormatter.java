package io.poyang.log;

import java.util.Arrays;

/**
 * Replaces {@code {}} placeholders with arguments. A backslash before the brace pair
 * ({@code \{}}) prints the braces literally. Extra arguments are ignored, missing ones leave
 * the placeholder in place.
 */
final class MessageFormatter {

    private MessageFormatter() {
    }

    /** The message text and, when the last argument was an unused Throwable, that Throwable. */
    static final class Formatted {
        final String message;
        final Throwable throwable;

        Formatted(String message, Throwable throwable) {
            this.message = message;
            this.throwable = throwable;
        }
    }

    static Formatted format(String pattern, Object[] args) {
        if (pattern == null) {
            return new Formatted("null", lastThrowable(args, 0));
        }
        if (args == null || args.length == 0) {
            return new Formatted(pattern, null);
        }
        StringBuilder sb = new StringBuilder(pattern.length() + 16 * args.length);
        int argIndex = 0;
        int i = 0;
        int len = pattern.length();
        while (i < len) {
            char c = pattern.charAt(i);
            if (c == '\\' && i + 2 < len && pattern.charAt(i + 1) == '{' && pattern.charAt(i + 2) == '}') {
                sb.append("{}");
                i += 3;
            } else if (c == '{' && i + 1 < len && pattern.charAt(i + 1) == '}' && argIndex < args.length) {
                appendArg(sb, args[argIndex++]);
                i += 2;
            } else {
                sb.append(c);
                i++;
            }
        }
        return new Formatted(sb.toString(), lastThrowable(args, argIndex));
    }

    private static Throwable lastThrowable(Object[] args, int usedArgs) {
        if (args == null || args.length == 0 || usedArgs >= args.length) {
            return null;
        }
        Object last = args[args.length - 1];
        return last instanceof Throwable ? (Throwable) last : null;
    }

    private static void appendArg(StringBuilder sb, Object arg) {
        if (arg == null) {
            sb.append("null");
            return;
        }
        try {
            if (arg.getClass().isArray()) {
                appendArray(sb, arg);
            } else {
                sb.append(arg);
            }
        } catch (Throwable t) {
            // A broken toString() must not break the caller's logging.
            sb.append("[toString of ").append(arg.getClass().getName()).append(" failed: ").append(t).append(']');
        }
    }

    private static void appendArray(StringBuilder sb, Object array) {
        if (array instanceof Object[]) {
            sb.append(Arrays.deepToString((Object[]) array));
        } else if (array instanceof byte[]) {
            sb.append(Arrays.toString((byte[]) array));
        } else if (array instanceof int[]) {
            sb.append(Arrays.toString((int[]) array));
        } else if (array instanceof long[]) {
            sb.append(Arrays.toString((long[]) array));
        } else if (array instanceof short[]) {
            sb.append(Arrays.toString((short[]) array));
        } else if (array instanceof char[]) {
            sb.append(Arrays.toString((char[]) array));
        } else if (array instanceof boolean[]) {
            sb.append(Arrays.toString((boolean[]) array));
        } else if (array instanceof float[]) {
            sb.append(Arrays.toString((float[]) array));
        } else {
            sb.append(Arrays.toString((double[]) array));
        }
    }
}
