package io.poyang.log;

import java.util.Arrays;

/**
 * Replaces {@code {}} placeholders with arguments, following slf4j's rules so that both backends
 * print the same text:
 * <ul>
 *   <li>when the last argument is a {@link Throwable} it is the exception of the record (printed
 *       with its stack trace) and never fills a placeholder;</li>
 *   <li>{@code \{}} prints {@code {}} literally, {@code \\{}} prints one backslash and then the
 *       argument;</li>
 *   <li>extra arguments are ignored, missing ones leave {@code {}} in place.</li>
 * </ul>
 */
final class MessageFormatter {

    private MessageFormatter() {
    }

    /** The message text and, when the last argument was a Throwable, that Throwable. */
    static final class Formatted {
        final String message;
        final Throwable throwable;

        Formatted(String message, Throwable throwable) {
            this.message = message;
            this.throwable = throwable;
        }
    }

    static Formatted format(String pattern, Object[] args) {
        Throwable throwable = lastThrowable(args);
        int argCount = args == null ? 0 : throwable == null ? args.length : args.length - 1;
        if (pattern == null) {
            return new Formatted("null", throwable);
        }
        if (argCount == 0) {
            return new Formatted(pattern, throwable);
        }
        StringBuilder sb = new StringBuilder(pattern.length() + 16 * argCount);
        int argIndex = 0;
        int i = 0;
        int len = pattern.length();
        while (i < len) {
            char c = pattern.charAt(i);
            if (c == '\\' && isPlaceholder(pattern, i + 1)) {
                sb.append("{}");
                i += 3;
            } else if (c == '\\' && i + 1 < len && pattern.charAt(i + 1) == '\\' && isPlaceholder(pattern, i + 2)) {
                // An escaped backslash before a placeholder: print the backslash, keep the placeholder.
                sb.append('\\');
                i += 2;
            } else if (c == '{' && argIndex < argCount && isPlaceholder(pattern, i)) {
                appendArg(sb, args[argIndex++]);
                i += 2;
            } else {
                sb.append(c);
                i++;
            }
        }
        return new Formatted(sb.toString(), throwable);
    }

    private static boolean isPlaceholder(String s, int i) {
        return i + 1 < s.length() && s.charAt(i) == '{' && s.charAt(i + 1) == '}';
    }

    private static Throwable lastThrowable(Object[] args) {
        if (args == null || args.length == 0) {
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
