package io.poyang.server.cli;

import io.poyang.common.FlowControlException;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.common.StoppedException;
import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvException;
import io.poyang.dtkv.KvListPage;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.dtkv.client.KvLock;
import io.poyang.dtkv.client.KvWatch;
import io.poyang.raft.client.RaftOutcomeUnknownException;
import io.poyang.server.Json;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code ./poyang kv}: DtKV from the command line, over {@link KvClient}.
 *
 * <pre>
 * poyang kv [--servers HOST:PORT,...] [--group N] [--timeout MS] [--json] [--verbose] COMMAND ARGS
 *   put KEY VALUE [--ttl MS]     get KEY     remove KEY     list [DIR]     mkdir DIR [--ttl MS]
 *   cas KEY EXPECTED NEW | cas KEY --absent NEW     ttl KEY     watch KEY... [--count N]
 *   lock NAME [--lease MS] [--wait MS] [-- COMMAND ARGS...]
 * </pre>
 *
 * <p>Exit codes: {@value #EXIT_OK} done; {@value #EXIT_NOT_FOUND} the key (or directory) does not
 * exist; {@value #EXIT_ERROR} an error (bad arguments, no answer, a refused operation);
 * {@value #EXIT_CONDITION_FAILED} a condition did not hold (cas found another value, the lock was
 * not granted within --wait). Results go to stdout (one JSON object per line with {@code --json}),
 * errors to stderr (and, with {@code --json}, also as a JSON object on stdout).
 */
public final class KvCommand {

    public static final int EXIT_OK = 0;
    public static final int EXIT_NOT_FOUND = 1;
    public static final int EXIT_ERROR = 2;
    public static final int EXIT_CONDITION_FAILED = 3;

    static final String DEFAULT_SERVERS = "127.0.0.1:9432";

    private static final java.util.Set<String> VALUED = new HashSet<>(Arrays.asList("--servers", "--group",
            "--timeout", "--ttl", "--count", "--lease", "--wait"));
    private static final java.util.Set<String> FLAGS = new HashSet<>(Arrays.asList("--json", "--verbose", "--help",
            "-h", "--absent"));
    /** The options every command takes (besides --help, which prints the usage instead of running one). */
    private static final List<String> COMMON_OPTIONS = Arrays.asList("--servers", "--group", "--timeout", "--json",
            "--verbose");
    /**
     * Each command's own options. Another command's option is refused, not ignored: {@code kv get k
     * --ttl 5000} must not look as if it did something with the TTL.
     */
    private static final Map<String, List<String>> OWN_OPTIONS = ownOptions();

    private final PrintStream out;
    private final PrintStream err;
    private final InputStream in;
    private boolean json;

    KvCommand(PrintStream out, PrintStream err, InputStream in) {
        this.out = out;
        this.err = err;
        this.in = in;
    }

    public static void main(String[] args) {
        boolean verbose = Arrays.asList(args).contains("--verbose");
        CliLogging.configure(!verbose);
        System.exit(run(args, System.out, System.err, System.in));
    }

    /** Runs one command; returns the exit code. */
    public static int run(String[] args, PrintStream out, PrintStream err, InputStream in) {
        return new KvCommand(out, err, in).execute(args);
    }

    int execute(String[] args) {
        CliArgs a;
        try {
            a = CliArgs.parse(args, VALUED, FLAGS);
        } catch (CliArgs.UsageException e) {
            return usageError(e.getMessage());
        }
        json = a.flag("--json");
        if (a.flag("--help") || a.flag("-h")) {
            usage(out);
            return EXIT_OK;
        }
        if (a.positional().isEmpty()) {
            return usageError("name a command");
        }
        String command = a.positional().get(0);
        String misplaced = misplacedOption(command, a);
        if (misplaced != null) {
            return usageError(misplaced);
        }
        String servers = a.value("--servers", envOr("POYANG_SERVERS", DEFAULT_SERVERS));
        long timeoutMillis;
        int group;
        try {
            timeoutMillis = a.longValue("--timeout", 5_000, 1, 3_600_000);
            group = (int) a.longValue("--group", 1, 1, Integer.MAX_VALUE);
        } catch (CliArgs.UsageException e) {
            return usageError(e.getMessage());
        }
        KvClientConfig cfg = new KvClientConfig().groupId(group).timeoutMillis(timeoutMillis);
        try {
            ServerList.parse("--servers", servers).forEach(cfg::node);
        } catch (CliArgs.UsageException e) {
            return usageError(e.getMessage());
        }
        List<String> args1 = new ArrayList<>(a.positional().subList(1, a.positional().size()));
        if (!command.equals("lock")) {
            // after "--" come arguments that look like options (a value "-1"); lock's are its COMMAND
            args1.addAll(a.rest());
        }
        KvClient kv = new KvClient(cfg);
        try {
            kv.start();
            switch (command) {
                case "put":
                    return put(kv, a, args1);
                case "get":
                    return get(kv, one(args1, "KEY"));
                case "remove":
                case "rm":
                    return remove(kv, one(args1, "KEY"));
                case "list":
                case "ls":
                    return list(kv, args1.isEmpty() ? "" : one(args1, "DIR"));
                case "mkdir":
                    return mkdir(kv, a, one(args1, "DIR"));
                case "cas":
                    return cas(kv, a, args1);
                case "ttl":
                    return ttl(kv, one(args1, "KEY"));
                case "watch":
                    return watch(kv, a, args1);
                case "lock":
                    return lock(kv, a, args1);
                default:
                    return usageError("unknown command '" + command + "'");
            }
        } catch (CliArgs.UsageException e) {
            return usageError(e.getMessage());
        } catch (RuntimeException e) {
            return failure(e, servers, timeoutMillis);
        } finally {
            kv.close();
        }
    }

    private static Map<String, List<String>> ownOptions() {
        Map<String, List<String>> m = new HashMap<>();
        List<String> none = Collections.emptyList();
        List<String> ttl = Collections.singletonList("--ttl");
        m.put("put", ttl);
        m.put("mkdir", ttl);
        m.put("cas", Collections.singletonList("--absent"));
        m.put("watch", Collections.singletonList("--count"));
        m.put("lock", Arrays.asList("--lease", "--wait"));
        for (String c : new String[]{"get", "remove", "rm", "list", "ls", "ttl"}) {
            m.put(c, none);
        }
        return m;
    }

    /**
     * Why an option given does not apply to {@code command} (naming the option, the command and what
     * it accepts), or null when all do. An unknown command is left to the command switch to report.
     */
    private static String misplacedOption(String command, CliArgs a) {
        List<String> own = OWN_OPTIONS.get(command);
        if (own == null) {
            return null;
        }
        for (String option : a.given()) {
            if (!own.contains(option) && !COMMON_OPTIONS.contains(option)) {
                List<String> accepted = new ArrayList<>(own);
                accepted.addAll(COMMON_OPTIONS);
                return option + " does not apply to " + command + "; " + command + " accepts "
                        + String.join(", ", accepted);
            }
        }
        return null;
    }

    private static String one(List<String> args, String what) {
        if (args.isEmpty()) {
            throw new CliArgs.UsageException("missing " + what);
        }
        if (args.size() > 1) {
            throw new CliArgs.UsageException("unexpected argument '" + args.get(1) + "' (quote values with spaces)");
        }
        return args.get(0);
    }

    // ------------------------------------------------------------------ commands

    private int put(KvClient kv, CliArgs a, List<String> args) {
        if (args.size() != 2) {
            throw new CliArgs.UsageException(args.size() < 2 ? "put needs KEY and VALUE ('-' reads the value from"
                    + " stdin)" : "unexpected argument '" + args.get(2) + "' (quote values with spaces)");
        }
        String key = args.get(0);
        byte[] value = valueOf(args.get(1));
        long ttl = a.longValue("--ttl", 0, 1, Long.MAX_VALUE);
        long index = ttl > 0 ? kv.putTemp(key, value, ttl) : kv.put(key, value);
        return done("put", key, index);
    }

    private int get(KvClient kv, String key) {
        KvNode n = kv.get(key);
        if (!n.exists()) {
            return notFound(key);
        }
        if (json) {
            out.println(nodeJson(n));
        } else if (n.isDir()) {
            out.println(displayKey(key) + "/ (directory; 'kv list " + key + "' shows what it holds)");
        } else {
            out.write(n.value(), 0, n.value().length);
            out.println();
        }
        return EXIT_OK;
    }

    private int remove(KvClient kv, String key) {
        try {
            return done("remove", key, kv.remove(key));
        } catch (KvException e) {
            if (e.kvCode() == KvCode.NOT_FOUND) {
                return notFound(key);
            }
            throw e;
        }
    }

    /**
     * Lists in pages (up to 10,000 children and about 4 MiB each): a directory that fits one page is
     * one read; a larger one is read page after page instead of failing.
     */
    private int list(KvClient kv, String dir) {
        List<KvNode> children = new ArrayList<>();
        try {
            KvListPage page = kv.listPage(dir, null, 0);
            children.addAll(page.nodes());
            while (page.more() && page.nextStartAfter() != null) {
                page = kv.listPage(dir, page.nextStartAfter(), 0);
                children.addAll(page.nodes());
            }
        } catch (KvException e) {
            if (e.kvCode() == KvCode.NOT_FOUND) {
                return notFound(dir);
            }
            throw e;
        }
        if (json) {
            List<String> items = new ArrayList<>();
            for (KvNode c : children) {
                items.add(nodeJson(c));
            }
            out.println(new Json().field("key", dir).raw("children", Json.array(items)));
            return EXIT_OK;
        }
        for (KvNode c : children) {
            if (c.isDir()) {
                out.println(c.key() + "/" + tempNote(c));
            } else {
                out.println(c.key() + " = " + text(c.value()) + tempNote(c));
            }
        }
        return EXIT_OK;
    }

    private int mkdir(KvClient kv, CliArgs a, String dir) {
        long ttl = a.longValue("--ttl", 0, 1, Long.MAX_VALUE);
        long index = ttl > 0 ? kv.makeTempDir(dir, ttl) : kv.mkdir(dir);
        return done("mkdir", dir, index);
    }

    private int cas(KvClient kv, CliArgs a, List<String> args) {
        boolean absent = a.flag("--absent");
        int want = absent ? 2 : 3;
        if (args.size() != want) {
            throw new CliArgs.UsageException("cas needs KEY EXPECTED NEW, or KEY --absent NEW");
        }
        String key = args.get(0);
        byte[] expected = absent ? null : valueOf(args.get(1));
        byte[] value = valueOf(args.get(want - 1));
        if (kv.compareAndSet(key, expected, value)) {
            if (json) {
                out.println(new Json().field("ok", true).field("op", "cas").field("key", key));
            } else {
                out.println("OK");
            }
            return EXIT_OK;
        }
        String why = absent ? "the key exists already" : "the key does not hold the expected value";
        if (json) {
            out.println(new Json().field("ok", false).field("op", "cas").field("key", key)
                    .field("error", KvCode.CAS_MISMATCH.name()).field("message", why));
        }
        err.println("cas " + displayKey(key) + ": not set: " + why + " (CAS_MISMATCH)");
        return EXIT_CONDITION_FAILED;
    }

    private int ttl(KvClient kv, String key) {
        KvNode n = kv.get(key);
        if (!n.exists()) {
            return notFound(key);
        }
        long now = System.currentTimeMillis();
        if (json) {
            Json j = new Json().field("key", key).field("temp", n.isTemp());
            if (n.isTemp()) {
                j.field("ttlMillis", n.ttlMillis()).field("expireAtMillis", n.expireAtMillis())
                        .field("remainingMillis", Math.max(0, n.expireAtMillis() - now))
                        .field("owner", new UUID(n.ownerUuidMost(), n.ownerUuidLeast()).toString());
            }
            out.println(j);
        } else if (!n.isTemp()) {
            out.println(displayKey(key) + ": permanent (no TTL)");
        } else {
            out.println(displayKey(key) + ": temp " + (n.isDir() ? "directory" : "value") + ", ttl " + n.ttlMillis()
                    + " ms, expires in about " + seconds(Math.max(0, n.expireAtMillis() - now)) + " s (at "
                    + Instant.ofEpochMilli(n.expireAtMillis()) + " by the leader's clock), owner "
                    + new UUID(n.ownerUuidMost(), n.ownerUuidLeast()));
        }
        return EXIT_OK;
    }

    private int watch(KvClient kv, CliArgs a, List<String> keys) {
        if (keys.isEmpty()) {
            throw new CliArgs.UsageException("watch needs at least one KEY (a directory watches its whole subtree)");
        }
        long count = a.longValue("--count", 0, 1, Long.MAX_VALUE);
        CountDownLatch enough = new CountDownLatch(1);
        AtomicInteger seen = new AtomicInteger();
        KvWatch w = kv.watch((watchKey, n) -> {
            synchronized (out) {
                if (count > 0 && seen.get() >= count) {
                    return;
                }
                if (json) {
                    out.println(new Json().field("watch", watchKey).raw("node", nodeJson(n)));
                } else if (!n.exists()) {
                    out.println(n.key() + " (removed or absent)");
                } else if (n.isDir()) {
                    out.println(n.key() + "/ (directory, index " + n.updateIndex() + ")");
                } else {
                    out.println(n.key() + " = " + text(n.value()) + " (index " + n.updateIndex() + ")");
                }
                out.flush();
                if (count > 0 && seen.incrementAndGet() >= count) {
                    enough.countDown();
                }
            }
        }, keys.toArray(new String[0]));
        try {
            enough.await();   // with no --count: until the process is stopped (Ctrl-C)
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            w.close();
        }
        return EXIT_OK;
    }

    private int lock(KvClient kv, CliArgs a, List<String> args) {
        String name = one(args, "NAME");
        long leaseMillis = a.longValue("--lease", 10_000, 100, 30L * 24 * 3600 * 1000);
        long waitMillis = a.longValue("--wait", 60_000, 0, 24L * 3600 * 1000);
        List<String> command = a.rest();
        KvLock lock = kv.lock(name);
        if (!lock.tryLock(leaseMillis, waitMillis)) {
            String why = "not granted within " + waitMillis + " ms (another client holds it)";
            if (json) {
                out.println(new Json().field("ok", false).field("op", "lock").field("name", name)
                        .field("error", "LOCK_NOT_ACQUIRED").field("message", why));
            }
            err.println("lock " + name + ": " + why);
            return EXIT_CONDITION_FAILED;
        }
        long token = lock.fencingToken();
        if (json) {
            out.println(new Json().field("ok", true).field("op", "lock").field("name", name).field("fencingToken", token)
                    .field("leaseMillis", leaseMillis));
        } else {
            out.println("acquired lock " + name + ", fencing token " + token + (command.isEmpty()
                    ? "; holding it until stopped (Ctrl-C)" : "; running " + String.join(" ", command)));
        }
        out.flush();
        LockHolder holder = new LockHolder(lock, leaseMillis, err);
        Thread unlockAtExit = new Thread(holder::release, "kv-lock-release");
        Runtime.getRuntime().addShutdownHook(unlockAtExit);
        try {
            if (command.isEmpty()) {
                holder.holdUntilLost();
                return EXIT_ERROR;   // only returns when the lock was lost
            }
            int code = holder.runWhileHeld(command);
            holder.release();
            return code;
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(unlockAtExit);
            } catch (IllegalStateException e) {
                // the JVM is shutting down; the hook releases the lock
            }
        }
    }

    // ------------------------------------------------------------------ output and errors

    private int done(String op, String key, long index) {
        if (json) {
            out.println(new Json().field("ok", true).field("op", op).field("key", key).field("index", index));
        } else {
            out.println("OK (index " + index + ")");
        }
        return EXIT_OK;
    }

    private int notFound(String key) {
        if (json) {
            out.println(new Json().field("key", key).field("exists", false));
        }
        err.println(displayKey(key) + ": not found");
        return EXIT_NOT_FOUND;
    }

    private int usageError(String message) {
        err.println("poyang kv: " + message);
        err.println("run 'poyang kv --help' for the commands and options");
        return EXIT_ERROR;
    }

    private int failure(RuntimeException e, String servers, long timeoutMillis) {
        String name;
        String message;
        if (e instanceof KvException) {
            KvException k = (KvException) e;
            name = k.kvCode() != null ? k.kvCode().name() : "KV_" + k.kvCodeNumber();
            message = k.getMessage();
        } else if (e instanceof RaftOutcomeUnknownException) {
            name = "OUTCOME_UNKNOWN";
            message = "no answer within " + timeoutMillis + " ms; the write may or may not have been applied ("
                    + e.getMessage() + ")";
        } else if (e instanceof PoyangTimeoutException) {
            name = "TIMEOUT";
            message = "no answer within " + timeoutMillis + " ms from " + servers + " (is a node running there, and"
                    + " does the group have a leader?): " + e.getMessage();
        } else if (e instanceof FlowControlException) {
            name = "FLOW_CONTROL";
            message = e.getMessage();
        } else if (e instanceof StoppedException) {
            name = "STOPPED";
            message = e.getMessage();
        } else {
            name = "ERROR";
            message = e.toString();
        }
        if (json) {
            out.println(new Json().field("ok", false).field("error", name).field("message", message));
        }
        // a KvException's message starts with its code's name already
        err.println("poyang kv: " + (e instanceof KvException ? "" : name + ": ") + message);
        if (e instanceof KvException && ((KvException) e).kvCode() == KvCode.NOT_FOUND) {
            return EXIT_NOT_FOUND;
        }
        return EXIT_ERROR;
    }

    static String nodeJson(KvNode n) {
        Json j = new Json().field("key", n.key()).field("exists", n.exists());
        if (n.exists()) {
            j.field("dir", n.isDir());
            if (!n.isDir()) {
                j.bytes("value", n.value());
            }
            j.field("createIndex", n.createIndex()).field("updateIndex", n.updateIndex()).field("temp", n.isTemp());
            if (n.isTemp()) {
                j.field("ttlMillis", n.ttlMillis()).field("expireAtMillis", n.expireAtMillis());
            }
        }
        return j.toString();
    }

    private static String tempNote(KvNode n) {
        return n.isTemp() ? "  (temp, ttl " + n.ttlMillis() + " ms)" : "";
    }

    /** A value for a text line: as is when it is UTF-8 text, else "base64:..." . */
    static String text(byte[] value) {
        String s = new String(value, StandardCharsets.UTF_8);
        if (Arrays.equals(s.getBytes(StandardCharsets.UTF_8), value)) {
            return s;
        }
        return "base64:" + Base64.getEncoder().encodeToString(value);
    }

    private static String displayKey(String key) {
        return key.isEmpty() ? "(root)" : key;
    }

    private static String seconds(long millis) {
        return String.format("%.1f", millis / 1000.0);
    }

    /** The bytes of a VALUE argument: the text as UTF-8, or stdin for "-". */
    private byte[] valueOf(String arg) {
        if (!arg.equals("-")) {
            return arg.getBytes(StandardCharsets.UTF_8);
        }
        try {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            for (int n; (n = in.read(buf)) > 0; ) {
                b.write(buf, 0, n);
            }
            return b.toByteArray();
        } catch (IOException e) {
            throw new CliArgs.UsageException("cannot read the value from stdin: " + e);
        }
    }

    private static String envOr(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.trim().isEmpty() ? dflt : v.trim();
    }

    static void usage(PrintStream out) {
        out.println("usage: poyang kv [--servers HOST:PORT,...] [--group N] [--timeout MS] [--json] COMMAND ARGS");
        out.println();
        out.println("commands:");
        out.println("  put KEY VALUE [--ttl MS]      set a value ('-' reads it from stdin); --ttl makes a temp value");
        out.println("  get KEY                       print the value");
        out.println("  remove KEY                    remove a value or an empty directory");
        out.println("  list [DIR]                    the children of a directory (the root without DIR)");
        out.println("  mkdir DIR [--ttl MS]          make a directory (its parent must exist); --ttl: a temp directory");
        out.println("  cas KEY EXPECTED NEW          set NEW if the value is EXPECTED");
        out.println("  cas KEY --absent NEW          set NEW only if the key does not exist");
        out.println("  ttl KEY                       whether the key is temp, its TTL and the time left");
        out.println("  watch KEY... [--count N]      print the keys' states, then every change (until Ctrl-C or N)");
        out.println("  lock NAME [--lease MS] [--wait MS] [-- COMMAND ARGS...]");
        out.println("                                take a lock (wait up to --wait, default 60000) and hold it,");
        out.println("                                renewing its lease (default 10000), until Ctrl-C, or while");
        out.println("                                COMMAND runs; exits with COMMAND's code");
        out.println();
        out.println("options:");
        out.println("  --servers HOST:PORT,...       service addresses of the nodes in node-id order, or");
        out.println("            ID=HOST:PORT,...    with their ids (default $POYANG_SERVERS, else " + DEFAULT_SERVERS
                + ")");
        out.println("  --group N                     the DtKV group (default 1)");
        out.println("  --timeout MS                  deadline of each operation (default 5000)");
        out.println("  --json                        one JSON object per result line on stdout");
        out.println("  --verbose                     client logs on stderr");
        out.println();
        out.println("An option of one command is refused by the others (get KEY --ttl MS is an error).");
        out.println("Keys are paths with '.' (app.db.url); parents must exist (mkdir app, mkdir app.db).");
        out.println("exit codes: 0 done, 1 not found, 2 error, 3 condition failed (cas mismatch, lock not granted)");
    }

    /** Keeps a lock's lease alive while the tool holds it. */
    static final class LockHolder {
        private final KvLock lock;
        private final long leaseMillis;
        private final PrintStream err;
        private volatile boolean released;
        /** The command running under the lock, if any. */
        private volatile Process command;

        LockHolder(KvLock lock, long leaseMillis, PrintStream err) {
            this.lock = lock;
            this.leaseMillis = leaseMillis;
            this.err = err;
        }

        /** Renews the lease every third of it; returns only when a renewal fails (the lock is lost). */
        void holdUntilLost() {
            while (true) {
                sleep(leaseMillis / 3);
                if (!renew()) {
                    return;
                }
            }
        }

        /** Runs the command while renewing; destroys it if the lock is lost. Its exit code. */
        int runWhileHeld(List<String> command) {
            Process p;
            try {
                p = new ProcessBuilder(command).inheritIO().start();
                this.command = p;
            } catch (IOException e) {
                err.println("lock " + lock.name() + ": cannot run " + command.get(0) + ": " + e.getMessage());
                return EXIT_ERROR;
            }
            try {
                while (!p.waitFor(leaseMillis / 3, TimeUnit.MILLISECONDS)) {
                    if (!renew()) {
                        err.println("lock " + lock.name() + ": stopping " + command.get(0)
                                + " — it no longer runs under the lock");
                        stop(p);
                        return EXIT_ERROR;
                    }
                }
                return p.exitValue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroy();
                return EXIT_ERROR;
            }
        }

        /** Asks the command to end (SIGTERM), and kills it if it has not within a third of the lease. */
        private void stop(Process p) throws InterruptedException {
            p.destroy();
            if (!p.waitFor(Math.max(100, leaseMillis / 3), TimeUnit.MILLISECONDS)) {
                err.println("lock " + lock.name() + ": " + "the command did not end on SIGTERM; killing it");
                p.destroyForcibly();
                p.waitFor();
            }
        }

        /**
         * Renews the lease. The renewal is given only as long as the lease it renews still runs (as
         * {@link KvLock#isHeld} counts it): a node that stalls must not keep the command running
         * past the lease while another client is granted the lock.
         */
        private boolean renew() {
            java.util.concurrent.CompletableFuture<Void> f = lock.updateLeaseAsync(leaseMillis);
            try {
                while (true) {
                    try {
                        f.get(20, TimeUnit.MILLISECONDS);
                        return true;
                    } catch (java.util.concurrent.TimeoutException e) {
                        if (!lock.isHeld()) {
                            f.cancel(false);
                            err.println("lock " + lock.name() + ": LOST: the lease ran out before its renewal was"
                                    + " answered");
                            return false;
                        }
                    }
                }
            } catch (java.util.concurrent.ExecutionException e) {
                Throwable c = e.getCause() == null ? e : e.getCause();
                err.println("lock " + lock.name() + ": LOST: the lease could not be renewed: " + c.getMessage());
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }

        /**
         * Unlocks (at the end, or from the shutdown hook when the tool is stopped). A command still
         * running is stopped first: once the lock is given up it would no longer run under it. The
         * second caller waits for the first to finish, so the client is not closed under an unlock.
         */
        synchronized void release() {   // the shutdown hook and the main thread may both call it
            if (released) {
                return;
            }
            released = true;
            Process p = command;
            if (p != null && p.isAlive()) {
                p.destroy();
                try {
                    p.waitFor(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            try {
                lock.unlock();
            } catch (RuntimeException e) {
                err.println("lock " + lock.name() + ": unlock failed (" + e.getMessage() + "); it is released when its"
                        + " lease runs out");
            }
        }

        private static void sleep(long ms) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
