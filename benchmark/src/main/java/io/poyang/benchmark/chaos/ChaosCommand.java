package io.poyang.benchmark.chaos;

import io.poyang.benchmark.UsageException;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * {@code ./poyang chaos}: runs the fault-injection test, or with {@code --check FILE} checks a recorded history
 * for linearizability. Exit codes: 0 linearizable (and, after a run, consistent), 1 not (the failing windows are
 * printed) or the run failed, 2 bad usage or a bad history file, 3 inconclusive (the
 * search budget ran out).
 */
public final class ChaosCommand {

    public static final int LINEARIZABLE = 0;
    public static final int VIOLATION = 1;
    public static final int USAGE = 2;
    public static final int INCONCLUSIVE = 3;

    private ChaosCommand() {
    }

    public static void main(String[] args) {
        int code = run(args, System.out, System.err);
        System.out.flush();
        System.exit(code);
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, out, err, ChaosRunner::create);
    }

    /** As {@link #run(String[], PrintStream, PrintStream)}, with the runner to use (tests pass their own). */
    static int run(String[] args, PrintStream out, PrintStream err, Supplier<ChaosRunner> runners) {
        ChaosOptions o;
        try {
            o = ChaosOptions.parse(args);
        } catch (UsageException e) {
            err.println("poyang chaos: " + e.getMessage());
            return USAGE;
        }
        if (o.help) {
            out.print(ChaosOptions.usage());
            return 0;
        }
        try {
            if (o.check != null) {
                return check(o, out, err);
            }
            return runAndCheck(runners.get(), o, out, err);
        } catch (CheckerFailure e) {
            // not a verdict: the history was neither shown linearizable nor shown not to be
            err.println("poyang chaos: the checker failed, so nothing was decided: " + e.getCause());
            e.getCause().printStackTrace(err);
            return INCONCLUSIVE;
        }
    }

    /** The checker itself failed (its memo filled the heap, an internal error): no verdict, exit 3. */
    private static final class CheckerFailure extends RuntimeException {
        CheckerFailure(Throwable cause) {
            super(cause);
        }
    }

    private static CheckReport checkHistory(ChaosOptions o, List<Operation> history) {
        try {
            return checker(o).check(history);
        } catch (RuntimeException | OutOfMemoryError e) {
            throw new CheckerFailure(e);
        }
    }

    private static FinalStateCheck.Result checkWithFinalState(ChaosOptions o, List<Operation> history,
                                                              Map<String, Map<String, String>> finalValues) {
        try {
            return new FinalStateCheck(checker(o)).check(history, finalValues);
        } catch (RuntimeException | OutOfMemoryError e) {
            throw new CheckerFailure(e);
        }
    }

    private static int check(ChaosOptions o, PrintStream out, PrintStream err) {
        List<Operation> history;
        Map<String, Map<String, String>> finalValues;
        try {
            HistoryReader.Contents contents = HistoryReader.readAll(o.check);
            history = contents.operations;
            finalValues = contents.finalValuesByNode;
        } catch (NoSuchFileException e) {
            err.println("poyang chaos: no such history file: " + o.check);
            return USAGE;
        } catch (IOException e) {
            err.println("poyang chaos: cannot read " + o.check + ": " + e);
            return USAGE;
        } catch (HistoryFormatException e) {
            err.println("poyang chaos: " + o.check + ": " + e.getMessage());
            return USAGE;
        }
        out.println("checking " + o.check + ": " + describe(history));
        if (finalValues.isEmpty()) {
            // a run that ended before its final reads (it failed), or a file written by hand
            out.println("the file holds no final state of the nodes: only the client operations are checked");
            CheckReport report = checkHistory(o, history);
            out.print(report.format(o.verbose));
            return exitCode(report.verdict());
        }
        out.println("with the final state of " + finalValues.size() + " nodes");
        FinalStateCheck.Result result = checkWithFinalState(o, history, finalValues);
        out.print(result.format(o.verbose));
        out.println("verdict: " + describeVerdict(result));
        return exitCode(result.verdict());
    }

    private static int runAndCheck(ChaosRunner runner, ChaosOptions o, PrintStream out, PrintStream err) {
        Path file = o.historyFile();
        out.println("chaos: " + o.describeRun() + (o.seedGiven ? "" : " (random seed: rerun with --seed "
                + o.seed + ")"));
        out.println("history: " + file);
        Map<String, Map<String, String>> finalValues;
        List<Operation> history;
        try (HistoryRecorder recorder = new HistoryRecorder(HistoryWriter.create(file))) {
            recorder.note(o.describeRun());
            finalValues = runner.run(o, recorder, out);
            history = recorder.operations();
            recorder.finalState(finalValues);   // so --check on the file judges the final state too
        } catch (Exception e) {
            err.println("poyang chaos: the run failed: " + e);
            e.printStackTrace(err);
            err.println("poyang chaos: what was recorded is in " + file + "; check it with ./poyang chaos --check "
                    + file);
            return VIOLATION;
        }
        out.println("checking " + describe(history));
        FinalStateCheck.Result result = checkWithFinalState(o, history, finalValues);
        out.print(result.format(o.verbose));
        List<String> summary = runner.summary(history);
        if (!summary.isEmpty()) {
            out.println();
            out.println("summary (" + o.describeRun() + "):");
            for (String line : summary) {
                out.println("  " + line);
            }
            out.println("  verdict: " + describeVerdict(result));
        }
        out.println("replay the check: ./poyang chaos --check " + file);
        return exitCode(result.verdict());
    }

    private static String describeVerdict(FinalStateCheck.Result result) {
        switch (result.verdict()) {
            case LINEARIZABLE:
                return "PASS: linearizable, and every node holds the same values";
            case NOT_LINEARIZABLE:
                return result.disagreements().isEmpty() ? "FAIL: not linearizable (the failing windows are above)"
                        : "FAIL: the nodes disagree on " + result.disagreements().size() + " keys";
            default:
                return "INCONCLUSIVE: the checker's budget ran out on some key";
        }
    }

    private static LinearizabilityChecker checker(ChaosOptions o) {
        return new LinearizabilityChecker(o.budget(), Runtime.getRuntime().availableProcessors());
    }

    private static int exitCode(Verdict v) {
        switch (v) {
            case LINEARIZABLE:
                return LINEARIZABLE;
            case NOT_LINEARIZABLE:
                return VIOLATION;
            default:
                return INCONCLUSIVE;
        }
    }

    private static String describe(List<Operation> history) {
        Set<String> keys = new HashSet<>();
        for (Operation op : history) {
            keys.add(op.key());
        }
        StatusCounts n = StatusCounts.of(history);
        return String.format(Locale.ROOT, "%,d operations on %,d %s (%,d acknowledged, %,d unknown outcome, "
                + "%,d failed and left out)", history.size(), keys.size(), keys.size() == 1 ? "key" : "keys", n.ok,
                n.unknown, n.failed);
    }
}
