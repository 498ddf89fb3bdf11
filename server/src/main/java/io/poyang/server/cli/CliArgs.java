package io.poyang.server.cli;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A command line split into options and positional arguments. Options may come anywhere before a
 * lone {@code --}; {@code --name value} and {@code --name=value} both work for options that take a
 * value; flags take none. Everything after {@code --} is kept apart ({@link #rest()}). Unknown
 * options and missing values are {@link UsageException}s.
 */
public final class CliArgs {

    private final Map<String, String> values = new HashMap<>();
    private final Set<String> flags = new HashSet<>();
    /** The options given (valued and flags), by name, in the order of the command line. */
    private final Set<String> given = new LinkedHashSet<>();
    private final List<String> positional = new ArrayList<>();
    private final List<String> rest = new ArrayList<>();

    /**
     * @param valued options that take a value (names with their dashes, e.g. "--servers")
     * @param flagNames options that take none (e.g. "--json")
     */
    public static CliArgs parse(String[] args, Set<String> valued, Set<String> flagNames) {
        CliArgs a = new CliArgs();
        for (int i = 0; i < args.length; i++) {
            String s = args[i];
            if (s.equals("--")) {
                a.rest.addAll(Arrays.asList(args).subList(i + 1, args.length));
                break;
            }
            if (s.startsWith("--") || (s.startsWith("-") && s.length() == 2 && !Character.isDigit(s.charAt(1)))) {
                String name = s;
                String value = null;
                int eq = s.indexOf('=');
                if (eq > 0) {
                    name = s.substring(0, eq);
                    value = s.substring(eq + 1);
                }
                if (valued.contains(name)) {
                    if (value == null) {
                        if (i + 1 >= args.length) {
                            throw new UsageException(name + " needs a value");
                        }
                        value = args[++i];
                    }
                    a.values.put(name, value);
                    a.given.add(name);
                } else if (flagNames.contains(name) && value == null) {
                    a.flags.add(name);
                    a.given.add(name);
                } else {
                    throw new UsageException("unknown option '" + s + "'");
                }
            } else {
                a.positional.add(s);
            }
        }
        return a;
    }

    public String value(String name, String dflt) {
        String v = values.get(name);
        return v == null ? dflt : v;
    }

    public boolean has(String name) {
        return values.containsKey(name) || flags.contains(name);
    }

    /** A whole number option in [min, max]. */
    public long longValue(String name, long dflt, long min, long max) {
        String v = values.get(name);
        if (v == null) {
            return dflt;
        }
        long n;
        try {
            n = Long.parseLong(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw new UsageException(name + " " + v + ": not a whole number");
        }
        if (n < min || n > max) {
            throw new UsageException(name + " " + v + ": out of range (" + min + ".." + max + ")");
        }
        return n;
    }

    /** The names of the options given (with their dashes), in the order they came. */
    public Set<String> given() {
        return Collections.unmodifiableSet(given);
    }

    public boolean flag(String name) {
        return flags.contains(name);
    }

    public List<String> positional() {
        return positional;
    }

    /** Positional argument {@code i}, or a usage error naming it as {@code what}. */
    public String arg(int i, String what) {
        if (i >= positional.size()) {
            throw new UsageException("missing " + what);
        }
        return positional.get(i);
    }

    /** Refuses positional arguments past {@code count}. */
    public void expectAtMost(int count) {
        if (positional.size() > count) {
            throw new UsageException("unexpected argument '" + positional.get(count) + "'");
        }
    }

    public List<String> rest() {
        return rest;
    }

    /** A command line that cannot be run: the tool prints the message and its usage, and exits 2. */
    public static final class UsageException extends IllegalArgumentException {
        public UsageException(String message) {
            super(message);
        }
    }
}
