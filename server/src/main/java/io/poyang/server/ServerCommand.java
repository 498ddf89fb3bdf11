package io.poyang.server;

import io.poyang.server.cli.CliLogging;
import io.poyang.server.config.ConfigException;
import io.poyang.server.config.NodeConfig;
import io.poyang.server.config.ServersConfig;
import io.poyang.server.node.NodeStartException;
import io.poyang.server.node.PoyangNode;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code ./poyang server [--conf DIR]}: runs a DtKV node until SIGTERM or SIGINT.
 *
 * <p>Reads {@code DIR/config.properties} and {@code DIR/servers.properties}; without {@code --conf}
 * it runs node 1 alone in DtKV group 1 on 127.0.0.1 (ports 9431, 9432, 9433) with data in
 * {@code ./data}. Once the node serves it prints one line on stdout, starting
 * {@code "poyang node <id> ready: "} ({@link PoyangNode#readyLine()}); everything else (logs,
 * errors) goes to stderr.
 *
 * <p>Exit codes: {@value #EXIT_STOPPED} stopped gracefully after a signal, or at once by a signal
 * during the start; {@value #EXIT_START_FAILED}
 * could not start (the reason on stderr, prefixed {@code "poyang server: cannot start: "});
 * {@value #EXIT_USAGE} bad command line; {@value #EXIT_FORCED} the stop was forced (a second signal,
 * or the graceful stop took longer than {@code shutdownTimeoutMillis}); {@value #EXIT_STOP_FAILED} the
 * graceful stop failed (the reason on stderr; the PID file may be left behind).
 */
public final class ServerCommand {

    public static final int EXIT_STOPPED = 0;
    public static final int EXIT_START_FAILED = 1;
    public static final int EXIT_USAGE = 2;
    public static final int EXIT_FORCED = 3;
    public static final int EXIT_STOP_FAILED = 4;
    /** The start of the line printed when the node serves. */
    public static final String READY_PREFIX = "poyang node ";

    private ServerCommand() {
    }

    public static void main(String[] args) {
        CliLogging.configure(false);
        System.exit(run(args, System.out, System.err));
    }

    /** The node to run from the command line, or null after printing why not (usage error) to err. */
    static PoyangNode load(String[] args, PrintStream out, PrintStream err, int[] exitCode) {
        Path conf = null;
        boolean testingFaults = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                usage(out);
                exitCode[0] = EXIT_STOPPED;
                return null;
            } else if (a.equals("--conf") || a.startsWith("--conf=")) {
                String dir = a.equals("--conf") ? (i + 1 < args.length ? args[++i] : "") : a.substring("--conf=".length());
                if (dir.isEmpty()) {
                    err.println("poyang server: --conf needs a directory (the one holding config.properties and"
                            + " servers.properties)");
                    usage(err);
                    exitCode[0] = EXIT_USAGE;
                    return null;
                }
                conf = Paths.get(dir);
            } else if (a.equals("--testing-faults")) {
                testingFaults = true;
            } else {
                err.println("poyang server: unknown argument '" + a + "'");
                usage(err);
                exitCode[0] = EXIT_USAGE;
                return null;
            }
        }
        if (conf == null) {
            NodeConfig c = NodeConfig.defaults();
            PoyangNode n = new PoyangNode(c, ServersConfig.singleNode(c.nodeId, c.host + ":" + c.replicationPort), null);
            return testingFaults ? n.enableTestingFaults() : n;
        }
        if (!Files.isDirectory(conf)) {
            // a natural slip is to name the config file itself: say so rather than "no such directory"
            throw new ConfigException(conf, null, "--conf " + conf + ": " + (Files.exists(conf)
                    ? "a file, not a directory; give the directory that holds it (" + (conf.toAbsolutePath().getParent())
                    + "): --conf names the directory holding config.properties and servers.properties"
                    : "no such directory; it must hold config.properties and servers.properties")
                    + " (samples: server/conf/)");
        }
        Path serversFile = conf.resolve("servers.properties");
        NodeConfig c = NodeConfig.load(conf.resolve("config.properties"));
        ServersConfig s = ServersConfig.load(serversFile);
        PoyangNode n = new PoyangNode(c, s, serversFile);
        return testingFaults ? n.enableTestingFaults() : n;
    }

    /**
     * Runs the node: returns {@link #EXIT_START_FAILED} or {@link #EXIT_USAGE} at once when it cannot
     * start, else blocks until a signal stopped it and returns {@link #EXIT_STOPPED} (a forced stop
     * halts the JVM with {@link #EXIT_FORCED}).
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        PoyangNode node;
        // Null until the node has started. A signal before then cannot stop it gracefully (the start
        // replays the logs, which may take a while, and is not interruptible), so it ends the process
        // at once: the files are crash-safe, and the next start recovers from them as after a crash.
        AtomicReference<PoyangNode> running = new AtomicReference<>();
        CountDownLatch stopped = new CountDownLatch(1);
        AtomicBoolean stopFailed = new AtomicBoolean();
        StopSignals.Listener onSignal = new StopSignals.Listener() {
            @Override
            public void onStopRequested(String signal) {
                PoyangNode n = running.get();
                if (n == null) {
                    err.println("poyang server: SIG" + signal + " during the start: exiting at once (as safe as a"
                            + " crash: the next start recovers from the files)");
                    err.flush();
                    Runtime.getRuntime().halt(EXIT_STOPPED);
                }
                err.println("poyang server: SIG" + signal + ": stopping gracefully (a second signal forces it)");
                startStop(n, stopped, stopFailed, n.config().shutdownTimeoutMillis, err);
            }

            @Override
            public void onForceRequested(String signal) {
                err.println("poyang server: SIG" + signal + " again: stopping at once");
                err.flush();
                Runtime.getRuntime().halt(EXIT_FORCED);
            }
        };
        StopSignals signals = new StopSignals();
        boolean signalsTaken = signals.install(onSignal);
        try {
            int[] code = {EXIT_STOPPED};
            node = load(args, out, err, code);
            if (node == null) {
                signals.restore();
                return code[0];
            }
            node.start();
        } catch (ConfigException | NodeStartException e) {
            signals.restore();
            err.println("poyang server: cannot start: " + e.getMessage());
            return EXIT_START_FAILED;
        } catch (RuntimeException e) {
            signals.restore();
            err.println("poyang server: cannot start: " + e);
            e.printStackTrace(err);
            return EXIT_START_FAILED;
        }
        if (!signalsTaken) {
            err.println("poyang server: this JVM does not let the node take SIGTERM; a signal stops it through a"
                    + " shutdown hook (graceful, never forced)");
        }
        // Other ways out (SIGHUP, System.exit elsewhere) still stop the node gracefully.
        Runtime.getRuntime().addShutdownHook(new Thread(node::stop, "poyang-shutdown-hook"));
        running.set(node);
        out.println(node.readyLine());
        out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return stopFailed.get() ? EXIT_STOP_FAILED : EXIT_STOPPED;
    }

    /** Stops the node on a thread of its own, and halts the JVM if that takes longer than the timeout. */
    private static void startStop(PoyangNode node, CountDownLatch stopped, AtomicBoolean failed,
                                  long timeoutMillis, PrintStream err) {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(timeoutMillis);
            } catch (InterruptedException e) {
                return;
            }
            err.println("poyang server: the graceful stop took longer than " + timeoutMillis
                    + " ms (shutdownTimeoutMillis); stopping at once");
            err.flush();
            Runtime.getRuntime().halt(EXIT_FORCED);
        }, "poyang-stop-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        Thread stopper = new Thread(() -> {
            try {
                node.stop();
            } catch (RuntimeException | Error e) {
                // an Error too (a full heap while stopping): exit 4, not 0 as if the stop had gone well
                failed.set(true);
                err.println("poyang server: the stop failed: " + e);
                e.printStackTrace(err);
            } finally {
                watchdog.interrupt();
                stopped.countDown();
            }
        }, "poyang-stop");
        stopper.start();
    }

    private static void usage(PrintStream out) {
        out.println("usage: poyang server [--conf DIR]");
        out.println();
        out.println("Runs a DtKV node. DIR holds config.properties (this node) and servers.properties (the");
        out.println("cluster); samples are in server/conf/. Without --conf: node 1 alone in DtKV group 1 on");
        out.println("127.0.0.1, replication port 9431, service (client) port 9432, HTTP (metrics, health) 9433,");
        out.println("data in ./data.");
        out.println();
        out.println("Prints 'poyang node <id> ready: service HOST:PORT, ...' on stdout once it serves.");
        out.println("SIGTERM or SIGINT stops it gracefully; a second signal forces the stop. A signal during the");
        out.println("start (the logs are replayed) ends the process at once; the next start recovers as after a crash.");
        out.println("Exit codes: 0 stopped, 1 could not start (reason on stderr), 2 bad arguments, 3 stop forced,");
        out.println("4 the graceful stop failed (reason on stderr).");
        out.println("Operations guide: docs/operations.md");
        out.println();
        out.println("--testing-faults   FOR TESTING ONLY (./poyang chaos): accept TESTING_FAULTS on the service port,");
        out.println("                   which cuts this node's replication traffic with the nodes it names.");
        out.println("                   Anyone reaching the service port could partition the node: never in production.");
    }
}
