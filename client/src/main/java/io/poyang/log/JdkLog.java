package io.poyang.log;

import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** {@link PoyangLog} over java.util.logging, used when slf4j-api is not on the classpath. */
final class JdkLog implements PoyangLog {

    private final Logger logger;

    JdkLog(String name) {
        this.logger = Logger.getLogger(name);
    }

    @Override
    public String name() {
        return logger.getName();
    }

    @Override
    public boolean isDebugEnabled() {
        return logger.isLoggable(Level.FINE);
    }

    @Override
    public boolean isInfoEnabled() {
        return logger.isLoggable(Level.INFO);
    }

    @Override
    public boolean isWarnEnabled() {
        return logger.isLoggable(Level.WARNING);
    }

    @Override
    public boolean isErrorEnabled() {
        return logger.isLoggable(Level.SEVERE);
    }

    private void log(Level level, String format, Object[] args) {
        if (!logger.isLoggable(level)) {
            return;
        }
        MessageFormatter.Formatted f = MessageFormatter.format(format, args);
        LogRecord record = new LogRecord(level, f.message);
        record.setLoggerName(logger.getName());
        record.setThrown(f.throwable);
        fillCaller(record);
        logger.log(record);
    }

    /** Points the record at the caller of the facade rather than at this class. */
    private static void fillCaller(LogRecord record) {
        StackTraceElement[] stack = new Throwable().getStackTrace();
        for (StackTraceElement e : stack) {
            String cn = e.getClassName();
            if (!cn.equals(JdkLog.class.getName())) {
                record.setSourceClassName(cn);
                record.setSourceMethodName(e.getMethodName());
                return;
            }
        }
    }

    private void log1(Level level, String message) {
        if (logger.isLoggable(level)) {
            log(level, message, null);
        }
    }

    private void log1(Level level, String format, Object arg) {
        if (logger.isLoggable(level)) {
            log(level, format, new Object[]{arg});
        }
    }

    private void log2(Level level, String format, Object a, Object b) {
        if (logger.isLoggable(level)) {
            log(level, format, new Object[]{a, b});
        }
    }

    @Override
    public void debug(String message) {
        log1(Level.FINE, message);
    }

    @Override
    public void debug(String format, Object arg) {
        log1(Level.FINE, format, arg);
    }

    @Override
    public void debug(String format, Object arg1, Object arg2) {
        log2(Level.FINE, format, arg1, arg2);
    }

    @Override
    public void debug(String format, Object... args) {
        log(Level.FINE, format, args);
    }

    @Override
    public void info(String message) {
        log1(Level.INFO, message);
    }

    @Override
    public void info(String format, Object arg) {
        log1(Level.INFO, format, arg);
    }

    @Override
    public void info(String format, Object arg1, Object arg2) {
        log2(Level.INFO, format, arg1, arg2);
    }

    @Override
    public void info(String format, Object... args) {
        log(Level.INFO, format, args);
    }

    @Override
    public void warn(String message) {
        log1(Level.WARNING, message);
    }

    @Override
    public void warn(String format, Object arg) {
        log1(Level.WARNING, format, arg);
    }

    @Override
    public void warn(String format, Object arg1, Object arg2) {
        log2(Level.WARNING, format, arg1, arg2);
    }

    @Override
    public void warn(String format, Object... args) {
        log(Level.WARNING, format, args);
    }

    @Override
    public void error(String message) {
        log1(Level.SEVERE, message);
    }

    @Override
    public void error(String format, Object arg) {
        log1(Level.SEVERE, format, arg);
    }

    @Override
    public void error(String format, Object arg1, Object arg2) {
        log2(Level.SEVERE, format, arg1, arg2);
    }

    @Override
    public void error(String format, Object... args) {
        log(Level.SEVERE, format, args);
    }
}
