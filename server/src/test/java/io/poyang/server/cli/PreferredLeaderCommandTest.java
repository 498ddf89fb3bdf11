package io.poyang.server.cli;

import io.poyang.net.LoopbackPorts;
import io.poyang.raft.client.AdminClient;
import io.poyang.raft.client.AdminClientConfig;
import io.poyang.raft.client.AdminError;
import io.poyang.raft.client.GroupStatus;
import io.poyang.raft.client.RaftAdminException;
import io.poyang.server.Await;
import io.poyang.server.config.PropertiesFile;
import io.poyang.server.node.InProcessNodes;
import io.poyang.server.node.PoyangNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ./poyang admin preferred-leader GROUP NODE} and the preferred leader in {@code status},
 * against three DtKV nodes in this JVM: set on every node, shown by status, acted on by the leader,
 * written to every servers.properties; a node that is no voter refused with BAD_ARGUMENT; nodes
 * the command could not reach named.
 */
class PreferredLeaderCommandTest {

    private static Path tmp;
    private static InProcessNodes cluster;
    private static List<PoyangNode> nodes;
    private static String admin;

    @BeforeAll
    static void start() throws Exception {
        tmp = Files.createTempDirectory("preferred-leader-command-test");
        cluster = new InProcessNodes(tmp, 3, Collections.emptyMap());
        nodes = cluster.nodes();
        admin = cluster.adminServers();
        cluster.awaitLeader(null, 60_000);
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

    /** Each test starts with no preferred leader anywhere. */
    @AfterEach
    void clear() {
        for (PoyangNode n : nodes) {
            n.raftServer().group(1).setPreferredLeader(0);
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

    private static Path serversFile(int node) {
        return tmp.resolve("conf-" + node).resolve("servers.properties");
    }

    private static long rowsEndingWith(String text, String suffix) {
        return text.lines().filter(l -> l.matches("1\\s+\\d\\s.*") && l.endsWith(suffix)).count();
    }

    @Test
    void theVerbSetsItOnEveryNodeStatusShowsItAndTheLeadershipMovesThere() throws Exception {
        PoyangNode leader = cluster.awaitLeader(null, 60_000);
        int target = leader == nodes.get(2) ? 2 : 3;
        String before = ok("status").stdout;
        assertEquals(3, rowsEndingWith(before, "voters 1,2,3"), before);
        assertTrue(ok("--json", "status").stdout.contains("\"preferredLeader\":0"));

        CommandRun set = ok("preferred-leader", "1", String.valueOf(target));
        assertEquals("OK: node " + target + " is the preferred leader of group 1 on nodes 1,2,3 (the leader hands it"
                + " the leadership once it is caught up, and again after every failover; status shows the leader)\n",
                set.stdout);
        for (PoyangNode n : nodes) {
            assertEquals(target, n.raftServer().group(1).preferredLeader(), "node " + n.config().nodeId);
        }
        // recorded before the answer: a node that crashed right after it keeps the preference
        for (int i = 1; i <= 3; i++) {
            assertEquals(String.valueOf(target), PropertiesFile.read(serversFile(i)).get("group.1.preferredLeader"),
                    "node " + i + "'s servers.properties once the command was answered");
        }
        Await.until("node " + target + " to lead group 1, as every node sees it", 60_000,
                () -> nodes.stream().allMatch(n -> n.raftServer().group(1).leaderId() == target)
                        && nodes.get(target - 1).raftServer().group(1).isLeader());

        String after = ok("status").stdout;
        assertEquals(3, rowsEndingWith(after, "voters 1,2,3, preferred leader " + target), after);
        String json = ok("--json", "status").stdout;
        assertEquals(3, json.split("\"preferredLeader\":" + target + ",", -1).length - 1, json);

        CommandRun cleared = ok("--json", "preferred-leader", "1", "0");
        assertEquals("{\"ok\":true,\"op\":\"preferred-leader\",\"details\":{\"group\":1,\"preferredLeader\":0,"
                + "\"on\":[1,2,3]}}\n", cleared.stdout);
        for (PoyangNode n : nodes) {
            assertEquals(0, n.raftServer().group(1).preferredLeader(), "node " + n.config().nodeId);
        }
        assertEquals(3, rowsEndingWith(ok("status").stdout, "voters 1,2,3"));
        for (int i = 1; i <= 3; i++) {
            assertFalse(PropertiesFile.read(serversFile(i)).contains("group.1.preferredLeader"),
                    "node " + i + "'s servers.properties once the clearing was answered");
        }
    }

    @Test
    void aNodeThatIsNotAVoterIsRefusedWithBadArgumentAndNothingIsSet() throws Exception {
        CommandRun r = admin("preferred-leader", "1", "9");
        assertEquals(AdminCommand.EXIT_ERROR, r.exitCode, r.toString());
        assertEquals("", r.stdout);
        assertTrue(r.stderr.startsWith("poyang admin: BAD_ARGUMENT: node 9 is not a voter of raft group 1 on node 1"
                + " (its configuration there: voters [1, 2, 3]), so it cannot be its preferred leader; name one of its"
                + " voters, or 0 for none"), r.stderr);
        CommandRun json = admin("--json", "preferred-leader", "1", "9");
        assertTrue(json.stdout.startsWith("{\"ok\":false,\"error\":\"BAD_ARGUMENT\""), json.stdout);
        for (PoyangNode n : nodes) {
            assertEquals(0, n.raftServer().group(1).preferredLeader(), "node " + n.config().nodeId);
        }
        // the client's typed error, from any node
        AdminClientConfig cfg = new AdminClientConfig();
        for (PoyangNode n : nodes) {
            cfg.node(n.config().nodeId, "127.0.0.1:" + n.replicationPort());
        }
        try (AdminClient client = new AdminClient(cfg)) {
            client.start();
            RaftAdminException e = assertThrows(RaftAdminException.class, () -> client.setPreferredLeader(2, 1, 9));
            assertEquals(AdminError.BAD_ARGUMENT, e.error());
            assertEquals(2, e.nodeId());
            RaftAdminException noGroup = assertThrows(RaftAdminException.class,
                    () -> client.setPreferredLeader(2, 77, 1));
            assertEquals(AdminError.NO_SUCH_GROUP, noGroup.error());
            GroupStatus st = client.setPreferredLeader(2, 1, 1);
            assertEquals(1, st.preferredLeader(), "the answer is the status after the setting: " + st);
            assertEquals(1, client.groupStatus(2, 1).preferredLeader());
            assertEquals(0, client.groupStatus(3, 1).preferredLeader(), "set on node 2 only");
        }
        CommandRun usage = admin("preferred-leader", "1", "-1");
        assertEquals(AdminCommand.EXIT_ERROR, usage.exitCode, usage.toString());
        assertTrue(usage.stderr.contains("NODE (or 0 for none) must be a positive id, not '-1'"), usage.stderr);
    }

    @Test
    void nodesTheCommandCouldNotReachAndVotersNotInServersAreNamed() throws Exception {
        int dead = LoopbackPorts.pick(1)[0];
        CommandRun r = CommandRun.adminInProcess("--servers", admin + ",4=127.0.0.1:" + dead, "--timeout", "8000",
                "preferred-leader", "1", "2");
        assertEquals(AdminCommand.EXIT_ERROR, r.exitCode, r.toString());
        assertTrue(r.stderr.startsWith("poyang admin: PARTIAL: preferred-leader: node 2 is the preferred leader of"
                + " group 1 on nodes 1,2,3, but not on node 4 (not asked whether it runs the group): "), r.stderr);
        for (PoyangNode n : nodes) {
            assertEquals(2, n.raftServer().group(1).preferredLeader(), "node " + n.config().nodeId);
        }
        String two = "1=127.0.0.1:" + nodes.get(0).replicationPort() + ",2=127.0.0.1:" + nodes.get(1).replicationPort();
        CommandRun partOfTheGroup = CommandRun.adminInProcess("--servers", two, "--timeout", "30000",
                "preferred-leader", "1", "1");
        assertEquals(AdminCommand.EXIT_ERROR, partOfTheGroup.exitCode, partOfTheGroup.toString());
        assertTrue(partOfTheGroup.stderr.startsWith("poyang admin: PARTIAL: preferred-leader: node 1 is the preferred"
                + " leader of group 1 on nodes 1,2, but not on node 3, a voter of the group not in --servers. A node without"
                + " the setting that comes to lead keeps the leadership"), partOfTheGroup.stderr);
        assertFalse(nodes.get(2).raftServer().group(1).preferredLeader() == 1, "node 3 was not told");
    }
}
