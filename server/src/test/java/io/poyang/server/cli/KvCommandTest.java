package io.poyang.server.cli;

import io.poyang.dtkv.server.LocalKvCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
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

    static final class Result {
        final int code;
        final String out;
        final String err;

        Result(int code, String out, String err) {
            this.code = code;
            this.out = out;
            this.err = err;
        }

        @Override
        public String toString() {
            return "exit " + code + "; stdout: " + out + "; stderr: " + err;
        }
    }

    private static Result kvStdin(String stdin, String... args) {
        List<String> all = new ArrayList<>(Arrays.asList("--servers", servers));
        all.addAll(Arrays.asList(args));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = KvCommand.run(all.toArray(new String[0]), new PrintStream(out, true), new PrintStream(err, true),
                new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
        return new Result(code, new String(out.toByteArray(), StandardCharsets.UTF_8),
                new String(err.toByteArray(), StandardCharsets.UTF_8));
    }

    private static Result kv(String... args) {
        return kvStdin("", args);
    }

    private static Result ok(String... args) {
        Result r = kv(args);
        assertEquals(KvCommand.EXIT_OK, r.code, r.toString());
        return r;
    }

    @Test
    void putGetListRemoveInText() {
        assertTrue(ok("mkdir", "t1").out.matches("OK \\(index \\d+\\)\\n"));
        ok("mkdir", "t1.db");
        ok("put", "t1.url", "jdbc:x");
        ok("put", "t1.db.user", "admin");
        assertEquals("jdbc:x\n", ok("get", "t1.url").out);
        assertEquals("t1.db/\nt1.url = jdbc:x\n", ok("list", "t1").out);
        assertTrue(ok("get", "t1.db").out.startsWith("t1.db/ (directory"));
        ok("remove", "t1.url");
        Result gone = kv("get", "t1.url");
        assertEquals(KvCommand.EXIT_NOT_FOUND, gone.code, gone.toString());
        assertEquals("", gone.out);
        assertEquals("t1.url: not found\n", gone.err);
        assertEquals(KvCommand.EXIT_NOT_FOUND, kv("remove", "t1.url").code);
        assertEquals(KvCommand.EXIT_NOT_FOUND, kv("list", "t1.nothing").code);
        Result notEmpty = kv("remove", "t1.db");
        assertEquals(KvCommand.EXIT_ERROR, notEmpty.code);
        assertTrue(notEmpty.err.contains("DIR_NOT_EMPTY"), notEmpty.err);
        assertTrue(ok("list").out.contains("t1/\n"), "the root listing");
    }

    @Test
    void valuesFromStdinAndNonTextValues() {
        ok("mkdir", "t2");
        Result r = kvStdin("multi\nline value", "put", "t2.v", "-");
        assertEquals(0, r.code, r.toString());
        assertEquals("multi\nline value\n", ok("get", "t2.v").out);
        Result j = ok("--json", "get", "t2.v");
        assertTrue(j.out.contains("\"value\":\"multi\\nline value\""), j.out);
    }

    @Test
    void jsonOutput() {
        ok("mkdir", "t3");
        Result put = ok("--json", "put", "t3.a", "1");
        assertTrue(put.out.matches("\\{\"ok\":true,\"op\":\"put\",\"key\":\"t3.a\",\"index\":\\d+\\}\\n"), put.out);
        Result get = ok("--json", "get", "t3.a");
        assertTrue(get.out.startsWith("{\"key\":\"t3.a\",\"exists\":true,\"dir\":false,\"value\":\"1\",\"createIndex\":"),
                get.out);
        Result missing = kv("--json", "get", "t3.none");
        assertEquals(KvCommand.EXIT_NOT_FOUND, missing.code);
        assertEquals("{\"key\":\"t3.none\",\"exists\":false}\n", missing.out);
        Result list = ok("--json", "list", "t3");
        assertTrue(list.out.startsWith("{\"key\":\"t3\",\"children\":[{\"key\":\"t3.a\",\"exists\":true"), list.out);
        Result err = kv("--json", "put", "nodir.x", "1");
        assertEquals(KvCommand.EXIT_ERROR, err.code);
        assertTrue(err.out.startsWith("{\"ok\":false,\"error\":\"PARENT_NOT_FOUND\""), err.out);
    }

    @Test
    void casAndItsExitCodes() {
        ok("mkdir", "t4");
        assertEquals("OK\n", ok("cas", "t4.c", "--absent", "1").out);
        Result again = kv("cas", "t4.c", "--absent", "1");
        assertEquals(KvCommand.EXIT_CONDITION_FAILED, again.code, again.toString());
        assertTrue(again.err.contains("the key exists already (CAS_MISMATCH)"), again.err);
        Result wrong = kv("cas", "t4.c", "7", "2");
        assertEquals(KvCommand.EXIT_CONDITION_FAILED, wrong.code);
        ok("cas", "t4.c", "1", "2");
        assertEquals("2\n", ok("get", "t4.c").out);
    }

    @Test
    void ttlShowsTempNodes() {
        ok("mkdir", "t5");
        ok("put", "t5.p", "x");
        ok("put", "t5.t", "x", "--ttl", "60000");
        ok("mkdir", "t5.d", "--ttl", "60000");
        assertEquals("t5.p: permanent (no TTL)\n", ok("ttl", "t5.p").out);
        String t = ok("ttl", "t5.t").out;
        assertTrue(t.startsWith("t5.t: temp value, ttl 60000 ms, expires in about "), t);
        assertTrue(ok("ttl", "t5.d").out.startsWith("t5.d: temp directory, ttl 60000 ms"));
        Result j = ok("--json", "ttl", "t5.t");
        assertTrue(j.out.contains("\"temp\":true,\"ttlMillis\":60000,"), j.out);
        assertEquals(KvCommand.EXIT_NOT_FOUND, kv("ttl", "t5.none").code);
        assertTrue(ok("list", "t5").out.contains("t5.t = x  (temp, ttl 60000 ms)"));
    }

    @Test
    void watchPrintsTheCurrentStateThenChanges() throws Exception {
        ok("mkdir", "t6");
        ok("put", "t6.a", "1");
        CompletableFuture<Result> watch = CompletableFuture.supplyAsync(() -> kv("watch", "t6", "--count", "4"));
        // the watch prints t6/ and t6.a first; wait until it is registered by watching for a change it must see
        long deadline = System.nanoTime() + 30_000_000_000L;
        int n = 0;
        while (!watch.isDone() && System.nanoTime() < deadline) {
            ok("put", "t6.b", "v" + n++);
            Thread.sleep(100);
        }
        Result r = watch.get();
        assertEquals(0, r.code, r.toString());
        String[] lines = r.out.split("\n");
        assertEquals(4, lines.length, r.out);
        assertTrue(r.out.contains("t6.a = 1 (index "), r.out);
        assertTrue(r.out.contains("t6.b = v"), r.out);
    }

    @Test
    void lockIsExclusiveAndRunsACommandWhileHeld() {
        Result held = kv("lock", "t7lock", "--lease", "5000", "--", "sh", "-c", "exit 5");
        assertEquals(5, held.code, "the command's exit code: " + held);
        assertTrue(held.out.startsWith("acquired lock t7lock, fencing token "), held.out);
        // released after the command: free again at once
        assertEquals(0, kv("lock", "t7lock", "--wait", "0", "--", "true").code);
        // held by another client while its command runs: not granted without waiting
        CompletableFuture<Result> holder = CompletableFuture.supplyAsync(() ->
                kv("lock", "t7lock", "--lease", "5000", "--", "sleep", "3"));
        long deadline = System.nanoTime() + 20_000_000_000L;
        Result other;
        do {
            other = kv("lock", "t7lock", "--wait", "0", "--", "true");
        } while (other.code == 0 && System.nanoTime() < deadline && !holder.isDone());
        assertEquals(KvCommand.EXIT_CONDITION_FAILED, other.code, other.toString());
        assertTrue(other.err.contains("not granted within 0 ms"), other.err);
        assertEquals(0, holder.join().code);
    }

    @Test
    void usageErrorsExitTwo() {
        assertEquals(KvCommand.EXIT_ERROR, kv("frobnicate").code);
        assertEquals(KvCommand.EXIT_ERROR, kv("put", "onlykey").code);
        assertEquals(KvCommand.EXIT_ERROR, kv("get", "--bogus", "x").code);
        Result badServers = KvCommandTest.kvRaw("--servers", "1=h:1,h:2", "get", "x");
        assertEquals(KvCommand.EXIT_ERROR, badServers.code);
        assertTrue(badServers.err.contains("give every entry an id"), badServers.err);
        Result help = kvRaw("--help");
        assertEquals(0, help.code);
        assertTrue(help.out.contains("exit codes: 0 done, 1 not found, 2 error, 3 condition failed"));
    }

    @Test
    void noServerIsAnErrorThatSaysSo() {
        Result r = kvRaw("--servers", "127.0.0.1:1", "--timeout", "500", "get", "x");
        assertEquals(KvCommand.EXIT_ERROR, r.code);
        assertTrue(r.err.contains("TIMEOUT: no answer within 500 ms from 127.0.0.1:1"), r.err);
    }

    private static Result kvRaw(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = KvCommand.run(args, new PrintStream(out, true), new PrintStream(err, true),
                new ByteArrayInputStream(new byte[0]));
        return new Result(code, new String(out.toByteArray(), StandardCharsets.UTF_8),
                new String(err.toByteArray(), StandardCharsets.UTF_8));
    }
}
