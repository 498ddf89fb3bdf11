package io.poyang.server.cli;

import io.poyang.dtkv.server.LocalKvCluster;
import io.poyang.server.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code poyang kv lock} as the README and {@code --help} describe it, against an in-process
 * single-node server: the line it prints when granted, a held lock renewed past its lease, released
 * by SIGTERM, a second client refused with {@code --wait 0} (exit 3) or granted once the holder lets
 * go when it waits, a lease that runs out unrenewed (LOST: the command stopped, exit 2), and bad
 * input (exit 2 with what is wrong). A holder that must be signalled or watched while it holds is
 * a child process ({@link Holder}); the others run in this JVM. (KvCommandTest has the command's
 * exit code and exclusivity while a command runs.)
 */
class KvLockCommandTest {

    private static final Pattern HOLDING = Pattern.compile(
            "acquired lock (\\S+), fencing token (\\d+); holding it until stopped \\(Ctrl-C\\)");
    private static final Pattern RUNNING = Pattern.compile("acquired lock (\\S+), fencing token (\\d+); running (.*)");

    private static LocalKvCluster server;
    private static String servers;

    @BeforeAll
    static void start() throws Exception {
        server = LocalKvCluster.singleNode().start();
        assertTrue(server.waitForLeader(1, 30_000) > 0);
        servers = server.serviceAddresses();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static CommandRun kv(String... args) {
        List<String> all = new ArrayList<>(Arrays.asList("--servers", servers));
        all.addAll(Arrays.asList(args));
        return CommandRun.kvInProcess(all.toArray(new String[0]));
    }

    /** {@code kv lock NAME --wait 0 -- true}: 0 when the lock was free, 3 when another client holds it. */
    private static CommandRun tryAtOnce(String name) {
        return kv("lock", name, "--wait", "0", "--", "true");
    }

    private static void assertHeldByAnother(String name) {
        CommandRun r = tryAtOnce(name);
        assertEquals(KvCommand.EXIT_CONDITION_FAILED, r.exitCode, r.toString());
        assertEquals("lock " + name + ": not granted within 0 ms (another client holds it)\n", r.stderr);
        assertEquals("", r.stdout);
    }

    private static long token(Pattern form, String line) {
        Matcher m = form.matcher(line);
        assertTrue(m.matches(), "the line a granted lock prints: " + line);
        return Long.parseLong(m.group(2));
    }

    /** Runs a blocking command on a thread of its own (not the common pool: see KvCommandTest.ownThread). */
    private static void ownThread(Runnable task) {
        new Thread(task, "kv-lock-command").start();
    }

    @Test
    void aHeldLockPrintsItsFencingTokenAndIsRenewedPastItsLease() throws Exception {
        try (Holder h = new Holder("lock", "t1lock", "--lease", "1500")) {
            token(HOLDING, h.awaitFirstLine());
            // three and a half leases: without the renewals every third of the lease it would be free
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(5_250);
            int refused = 0;
            while (System.nanoTime() - until < 0) {
                assertHeldByAnother("t1lock");
                refused++;
            }
            assertTrue(h.process.isAlive(), "still holding: " + h.stderr());
            assertTrue(refused > 0);
        }
    }

    @Test
    void sigtermReleasesAHeldLockAtOnceNotWhenItsLeaseRunsOut() throws Exception {
        try (Holder h = new Holder("lock", "t2lock", "--lease", "600000")) {
            token(HOLDING, h.awaitFirstLine());
            assertHeldByAnother("t2lock");
            h.process.destroy();   // SIGTERM
            assertTrue(h.process.waitFor(60, TimeUnit.SECONDS), "the holder ends on SIGTERM");
            assertFalse(h.stderr().contains("unlock failed"), h.stderr());
        }
        // the lease has ten minutes left: only the unlock at SIGTERM makes it free now
        CommandRun r = tryAtOnce("t2lock");
        assertEquals(KvCommand.EXIT_OK, r.exitCode, r.toString());
    }

    @Test
    void aSecondClientThatWaitsIsGrantedWhenTheHolderLetsGoWithAGreaterFencingToken() throws Exception {
        CompletableFuture<CommandRun> waiter;
        long first;
        try (Holder h = new Holder("lock", "t3lock", "--lease", "600000")) {
            first = token(HOLDING, h.awaitFirstLine());
            waiter = CompletableFuture.supplyAsync(() -> kv("lock", "t3lock", "--wait", "60000", "--", "true"),
                    KvLockCommandTest::ownThread);
            // one without --wait 0 is refused meanwhile, and the waiter is still waiting
            assertHeldByAnother("t3lock");
            assertFalse(waiter.isDone(), "the waiter waits while the lock is held: " + (waiter.isDone() ? waiter.join() : ""));
            h.process.destroy();
            assertTrue(h.process.waitFor(60, TimeUnit.SECONDS));
        }
        CommandRun r = waiter.get(60, TimeUnit.SECONDS);
        assertEquals(KvCommand.EXIT_OK, r.exitCode, r.toString());
        long second = token(RUNNING, r.stdout.trim());
        assertTrue(r.stdout.trim().endsWith("; running true"), r.stdout);
        assertTrue(second > first, "fencing tokens grow from one grant to the next: " + first + " then " + second);
    }

    @Test
    void jsonSaysGrantedWithTokenAndLeaseOrNotAcquired() throws Exception {
        CommandRun granted = kv("--json", "lock", "t4lock", "--lease", "5000", "--", "true");
        assertEquals(KvCommand.EXIT_OK, granted.exitCode, granted.toString());
        assertTrue(granted.stdout.matches("\\{\"ok\":true,\"op\":\"lock\",\"name\":\"t4lock\",\"fencingToken\":\\d+,"
                + "\"leaseMillis\":5000}\\n"), granted.stdout);
        try (Holder h = new Holder("lock", "t4lock", "--lease", "600000")) {
            token(HOLDING, h.awaitFirstLine());
            CommandRun refused = kv("--json", "lock", "t4lock", "--wait", "0");
            assertEquals(KvCommand.EXIT_CONDITION_FAILED, refused.exitCode, refused.toString());
            assertEquals("{\"ok\":false,\"op\":\"lock\",\"name\":\"t4lock\",\"error\":\"LOCK_NOT_ACQUIRED\","
                    + "\"message\":\"not granted within 0 ms (another client holds it)\"}\n", refused.stdout);
        }
    }

    /**
     * The holder's renewals are not answered (the server's group dispatcher is held) until its lease
     * has run out: the lock is LOST, the command it runs is stopped, and the tool exits 2.
     */
    @Test
    void aLeaseThatRunsOutUnrenewedLosesTheLockStopsTheCommandAndExitsTwo() throws Exception {
        try (Holder h = new Holder("lock", "t5lock", "--lease", "1500", "--", "sleep", "600")) {
            String line = h.awaitFirstLine();
            token(RUNNING, line);
            assertTrue(line.endsWith("; running sleep 600"), line);
            ProcessHandle sleep = Await.value("the holder's command to start", 30_000,
                    () -> h.process.children().findFirst().orElse(null));
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch resume = new CountDownLatch(1);
            server.group(1, 1).callInGroup(() -> {
                held.countDown();
                return resume.await(60, TimeUnit.SECONDS);
            });
            try {
                assertTrue(held.await(30, TimeUnit.SECONDS));
                Await.until("the holder to report the lock lost", 30_000, () -> h.stderr().contains("lock t5lock: LOST: "));
            } finally {
                resume.countDown();
            }
            assertTrue(h.process.waitFor(60, TimeUnit.SECONDS), "the holder ends: " + h.stderr());
            assertEquals(KvCommand.EXIT_ERROR, h.process.exitValue(), h.stderr());
            assertTrue(h.stderr().contains("lock t5lock: stopping sleep — it no longer runs under the lock"), h.stderr());
            assertTrue(sleep.onExit().get(30, TimeUnit.SECONDS) != null && !sleep.isAlive(), "the command was stopped");
        }
    }

    @Test
    void badInputExitsTwoAndSaysWhatIsWrong() {
        String[][] cases = {
                {"missing NAME", "lock"},
                {"unexpected argument 'extra'", "lock", "t6lock", "extra"},
                {"--lease 50: out of range (100..", "lock", "t6lock", "--lease", "50"},
                {"--lease soon: not a whole number", "lock", "t6lock", "--lease", "soon"},
                {"--wait -1: out of range (0..", "lock", "t6lock", "--wait", "-1"},
                {"--lease needs a value", "lock", "t6lock", "--lease"},
        };
        for (String[] c : cases) {
            CommandRun r = kv(Arrays.copyOfRange(c, 1, c.length));
            assertEquals(KvCommand.EXIT_ERROR, r.exitCode, String.join(" ", c) + ": " + r);
            assertTrue(r.stderr.startsWith("poyang kv: " + c[0]), String.join(" ", c) + ": " + r.stderr);
            assertEquals("", r.stdout, "nothing granted");
        }
        // a command that cannot be run: said so, exit 2, and the lock taken for it is given back
        CommandRun notRun = kv("lock", "t6lock", "--", "/nonexistent/poyang-test-command");
        assertEquals(KvCommand.EXIT_ERROR, notRun.exitCode, notRun.toString());
        assertTrue(notRun.stderr.startsWith("lock t6lock: cannot run /nonexistent/poyang-test-command: "), notRun.stderr);
        CommandRun after = tryAtOnce("t6lock");
        assertEquals(KvCommand.EXIT_OK, after.exitCode, "released after the failed command: " + after);
    }

    /**
     * {@code poyang kv lock ...} as a child process, its stdout read line by line and its stderr
     * kept, so a test can watch it hold the lock and signal it. Killed at close if still running.
     */
    private static final class Holder implements AutoCloseable {
        final Process process;
        private final CompletableFuture<String> firstLine = new CompletableFuture<>();
        private final StringBuffer stderr = new StringBuffer();

        Holder(String... args) throws IOException {
            List<String> cmd = new ArrayList<>(Arrays.asList(Paths.get(System.getProperty("java.home"), "bin", "java")
                    .toString(), "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
                    System.getProperty("java.class.path"), KvCommand.class.getName(), "--servers", servers));
            cmd.addAll(Arrays.asList(args));
            process = new ProcessBuilder(cmd).start();
            process.getOutputStream().close();
            Thread out = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        firstLine.complete(line);
                    }
                } catch (IOException e) {
                    // the process ended
                }
                firstLine.completeExceptionally(new IllegalStateException("kv lock ended without printing a line"));
            }, "kv-lock-holder-stdout");
            out.setDaemon(true);
            out.start();
            Thread err = new Thread(() -> copy(process.getErrorStream()), "kv-lock-holder-stderr");
            err.setDaemon(true);
            err.start();
        }

        private void copy(InputStream in) {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    stderr.append(line).append('\n');
                }
            } catch (IOException e) {
                // the process ended
            }
        }

        String stderr() {
            return stderr.toString();
        }

        String awaitFirstLine() throws Exception {
            try {
                return firstLine.get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError("kv lock printed no line (" + e + "); stderr:\n" + stderr(), e);
            }
        }

        @Override
        public void close() {
            if (process.isAlive()) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                try {
                    process.waitFor(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
