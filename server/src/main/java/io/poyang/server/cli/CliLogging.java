package io.poyang.server.cli;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Logging for the command-line programs when java.util.logging is the backend (no slf4j binding):
 * one line per record on stderr. The node logs at INFO; the client tools only at WARNING unless
 * {@code --verbose}, so their output stays what the user asked for. A {@code java.util.logging}
 * configuration given on the command line ({@code -Djava.util.logging.config.file}) wins.
 */
public final class CliLogging {

    private CliLogging() {
    }

    public static void configure(boolean quiet) {
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
            System.setProperty("java.util.logging.SimpleFormatter.format",
                    "%1$tF %1$tT.%1$tL %4$s [%3$s] %5$s%6$s%n");
        }
        if (System.getProperty("java.util.logging.config.file") == null) {
            Logger.getLogger("").setLevel(quiet ? Level.WARNING : Level.INFO);
        }
    }
}
