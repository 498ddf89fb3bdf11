package io.poyang.benchmark.chaos;

import io.poyang.benchmark.TimeArgument;
import io.poyang.benchmark.UsageException;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** The options of {@code ./poyang chaos}, parsed and checked. */
public final class ChaosOptions {

    /** Fault kinds the runner injects, in the order of the issue. */
    public static final List<String> FAULTS = Collections.unmodifiableList(
            Arrays.asList("kill", "pause", "partition", "transfer", "membership", "restart-all"));
    private static final List<String> RUNNER_OPTIONS = Arrays.asList("nodes", "duration", "faults", "clients", "keys",
            "seed", "history");

    /** A recorded history to check instead of running; null: run. */
    public Path check;
    public int nodes = 3;
    public double durationSeconds = 60;
    public List<String> faults = new ArrayList<>(FAULTS);
    public int clients = 8;
    public int keys = 16;
    public long seed = System.nanoTime();
    public boolean seedGiven;
    /** Where the run writes its history; null: chaos-history-SEED.txt in the current directory. */
    public Path history;
    public long maxStatesPerKey = CheckBudget.DEFAULT_MAX_CONFIGURATIONS;
    public double maxSecondsPerKey = CheckBudget.DEFAULT_MAX_MILLIS / 1000.0;
    public boolean verbose;
    public boolean help;
    private final Set<String> runnerOptionsGiven = new LinkedHashSet<>();

    public static String usage() {
        return String.join("\n",
                "usage: poyang chaos [options]              run the fault-injection test against node processes",
                "       poyang chaos --check FILE [options] check a recorded history for linearizability",
                "",
                "The run starts real node processes on loopback with fresh data dirs, runs clients doing put, get,",
                "CAS and remove on a few keys while faults are injected on a schedule drawn from the seed, records",
                "every operation to a history file, then checks the history (each key must be linearizable), that",
                "every node ends with the same values and that those values are what the history can end in.",
                "",
                "Run:",
                "  --nodes 3|5               node processes (default 3)",
                "  --duration TIME           how long the clients run: 60, 60s, 500ms, 10m, 1h (default 60s)",
                "  --faults LIST             comma-separated, from " + String.join(",", FAULTS),
                "                            or none (default all of them)",
                "  --clients N               concurrent clients, one operation in flight each (default 8)",
                "  --keys N                  keys the clients share, so operations collide (default 16)",
                "  --seed N                  seed of the fault schedule and the operations (default: random, printed)",
                "  --history FILE            where to write the history (default chaos-history-SEED.txt)",
                "",
                "Check:",
                "  --check FILE              check a history file instead of running; exit 0 linearizable,",
                "                            1 not linearizable (the shortest failing window is printed),",
                "                            2 bad usage or a bad file, 3 inconclusive (budget ran out)",
                "  --max-states N            search budget per key, in configurations (default "
                        + CheckBudget.DEFAULT_MAX_CONFIGURATIONS + ")",
                "  --max-time TIME           search time budget per key (default "
                        + (CheckBudget.DEFAULT_MAX_MILLIS / 1000) + "s)",
                "  --verbose                 a line per key, not only for keys that fail",
                "  --help                    this text",
                "");
    }

