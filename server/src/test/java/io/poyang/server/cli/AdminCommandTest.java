package io.poyang.server.cli;

import io.poyang.net.LoopbackPorts;
import io.poyang.server.Await;
import io.poyang.server.config.PropertiesFile;
import io.poyang.server.node.InProcessNodes;
import io.poyang.server.node.PoyangNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The admin command's output, errors and exit codes against three nodes in this JVM. */
class AdminCommandTest {

    private static Path tmp;
    private static InProcessNodes cluster;
    private static List<PoyangNode> nodes;
    private static String admin;
    private static String kvServers;

    @BeforeAll
    static void start() throws Exception {
        tmp = Files.createTempDirectory("admin-command-test");
        cluster = new InProcessNodes(tmp, 3, Collections.emptyMap());
        nodes = cluster.nodes();
        admin = cluster.adminServers();
        kvServers = cluster.kvServers();
        Await.until("a leader of group 1", 60_000, () -> nodes.stream().anyMatch(n -> n.raftServer().group(1).isLeader()));
    }

    @AfterAll
    static void stop() throws IOException {
        if (cluster != null) {
            cluster.close();
        }
        try (Stream<Path> s = Files.walk(tmp)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static CommandRun admin(String... args) {
        return CommandRun.adminAt(admin, args);
    }

    private static CommandRun ok(String... args) {
        CommandRun r = admin(args);
        assertEquals(AdminCommand.EXIT_OK, r.exitCode, r.toString());
        return r;
    }

    @Test
    void statusIsATableOfEveryGroupOnEveryNode() {
        String[] lines = ok("status").stdout.split("\n");
        assertEquals(4, lines.length, String.join("\n", lines));
        assertTrue(lines[0].matches("GROUP\\s+NODE\\s+ROLE\\s+TERM\\s+LEADER\\s+FIRST\\s+LAST\\s+PERSISTED\\s+COMMIT"
                + "\\s+APPLIED\\s+LAG\\s+CONFIGURATION"), lines[0]);
        int leaders = 0;
        for (int i = 1; i <= 3; i++) {
            String[] cells = lines[i].split("\\s+");
            assertEquals("1", cells[0]);
            assertEquals(String.valueOf(i), cells[1]);
            if (cells[2].equals("LEADER")) {
                leaders++;
                assertEquals("-", cells[10], "the leader has no lag: " + lines[i]);
            } else {
                assertEquals("FOLLOWER", cells[2]);
                assertTrue(cells[10].matches("\\d+"), "a follower's lag: " + lines[i]);
            }
            assertTrue(lines[i].endsWith("voters 1,2,3"), lines[i]);
        }
        assertEquals(1, leaders);
        CommandRun json = ok("--json", "status");
        assertTrue(json.stdout.startsWith("{\"groups\":[{\"group\":1,\"node\":1,\"role\":"), json.stdout);
        assertTrue(json.stdout.endsWith("\"unreachable\":[]}\n"), json.stdout);
        String[] one = ok("status", "--group", "1").stdout.split("\n");
        assertEquals(4, one.length, String.join("\n", one));
    }

    @Test
    void aGroupOrNodeThatNoNodeHasIsRefusedNotReportedDone() {
        CommandRun removeGroup = admin("remove-group", "77");
        assertEquals(AdminCommand.EXIT_ERROR, removeGroup.exitCode, removeGroup.toString());
        assertEquals("", removeGroup.stdout);
        assertTrue(removeGroup.stderr.startsWith("poyang admin: NO_SUCH_GROUP: no node of --servers runs group 77"
                + " (the nodes asked run group"), removeGroup.stderr);
        assertTrue(removeGroup.stderr.contains("; nothing was removed. Check the group id"), removeGroup.stderr);
        CommandRun removeGroupOn = admin("remove-group", "77", "--on", "2");
        assertEquals(AdminCommand.EXIT_ERROR, removeGroupOn.exitCode, removeGroupOn.toString());
        assertTrue(removeGroupOn.stderr.startsWith("poyang admin: NO_SUCH_GROUP: node 2 does not run group 77"),
                removeGroupOn.stderr);
        CommandRun json = admin("--json", "remove-group", "77");
        assertEquals(AdminCommand.EXIT_ERROR, json.exitCode, json.toString());
        assertTrue(json.stdout.startsWith("{\"ok\":false,\"error\":\"NO_SUCH_GROUP\",\"message\":\"no node of"),
                json.stdout);
        CommandRun status = admin("status", "--group", "77");
        assertEquals(AdminCommand.EXIT_ERROR, status.exitCode, status.toString());
        assertTrue(status.stderr.startsWith("poyang admin: NO_SUCH_GROUP: no node of --servers runs group 77"),
                status.stderr);
        CommandRun removeNode = admin("remove-node", "9");
        assertEquals(AdminCommand.EXIT_ERROR, removeNode.exitCode, removeNode.toString());
        assertTrue(removeNode.stderr.startsWith("poyang admin: UNKNOWN_NODE: no node of --servers knows node 9"
                + " (the nodes asked know nodes 1,2,3"), removeNode.stderr);
        // the group the nodes do run is left as it was
        assertTrue(ok("list-groups").stdout.contains("1      1,2,3"));
    }

    @Test
    void listNodesAndGroups() {
        String nodesOut = ok("list-nodes").stdout;
        assertTrue(nodesOut.startsWith("NODE  ADDRESS"), nodesOut);
        for (int i = 1; i <= 3; i++) {
            int port = nodes.get(i - 1).replicationPort();
            assertTrue(nodesOut.contains(i + "     127.0.0.1:" + port + "  1,2,3"), nodesOut);
        }
        String groupsOut = ok("list-groups").stdout;
        assertTrue(groupsOut.contains("1      1,2,3"), groupsOut);
    }

    @Test
    void aGroupAddedAndRemovedAtRuntimeServesDtKvAndIsWrittenBackToServersProperties() throws Exception {
        assertEquals("OK: group 2 runs on nodes 1,2,3\n", ok("add-group", "2", "--members", "1,2,3").stdout);
        Await.until("a leader of group 2", 60_000, () -> nodes.stream().anyMatch(n -> n.raftServer().group(2) != null
                && n.raftServer().group(2).isLeader()));
        CommandRun put = kv("--group", "2", "put", "g2key", "v");
        assertEquals(0, put.exitCode, put.toString());
        assertEquals("v\n", kv("--group", "2", "get", "g2key").stdout);
        for (int i = 1; i <= 3; i++) {
            Path f = tmp.resolve("conf-" + i).resolve("servers.properties");
            Await.until("group 2 in " + f, 60_000, () -> "1,2,3".equals(PropertiesFile.read(f).get("group.2.members")));
        }
        assertTrue(ok("list-groups").stdout.contains("2      1,2,3"));
        CommandRun removed = ok("remove-group", "2", "--delete-data");
        assertEquals("OK: group 2 removed from nodes 1,2,3 and its data deleted\n", removed.stdout);
        for (int i = 1; i <= 3; i++) {
            Path f = tmp.resolve("conf-" + i).resolve("servers.properties");
            Await.until("group 2 gone from " + f, 60_000, () -> !PropertiesFile.read(f).contains("group.2.members"));
            Path dir = tmp.resolve("data-" + i).resolve("group-2");
            Await.until(dir + " deleted", 60_000, () -> !Files.exists(dir));
        }
        assertFalse(ok("list-groups").stdout.contains("2      "));
    }

    @Test
    void aRemovalRefusedBecauseTheNodeNoLongerRunsTheGroupDeletesNoKeptData() throws Exception {
        ok("add-group", "3", "--members", "1,2,3");
        Await.until("a leader of group 3", 60_000, () -> nodes.stream().anyMatch(n -> n.raftServer().group(3) != null
                && n.raftServer().group(3).isLeader()));
        assertEquals(0, kv("--group", "3", "put", "g3key", "v").exitCode);
        Path kept = tmp.resolve("data-3").resolve("group-3");
        assertEquals("OK: group 3 removed from node 3 (its data kept)\n", ok("remove-group", "3", "--on", "3").stdout);
        assertTrue(Files.isDirectory(kept), kept + " kept");
        CommandRun again = admin("remove-group", "3", "--on", "2,3", "--delete-data");
        assertEquals(AdminCommand.EXIT_OK, again.exitCode, again.toString());
        assertEquals("OK: group 3 removed from node 2 and its data deleted\n", again.stdout);
        assertTrue(Files.isDirectory(kept), "node 3 does not run group 3, so its kept replica stays: " + kept);
        CommandRun refused = admin("remove-group", "3", "--on", "3", "--delete-data");
        assertEquals(AdminCommand.EXIT_ERROR, refused.exitCode, refused.toString());
        assertTrue(refused.stderr.contains("nothing was removed and no data deleted"), refused.stderr);
        assertTrue(Files.isDirectory(kept), "a refused removal deleted " + kept);
        ok("remove-group", "3", "--delete-data");
    }

    @Test
    void aRemovalWithoutOnGoesPastANodeThatCannotBeAskedAndSaysSo() throws Exception {
        ok("add-group", "4", "--members", "1,2,3");
        int dead = LoopbackPorts.pick(1)[0];
        CommandRun r = CommandRun.adminInProcess("--servers", admin + ",4=127.0.0.1:" + dead, "--timeout", "8000",
                "remove-group", "4");
        assertEquals(AdminCommand.EXIT_ERROR, r.exitCode, r.toString());
        assertTrue(r.stderr.startsWith("poyang admin: PARTIAL: remove-group: group 4 removed from nodes 1,2,3 (its data"
                + " kept), but node 4 was not asked whether it runs the group ("), r.stderr);
        for (PoyangNode n : nodes) {
            assertEquals(null, n.raftServer().group(4), "node " + n.config().nodeId);
        }
        CommandRun none = CommandRun.adminInProcess("--servers", admin + ",4=127.0.0.1:" + dead, "--timeout", "8000",
                "remove-group", "4");
        assertEquals(AdminCommand.EXIT_ERROR, none.exitCode, none.toString());
        assertTrue(none.stderr.startsWith("poyang admin: UNREACHABLE: remove-group removed nothing: no node that answered runs group 4, and node 4"
                + " was not asked whether it runs the group"), none.stderr);
    }

    @Test
    void aPreparedChangeCanBeAbortedAndAbortingNothingIsFine() {
        ok("abort-change", "1");
        // a change to fewer voters needs no new member: prepared, then abandoned
        CommandRun prepared = ok("prepare-change", "1", "--members", "1,2");
        assertTrue(prepared.stdout.contains("voters 1,2,3 -> 1,2 (prepared; commit-change or abort-change next)"),
                prepared.stdout);
        assertTrue(ok("status").stdout.contains("voters 1,2,3 -> 1,2 (change prepared)"));
        CommandRun conflict = admin("prepare-change", "1", "--members", "2,3");
        assertEquals(AdminCommand.EXIT_ERROR, conflict.exitCode);
        assertTrue(conflict.stderr.startsWith("poyang admin: CONFLICT: "), conflict.stderr);
        assertEquals("OK: group 1 voters 1,2,3\n", ok("abort-change", "1").stdout);
        assertTrue(ok("status").stdout.contains("voters 1,2,3\n"));
    }

    @Test
    void refusalsAreNamedAndExitTwo() {
        CommandRun notVoter = admin("transfer-leader", "1", "9");
        assertEquals(AdminCommand.EXIT_ERROR, notVoter.exitCode);
        assertTrue(notVoter.stderr.startsWith("poyang admin: BAD_ARGUMENT: node 9 is not a voter"), notVoter.stderr);
        CommandRun unknown = admin("prepare-change", "1", "--members", "1,2,3,8");
        assertEquals(AdminCommand.EXIT_ERROR, unknown.exitCode);
        assertTrue(unknown.stderr.startsWith("poyang admin: UNKNOWN_NODE: node 8"), unknown.stderr);
        CommandRun json = admin("--json", "transfer-leader", "1", "9");
        assertTrue(json.stdout.startsWith("{\"ok\":false,\"error\":\"BAD_ARGUMENT\""), json.stdout);
    }

    @Test
    void aNodeThatCannotBeReachedIsReportedWithExitFour() throws Exception {
        int dead = LoopbackPorts.pick(1)[0];
        CommandRun r = CommandRun.adminInProcess("--servers", admin + ",4=127.0.0.1:" + dead, "--timeout", "3000", "status");
        assertEquals(AdminCommand.EXIT_UNREACHABLE, r.exitCode, r.toString());
        assertTrue(r.stdout.contains("node 4 (127.0.0.1:" + dead + "): unreachable: "), r.stdout);
        assertTrue(r.stdout.contains("voters 1,2,3"), "the others are still listed: " + r.stdout);
    }

    /**
     * A node that answers while one of its groups does not (its dispatcher is held by a task that
     * waits, so the group's status is never taken) is a part of the table missing, as a node not
     * reached is: its row says "no answer" and the command exits 4 (it exited 0).
     */
    @Test
    void aGroupThatDoesNotAnswerOnANodeThatDoesIsReportedWithExitFour() throws Exception {
        PoyangNode leader = cluster.awaitLeader(null, 60_000);
        PoyangNode follower = nodes.get(leader == nodes.get(0) ? 1 : 0);
        int stalled = follower.config().nodeId;
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        // with one dispatcher per node this holds every group of the follower, not its node status,
        // which the node answers from its network thread
        CompletableFuture<Boolean> hold = follower.raftServer().group(1).callInGroup(() -> {
            held.countDown();
            return resume.await(60, TimeUnit.SECONDS);
        });
        try {
            assertTrue(held.await(30, TimeUnit.SECONDS), "the follower's dispatcher is held");
            CommandRun r = CommandRun.adminInProcess("--servers", admin, "--timeout", "3000", "status");
            assertEquals(AdminCommand.EXIT_UNREACHABLE, r.exitCode, r.toString());
            String row = Arrays.stream(r.stdout.split("\n")).filter(l -> l.matches("1\\s+" + stalled + "\\s.*"))
                    .findFirst().orElseThrow(() -> new AssertionError("no row for node " + stalled + ": " + r.stdout));
            assertTrue(row.matches("1\\s+" + stalled + "\\s+\\?\\s+no answer: .*"), row);
            assertFalse(r.stdout.contains("unreachable"), "the node itself answered: " + r.stdout);
            assertEquals(3, Arrays.stream(r.stdout.split("\n")).filter(l -> l.matches("1\\s+\\d+\\s.*")).count(),
                    "every node's row is printed: " + r.stdout);
            CommandRun json = CommandRun.adminInProcess("--servers", admin, "--timeout", "3000", "--json", "status");
            assertEquals(AdminCommand.EXIT_UNREACHABLE, json.exitCode, json.toString());
            assertTrue(json.stdout.contains("{\"group\":1,\"node\":" + stalled + ",\"error\":"), json.stdout);
        } finally {
            resume.countDown();
        }
        assertTrue(hold.get(30, TimeUnit.SECONDS));
        // the held follower catches up before the other tests look at the table
        Await.until("node " + stalled + " to answer its status again, following a leader", 60_000,
                () -> {
                    CommandRun r = admin("status");
                    return r.exitCode == AdminCommand.EXIT_OK
                            && r.stdout.lines().anyMatch(l -> l.matches("1\\s+" + stalled + "\\s+FOLLOWER\\s.*"));
                });
    }

    @Test
    void aChangeThatReachesSomeNodesSaysWhichWereDoneAndWhichNot() throws Exception {
        int dead = LoopbackPorts.pick(1)[0];
        String withDead = "4=127.0.0.1:" + dead + "," + admin;
        CommandRun r = CommandRun.adminInProcess("--servers", withDead, "--timeout", "3000",
                "add-node", "7", "127.0.0.1:9999");
        assertEquals(AdminCommand.EXIT_ERROR, r.exitCode, r.toString());
        // the reachable nodes were told, and the error says which were and which not
        assertTrue(r.stderr.startsWith("poyang admin: PARTIAL: add-node was done on nodes 1,2,3 and not on node 4: "),
                r.stderr);
        for (PoyangNode n : nodes) {
            assertEquals("127.0.0.1:9999", n.raftServer().nodeAddresses().get(7), "node " + n.config().nodeId);
        }
        ok("remove-node", "7");
    }

    @Test
    void theTimeoutBoundsTheWholeCommandNotEachNodeInTurn() throws Exception {
        // three "nodes" that accept connections and never answer: asked in turn, each would take a
        // whole --timeout if the timeout were per request
        java.net.ServerSocket[] silent = new java.net.ServerSocket[3];
        List<java.net.Socket> held = Collections.synchronizedList(new ArrayList<>());
        StringBuilder servers = new StringBuilder();
        try {
            for (int i = 0; i < 3; i++) {
                java.net.ServerSocket ss = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
                silent[i] = ss;
                Thread t = new Thread(() -> {
                    try {
                        while (true) {
                            held.add(ss.accept());
                        }
                    } catch (IOException closed) {
                        // the test is over
                    }
                }, "silent-node-" + i);
                t.setDaemon(true);
                t.start();
                servers.append(i == 0 ? "" : ",").append(i + 5).append("=127.0.0.1:").append(ss.getLocalPort());
            }
            long start = System.nanoTime();
            CommandRun r = CommandRun.adminInProcess("--servers", servers.toString(), "--timeout", "1500",
                    "add-node", "9", "127.0.0.1:9999");
            long tookMillis = (System.nanoTime() - start) / 1_000_000;
            assertEquals(AdminCommand.EXIT_ERROR, r.exitCode, r.toString());
            // each node's request gets half the --timeout (the other half is for the nodes that answer)
            assertTrue(r.stderr.contains("node 5 did not answer the adding node 9 in time"), r.stderr);
            // one timeout and the time to start a client, not three timeouts (4,500 ms)
            assertTrue(tookMillis < 4_000, "took " + tookMillis + " ms: " + r);
        } finally {
            for (java.net.ServerSocket ss : silent) {
                if (ss != null) {
                    ss.close();
                }
            }
            for (java.net.Socket so : held) {
                so.close();
            }
        }
    }

    @Test
    void usageErrorsExitTwo() {
        assertEquals(AdminCommand.EXIT_ERROR, admin("frobnicate").exitCode);
        CommandRun noMembers = admin("prepare-change", "1");
        assertEquals(AdminCommand.EXIT_ERROR, noMembers.exitCode);
        assertTrue(noMembers.stderr.contains("--members IDS is required"), noMembers.stderr);
        assertEquals(AdminCommand.EXIT_ERROR, admin("transfer-leader", "1").exitCode);
        assertEquals(AdminCommand.EXIT_ERROR, admin("transfer-leader", "x", "1").exitCode);
        // one host:port, nothing else: these were accepted and written to servers.properties
        for (String bad : new String[]{"7=10.0.0.7:9431", "10.0.0.8:9431,10.0.0.9:9431", "::1:9431", "h:99999"}) {
            CommandRun r = admin("add-node", "7", bad);
            assertEquals(AdminCommand.EXIT_ERROR, r.exitCode, bad + ": " + r);
            assertTrue(r.stderr.contains("add-node NODE HOST:PORT: "), r.stderr);
        }
        CommandRun help = CommandRun.adminInProcess("--help");
        assertEquals(0, help.exitCode);
        assertTrue(help.stdout.contains("exit codes: 0 done, 2 error, 4 a node, or a group on it, could not be asked"));
    }

    private static CommandRun kv(String... args) {
        List<String> all = new ArrayList<>(Arrays.asList("--servers", kvServers, "--timeout", "30000"));
        all.addAll(Arrays.asList(args));
        return CommandRun.kvInProcess(all.toArray(new String[0]));
    }
}
