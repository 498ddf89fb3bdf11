package io.poyang.log;

/**
 * The logging facade used by every Poyang module.
 *
 * <p>Messages use {@code {}} placeholders, as in slf4j. Formatting is lazy: arguments are only
 * turned into text when the level is enabled. When the last argument is a {@link Throwable}, it is
 * logged as the exception with its stack trace and does not fill a placeholder (slf4j's rule; both
 * backends behave the same). {@code \{}} prints literal braces.
 *
 * <p>Obtain instances from {@link PoyangLogs#get(Class)}.
 */
public interface PoyangLog {

    String name();

    boolean isDebugEnabled();

    boolean isInfoEnabled();

    boolean isWarnEnabled();

    boolean isErrorEnabled();

    void debug(String message);

    void debug(String format, Object arg);

    void debug(String format, Object arg1, Object arg2);

    void debug(String format, Object... args);

    void info(String message);

    void info(String format, Object arg);

    void info(String format, Object arg1, Object arg2);

    void info(String format, Object... args);

    void warn(String message);

    void warn(String format, Object arg);

    void warn(String format, Object arg1, Object arg2);

    void warn(String format, Object... args);

    void error(String message);

    void error(String format, Object arg);

    void error(String format, Object arg1, Object arg2);

    void error(String format, Object... args);
}
