package io.poyang.server.cli;

import io.poyang.dtkv.server.LocalKvCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every kv command's output (text and --json) and exit code, against an in-process single-node server. */
class KvCommandTest {

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

    private static CommandRun kvStdin(String stdin, String... args) {
        List<String> all = new ArrayList<>(Arrays.asList("--servers", servers));
        all.addAll(Arrays.asList(args));
        return CommandRun.kvInProcessWithStdin(stdin, all.toArray(new String[0]));
    }

    /**
     * Runs a command that blocks (a watch, a held lock) on a thread of its own. In the common pool,
     * which has one thread on two cores and is CompletableFuture's default on newer JDKs (Temurin 25;
     * not JDK 17), it would starve the command's own client, whose callbacks run there.
     */
    private static void ownThread(Runnable task) {
        new Thread(task, "kv-command").start();
    }

    private static CommandRun kv(String... args) {
        return kvStdin("", args);
    }

    private static CommandRun ok(String... args) {
        CommandRun r = kv(args);
        assertEquals(KvCommand.EXIT_OK, r.exitCode, r.toString());
        return r;
    }

    @Test
    void putGetListRemoveInText() {
        assertTrue(ok("mkdir", "t1").stdout.matches("OK \\(index \\d+\\)\\n"));
        ok("mkdir", "t1.db");
        ok("put", "t1.url", "jdbc:x");
        ok("put", "t1.db.user", "admin");
        assertEquals("jdbc:x\n", ok("get", "t1.url").stdout);
        assertEquals("t1.db/\nt1.url = jdbc:x\n", ok("list", "t1").stdout);
        assertTrue(ok("get", "t1.db").stdout.startsWith("t1.db/ (directory"));
        ok("remove", "t1.url");
        CommandRun gone = kv("get", "t1.url");
        assertEquals(KvCommand.EXIT_NOT_FOUND, gone.exitCode, gone.toString());
        assertEquals("", gone.stdout);
        assertEquals("t1.url: not found\n", gone.stderr);
        assertEquals(KvCommand.EXIT_NOT_FOUND, kv("remove", "t1.url").exitCode);
        assertEquals(KvCommand.EXIT_NOT_FOUND, kv("list", "t1.nothing").exitCode);
        CommandRun notEmpty = kv("remove", "t1.db");
        assertEquals(KvCommand.EXIT_ERROR, notEmpty.exitCode);
        assertTrue(notEmpty.stderr.contains("DIR_NOT_EMPTY"), notEmpty.stderr);
        assertTrue(ok("list").stdout.contains("t1/\n"), "the root listing");
    }

    @Test
    void aDirectoryLargerThanOneAnswerIsListedInPages() {
        ok("mkdir", "big");
        String value = "x".repeat(3 << 20);   // three of them are over one 8 MiB answer
        for (int i = 0; i < 3; i++) {
            CommandRun put = kvStdin(value, "put", "big.v" + i, "-");
            assertEquals(0, put.exitCode, put.stderr);
        }
        String listed = ok("list", "big").stdout;
        String[] lines = listed.split("\n");
        assertEquals(3, lines.length, "one line per child");
        for (int i = 0; i < 3; i++) {
            assertEquals("big.v" + i + " = " + value, lines[i]);
        }
    }

    @Test
    void valuesFromStdinAndNonTextValues() {
        ok("mkdir", "t2");
        CommandRun r = kvStdin("multi\nline value", "put", "t2.v", "-");
        assertEquals(0, r.exitCode, r.toString());
        assertEquals("multi\nline value\n", ok("get", "t2.v").stdout);
        CommandRun j = ok("--json", "get", "t2.v");
        assertTrue(j.stdout.contains("\"value\":\"multi\\nline value\""), j.stdout);
    }

