package io.poyang.server.config;

import java.nio.file.Path;

/**
 * A configuration file that cannot be used: unreadable, malformed, or a setting with a bad value.
 * The message names the file, the line and the key when they are known, says what is wrong and
 * what a valid value looks like.
 */
public class ConfigException extends IllegalArgumentException {

    private final Path file;
    private final String key;

    public ConfigException(Path file, String key, String message) {
        this(file, key, message, null);
    }

    public ConfigException(Path file, String key, String message, Throwable cause) {
        super(message, cause);
        this.file = file;
        this.key = key;
    }

    /** The file at fault, or null (defaults, the command line). */
    public Path file() {
        return file;
    }

    /** The setting at fault, or null when the file as a whole is. */
    public String key() {
        return key;
    }
}
