package io.poyang.server.demos;

import io.poyang.dtkv.server.LocalKvCluster;
import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Runs every demo, against its own in-process server and against a given one, and checks what each prints. */
class DemoCommandTest {

    private static String[] expected(String name) {
        switch (name) {
            case "basic":
                return new String[]{"get demo.app.url = jdbc:postgresql://db:5432/app",
                        "get with READ_INDEX = jdbc:postgresql://db:5432/app",
                        "get with FOLLOWER_READ = jdbc:postgresql://db:5432/app", "PARENT_NOT_FOUND",
                        "removed demo.app.pool; exists? false"};
            case "batch":
                return new String[]{"batchPut of 3 keys", "PARENT_NOT_FOUND at position 2; demo.batch.d exists? false",
                        "demo.batch exists? false"};
            case "cas":
                return new String[]{"create demo.counter if absent: true", "create it again if absent: false",
                        "demo.counter = 5", "stale expected value: false"};
            case "ttl":
                return new String[]{"another client writing demo.heartbeat: NOT_OWNER",
                        "demo.heartbeat expired; demo.members still there? true",
                        "demo.members.node-a exists? false"};
            case "watch":
                return new String[]{"watch demo.watched: demo.watched.color = red",
                        "watch demo.watched: demo.watched.color = green", "demo.watched.size removed"};
            case "lock":
                return new String[]{"client A tryLock: true", "client B tryLock without waiting: false",
                        "client B granted by push: true"};
            case "election":
                return new String[]{"candidate A is the leader", "A still leads: true, B leads: false",
                        "candidate B is the leader"};
            default:
                throw new AssertionError(name);
        }
    }

    private static String run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = DemoCommand.run(args, new PrintStream(out, true), new PrintStream(err, true));
        String text = new String(out.toByteArray(), StandardCharsets.UTF_8);
        assertEquals(0, code, "demo " + Arrays.toString(args) + " failed: " + new String(err.toByteArray(),
                StandardCharsets.UTF_8) + "\n" + text);
        return text;
    }

    @Test
    void everyDemoRunsOnItsOwnLocalServer() {
        ImpossibleStates.reset();
        for (Demo d : DemoCommand.DEMOS) {
            String text = run(d.name());
            for (String line : expected(d.name())) {
                assertTrue(text.contains(line), "demo " + d.name() + " should print '" + line + "':\n" + text);
            }
        }
        assertEquals(0, ImpossibleStates.count());
    }

    @Test
    void demosTalkToAGivenClusterAndCanRunTwice() throws Exception {
        try (LocalKvCluster c = LocalKvCluster.singleNode().start()) {
            c.waitForLeader(1, 30_000);
            for (int round = 0; round < 2; round++) {
                for (String name : new String[]{"basic", "cas", "watch"}) {
                    String text = run(name, "--servers", c.serviceAddresses());
                    for (String line : expected(name)) {
                        assertTrue(text.contains(line), name + " should print '" + line + "':\n" + text);
                    }
                }
            }
        }
    }

    @Test
    void helpAndBadUsage() {
        assertTrue(run("--help").contains("election"));
        assertEquals(2, DemoCommand.run(new String[]{"nope"}, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(new ByteArrayOutputStream())));
    }
}