    @Test
    void jsonOutput() {
        ok("mkdir", "t3");
        CommandRun put = ok("--json", "put", "t3.a", "1");
        assertTrue(put.stdout.matches("\\{\"ok\":true,\"op\":\"put\",\"key\":\"t3.a\",\"index\":\\d+\\}\\n"), put.stdout);
        CommandRun get = ok("--json", "get", "t3.a");
        assertTrue(get.stdout.startsWith("{\"key\":\"t3.a\",\"exists\":true,\"dir\":false,\"value\":\"1\",\"createIndex\":"),
                get.stdout);
        CommandRun missing = kv("--json", "get", "t3.none");
        assertEquals(KvCommand.EXIT_NOT_FOUND, missing.exitCode);
        assertEquals("{\"key\":\"t3.none\",\"exists\":false}\n", missing.stdout);
        CommandRun list = ok("--json", "list", "t3");
        assertTrue(list.stdout.startsWith("{\"key\":\"t3\",\"children\":[{\"key\":\"t3.a\",\"exists\":true"), list.stdout);
        CommandRun err = kv("--json", "put", "nodir.x", "1");
        assertEquals(KvCommand.EXIT_ERROR, err.exitCode);
        assertTrue(err.stdout.startsWith("{\"ok\":false,\"error\":\"PARENT_NOT_FOUND\""), err.stdout);
    }

    @Test
    void casAndItsExitCodes() {
        ok("mkdir", "t4");
        assertEquals("OK\n", ok("cas", "t4.c", "--absent", "1").stdout);
        CommandRun again = kv("cas", "t4.c", "--absent", "1");
        assertEquals(KvCommand.EXIT_CONDITION_FAILED, again.exitCode, again.toString());
        assertTrue(again.stderr.contains("the key exists already (CAS_MISMATCH)"), again.stderr);
        CommandRun wrong = kv("cas", "t4.c", "7", "2");
        assertEquals(KvCommand.EXIT_CONDITION_FAILED, wrong.exitCode);
        ok("cas", "t4.c", "1", "2");
        assertEquals("2\n", ok("get", "t4.c").stdout);
    }

    @Test
    void ttlShowsTempNodes() {
        ok("mkdir", "t5");
        ok("put", "t5.p", "x");
        ok("put", "t5.t", "x", "--ttl", "60000");
        ok("mkdir", "t5.d", "--ttl", "60000");
        assertEquals("t5.p: permanent (no TTL)\n", ok("ttl", "t5.p").stdout);
        String t = ok("ttl", "t5.t").stdout;
        assertTrue(t.startsWith("t5.t: temp value, ttl 60000 ms, expires in about "), t);
        assertTrue(ok("ttl", "t5.d").stdout.startsWith("t5.d: temp directory, ttl 60000 ms"));
        CommandRun j = ok("--json", "ttl", "t5.t");
        assertTrue(j.stdout.contains("\"temp\":true,\"ttlMillis\":60000,"), j.stdout);
        assertEquals(KvCommand.EXIT_NOT_FOUND, kv("ttl", "t5.none").exitCode);
        assertTrue(ok("list", "t5").stdout.contains("t5.t = x  (temp, ttl 60000 ms)"));
    }

    @Test
    void watchPrintsTheCurrentStateThenChanges() throws Exception {
        ok("mkdir", "t6");
        ok("put", "t6.a", "1");
        CompletableFuture<CommandRun> watch = CompletableFuture.supplyAsync(() -> kv("watch", "t6", "--count", "4"),
                KvCommandTest::ownThread);
        // the watch prints t6/ and t6.a first; wait until it is registered by watching for a change it must see
        long deadline = System.nanoTime() + 30_000_000_000L;
        int n = 0;
        while (!watch.isDone() && System.nanoTime() < deadline) {
            ok("put", "t6.b", "v" + n++);
            Thread.sleep(100);   // pace of the writes until the watch has seen one (deadline-bound)
        }
        CommandRun r = watch.get();
        assertEquals(0, r.exitCode, r.toString());
        String[] lines = r.stdout.split("\n");
        assertEquals(4, lines.length, r.stdout);
        assertTrue(r.stdout.contains("t6.a = 1 (index "), r.stdout);
        assertTrue(r.stdout.contains("t6.b = v"), r.stdout);
    }