    public static ChaosOptions parse(String... args) throws UsageException {
        ChaosOptions o = new ChaosOptions();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) {
                throw new UsageException("unexpected argument '" + arg + "': options start with -- (see --help)");
            }
            String name = arg.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (name.equals("help") || name.equals("verbose")) {
                if (value != null) {
                    throw new UsageException("--" + name + " takes no value");
                }
                if (name.equals("help")) {
                    o.help = true;
                } else {
                    o.verbose = true;
                }
                continue;
            }
            if (value == null) {
                if (i + 1 >= args.length || args[i + 1].startsWith("--")) {
                    if (!known(name)) {
                        throw unknown(name);
                    }
                    throw new UsageException("option --" + name + " needs a value (see --help)");
                }
                value = args[++i];
            }
            if (RUNNER_OPTIONS.contains(name)) {
                o.runnerOptionsGiven.add("--" + name);
            }
            switch (name) {
                case "check":
                    if (value.isEmpty()) {
                        throw new UsageException("--check needs a history file");
                    }
                    o.check = Paths.get(value);
                    break;
                case "nodes":
                    o.nodes = positive(name, value);
                    if (o.nodes != 3 && o.nodes != 5) {
                        throw new UsageException("--nodes must be 3 or 5, got " + value);
                    }
                    break;
                case "duration":
                    o.durationSeconds = TimeArgument.seconds(name, value);
                    if (o.durationSeconds <= 0) {
                        throw new UsageException("--duration must be positive, got " + value);
                    }
                    break;
                case "faults":
                    o.faults = faults(value);
                    break;
                case "clients":
                    o.clients = positive(name, value);
                    break;
                case "keys":
                    o.keys = positive(name, value);
                    break;
                case "seed":
                    try {
                        o.seed = Long.parseLong(value.replace("_", ""));
                    } catch (NumberFormatException e) {
                        throw new UsageException("--seed takes a whole number, got '" + value + "'");
                    }
                    o.seedGiven = true;
                    break;
                case "history":
                    if (value.isEmpty()) {
                        throw new UsageException("--history needs a file name");
                    }
                    o.history = Paths.get(value);
                    break;
                case "max-states":
                    o.maxStatesPerKey = positive(name, value);
                    break;
                case "max-time":
                    o.maxSecondsPerKey = TimeArgument.seconds(name, value);
                    if (o.maxSecondsPerKey < 0.001) {
                        throw new UsageException("--max-time must be at least 1ms, got " + value);
                    }
                    break;
                default:
                    throw unknown(name);
            }
        }
        if (o.check != null && !o.runnerOptionsGiven.isEmpty()) {
            throw new UsageException("--check replays a recorded history and takes no run options ("
                    + String.join(", ", o.runnerOptionsGiven) + "); drop them, or drop --check to run");
        }
        return o;
    }

    /** The search budget the options ask for. */
    public CheckBudget budget() {
        return new CheckBudget(maxStatesPerKey, Math.max(1, Math.round(maxSecondsPerKey * 1000)));
    }

    /** The history file of a run. */
    public Path historyFile() {
        return history != null ? history : Paths.get("chaos-history-" + seed + ".txt");
    }

    /** One line describing a run, also written at the top of its history file. */
    public String describeRun() {
        return String.format(Locale.ROOT, "nodes=%d duration=%ss faults=%s clients=%d keys=%d seed=%d", nodes,
                trim(durationSeconds), faults.isEmpty() ? "none" : String.join(",", faults), clients, keys, seed);
    }

    private static String trim(double d) {
        return d == Math.rint(d) ? String.valueOf((long) d) : String.valueOf(d);
    }

    private static List<String> faults(String value) throws UsageException {
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.equals("none")) {
            return new ArrayList<>();
        }
        Set<String> out = new LinkedHashSet<>();
        for (String part : v.split(",")) {
            String f = part.trim();
            if (!FAULTS.contains(f)) {
                throw new UsageException("--faults: unknown fault '" + part.trim() + "'; choose from "
                        + String.join(",", FAULTS) + " or none");
            }
            out.add(f);
        }
        return new ArrayList<>(out);
    }

    private static boolean known(String name) {
        return usage().contains("--" + name + " ");
    }

    private static UsageException unknown(String name) {
        return new UsageException("unknown option --" + name + " (see --help)");
    }

    private static int positive(String name, String v) throws UsageException {
        long n;
        try {
            n = Long.parseLong(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " takes a whole number, got '" + v + "'");
        }
        if (n < 1 || n > Integer.MAX_VALUE) {
            throw new UsageException("--" + name + " must be between 1 and " + Integer.MAX_VALUE + ", got " + v);
        }
        return (int) n;
    }
}