    @Test
    void lockIsExclusiveAndRunsACommandWhileHeld() {
        CommandRun held = kv("lock", "t7lock", "--lease", "5000", "--", "sh", "-c", "exit 5");
        assertEquals(5, held.exitCode, "the command's exit code: " + held);
        assertTrue(held.stdout.startsWith("acquired lock t7lock, fencing token "), held.stdout);
        // released after the command: free again at once
        assertEquals(0, kv("lock", "t7lock", "--wait", "0", "--", "true").exitCode);
        // held by another client while its command runs: not granted without waiting
        CompletableFuture<CommandRun> holder = CompletableFuture.supplyAsync(() ->
                kv("lock", "t7lock", "--lease", "5000", "--", "sleep", "3"), KvCommandTest::ownThread);
        long deadline = System.nanoTime() + 20_000_000_000L;
        CommandRun other;
        do {
            other = kv("lock", "t7lock", "--wait", "0", "--", "true");
        } while (other.exitCode == 0 && System.nanoTime() < deadline && !holder.isDone());
        assertEquals(KvCommand.EXIT_CONDITION_FAILED, other.exitCode, other.toString());
        assertTrue(other.stderr.contains("not granted within 0 ms"), other.stderr);
        assertEquals(0, holder.join().exitCode);
    }

    @Test
    void usageErrorsExitTwo() {
        assertEquals(KvCommand.EXIT_ERROR, kv("frobnicate").exitCode);
        assertEquals(KvCommand.EXIT_ERROR, kv("put", "onlykey").exitCode);
        assertEquals(KvCommand.EXIT_ERROR, kv("get", "--bogus", "x").exitCode);
        CommandRun badServers = KvCommandTest.kvRaw("--servers", "1=h:1,h:2", "get", "x");
        assertEquals(KvCommand.EXIT_ERROR, badServers.exitCode);
        assertTrue(badServers.stderr.contains("give every entry an id"), badServers.stderr);
        CommandRun help = kvRaw("--help");
        assertEquals(0, help.exitCode);
        assertTrue(help.stdout.contains("exit codes: 0 done, 1 not found, 2 error, 3 condition failed"));
    }

    @Test
    void anOptionThatDoesNotApplyToTheCommandIsRefusedWithWhatTheCommandAccepts() {
        CommandRun get = kv("get", "t8", "--ttl", "5s");
        assertEquals(KvCommand.EXIT_ERROR, get.exitCode, get.toString());
        assertEquals("", get.stdout);
        assertTrue(get.stderr.startsWith("poyang kv: --ttl does not apply to get; get accepts --servers, --group,"
                + " --timeout, --json, --verbose\n"), get.stderr);
        // refused before anything is written
        CommandRun put = kv("put", "t8", "v", "--count", "3");
        assertTrue(put.stderr.startsWith("poyang kv: --count does not apply to put; put accepts --ttl, --servers,"),
                put.stderr);
        assertEquals(KvCommand.EXIT_NOT_FOUND, kv("get", "t8").exitCode, "put t8 was refused");
        // the option is named wherever it stands, before the command too
        assertTrue(kv("--absent", "ttl", "t8").stderr.startsWith("poyang kv: --absent does not apply to ttl; "));
        String[][] refused = {{"lock", "t8lock", "--ttl", "100"}, {"cas", "t8", "a", "b", "--wait", "0"},
                {"watch", "t8", "--lease", "100"}, {"mkdir", "t8", "--absent"}, {"ls", "--count", "1"},
                {"rm", "t8", "--ttl", "1"}, {"list", "--ttl", "1"}, {"remove", "t8", "--wait", "1"}};
        for (String[] args : refused) {
            CommandRun r = kv(args);
            assertEquals(KvCommand.EXIT_ERROR, r.exitCode, String.join(" ", args) + ": " + r);
            assertTrue(r.stderr.contains(" does not apply to " + args[0] + "; " + args[0] + " accepts "), r.stderr);
        }
        assertTrue(kv("lock", "t8lock", "--ttl", "100").stderr.contains("lock accepts --lease, --wait, --servers"));
        // arguments after "--" are the command's operands (lock's are its COMMAND): none is ignored either
        CommandRun extra = kv("get", "t8", "--", "more");
        assertEquals(KvCommand.EXIT_ERROR, extra.exitCode, extra.toString());
        assertTrue(extra.stderr.startsWith("poyang kv: unexpected argument 'more'"), extra.stderr);
    }

    @Test
    void noServerIsAnErrorThatSaysSo() {
        CommandRun r = kvRaw("--servers", "127.0.0.1:1", "--timeout", "500", "get", "x");
        assertEquals(KvCommand.EXIT_ERROR, r.exitCode);
        assertTrue(r.stderr.contains("TIMEOUT: no answer within 500 ms from 127.0.0.1:1"), r.stderr);
    }

    private static CommandRun kvRaw(String... args) {
        return CommandRun.kvInProcess(args);
    }
}
