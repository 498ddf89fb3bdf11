package io.poyang.server.process;

import io.poyang.server.Await;
import io.poyang.server.ServerCommand;
import io.poyang.server.cli.AdminCommand;
import io.poyang.server.cli.CommandRun;
import io.poyang.server.config.PropertiesFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Collections;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Four real node processes: a fourth node joins the three-node sample cluster as an observer, is
 * promoted to a voter, takes the leadership, and an old member is removed — each step a
 * {@code poyang admin} command — while the data stays readable; every node writes the changes it
 * sees into its own servers.properties.
 */
class MembershipProcessTest {

    @TempDir
    Path tmp;

    private static CommandRun admin(String... args) throws Exception {
        CommandRun r = CommandRun.admin(args);
        assertEquals(AdminCommand.EXIT_OK, r.exitCode, "admin " + String.join(" ", args) + ": " + r);
        return r;
    }

    private static void put(String servers, String key, String value) {
        CommandRun r = CommandRun.kvInProcess("--servers", servers, "--timeout", "30000", "put", key, value);
        assertEquals(0, r.exitCode, "put " + key + ": " + r);
    }

    private static void awaitServersFile(Cluster c, int node, String key, String value) throws Exception {
        Await.until("node " + node + "'s servers.properties to say " + key + " = " + value, 30_000, () -> {
            PropertiesFile f = c.serversFile(node);
            return value == null ? !f.contains(key) : value.equals(f.get(key));
        });
    }

    @Test
    void aFourthNodeJoinsAsObserverIsPromotedAndAnOldMemberIsRemoved() throws Exception {
        try (Cluster c = new Cluster(tmp, 4, Collections.emptyMap())) {
            for (int id = 1; id <= 3; id++) {
                c.forget(id, 4);   // the first three know nothing of node 4
            }
            c.run(() -> {
                for (int id = 1; id <= 3; id++) {
                    c.start(id);
                }
                for (int id = 1; id <= 3; id++) {
                    c.awaitReady(id);
                }
                c.awaitLeader(60_000, 1, 2, 3);
                String kv123 = c.servers(1, 2, 3);
                CommandRun mkdir = CommandRun.kvInProcess("--servers", kv123, "--timeout", "30000", "mkdir", "app");
                assertEquals(0, mkdir.exitCode, mkdir.toString());
                for (int i = 0; i < 20; i++) {
                    put(kv123, "app.a" + i, "a" + i);
                }

                // node 4 starts hosting nothing: its servers.properties lists it, not in group 1
                c.start(4);
                String ready = c.nodes.get(4).awaitReady(120_000);
                assertTrue(ready.contains(", groups none, "), ready);

                String all = c.admin(1, 2, 3, 4);
                admin("--servers", c.admin(1, 2, 3), "add-node", "4", "127.0.0.1:" + c.ports.get(4).replication);
                awaitServersFile(c, 1, "node.4", "127.0.0.1:" + c.ports.get(4).replication);
                admin("--servers", all, "add-group", "1", "--members", "1,2,3", "--observers", "4", "--on", "4");
                admin("--servers", all, "prepare-change", "1", "--members", "1,2,3", "--observers", "4");
                CommandRun observer = admin("--servers", all, "commit-change", "1", "--members", "1,2,3", "--observers", "4");
                assertTrue(observer.stdout.contains("voters 1,2,3, observers 4"), observer.stdout);
                awaitServersFile(c, 2, "group.1.observers", "4");

                // the observer catches up: the status table shows it, with the leader's lag figure
                Await.until("node 4 to apply everything", 60_000, () -> {
                    try {
                        String h = c.health(4);
                        long leader = Http.groupField(h, 1, "leader");
                        return leader > 0 && Http.groupField(h, 1, "appliedIndex")
                                >= Http.groupField(c.health((int) leader), 1, "commitIndex");
                    } catch (Exception e) {
                        return false;
                    }
                });
                CommandRun status = admin("--servers", all, "status");
                assertTrue(status.stdout.startsWith("GROUP  NODE  ROLE"), status.stdout);
                assertTrue(status.stdout.contains("FOLLOWER (observer)"), status.stdout);
                assertTrue(status.stdout.contains("voters 1,2,3, observers 4"), status.stdout);

                // promoted to a voter
                admin("--servers", all, "prepare-change", "1", "--members", "1,2,3,4");
                admin("--servers", all, "commit-change", "1", "--members", "1,2,3,4");
                awaitServersFile(c, 4, "group.1.members", "1,2,3,4");
                awaitServersFile(c, 3, "group.1.members", "1,2,3,4");
                // node 3 syncs once a second: it may never have seen (nor written) the "observers 4"
                // layout, so the line is either gone from its file or empty, never "4"
                String observers3 = c.serversFile(3).get("group.1.observers");
                assertTrue(observers3 == null || observers3.isEmpty(), "node 3 still lists observers " + observers3);
                put(kv123, "app.b0", "b0");

                // it takes the leadership; node 1 (no longer the leader) leaves
                CommandRun transfer = admin("--servers", all, "transfer-leader", "1", "4");
                assertTrue(transfer.stdout.contains("OK: node 4 leads group 1"), transfer.stdout);
                assertEquals(4, c.awaitLeader(60_000, 2, 3, 4));
                admin("--servers", all, "prepare-change", "1", "--members", "2,3,4");
                admin("--servers", all, "commit-change", "1", "--members", "2,3,4");
                admin("--servers", all, "remove-group", "1", "--on", "1");
                admin("--servers", c.admin(2, 3, 4), "remove-node", "1");
                for (int id = 2; id <= 4; id++) {
                    awaitServersFile(c, id, "group.1.members", "2,3,4");
                    awaitServersFile(c, id, "node.1", null);
                }
                awaitServersFile(c, 1, "group.1.members", null);   // node 1 no longer runs group 1
                c.nodes.get(1).terminate();
                assertEquals(ServerCommand.EXIT_STOPPED, c.nodes.get(1).waitForExit(60_000));

                // the three left serve reads and writes; nothing written before is missing
                String kv234 = c.servers(2, 3, 4);
                put(kv234, "app.c0", "c0");
                CommandRun list = CommandRun.kv("--servers", kv234, "list", "app");
                assertEquals(0, list.exitCode, list.toString());
                for (int i = 0; i < 20; i++) {
                    assertTrue(list.stdout.contains("app.a" + i + " = a" + i + "\n"), list.stdout);
                }
                assertTrue(list.stdout.contains("app.b0 = b0\n") && list.stdout.contains("app.c0 = c0\n"), list.stdout);
                CommandRun after = admin("--servers", c.admin(2, 3, 4), "status", "--json");
                assertTrue(after.stdout.contains("\"voters\":[2,3,4]"), after.stdout);
                assertFalse(after.stdout.contains("\"node\":1,"), after.stdout);

                // a restart reads the layout the node wrote back: node 4 comes back as a voter of group 1
                c.nodes.get(4).terminate();
                assertEquals(ServerCommand.EXIT_STOPPED, c.nodes.get(4).waitForExit(60_000));
                c.start(4);
                String again = c.nodes.get(4).awaitReady(120_000);
                assertTrue(again.contains(", groups 1, "), again);
                c.awaitLeader(60_000, 2, 3, 4);
                put(kv234, "app.d0", "d0");
                // its vote counts: with node 2 gone, nodes 3 and 4 are the majority of 2,3,4
                c.nodes.get(2).terminate();
                assertEquals(ServerCommand.EXIT_STOPPED, c.nodes.get(2).waitForExit(60_000));
                c.awaitLeader(60_000, 3, 4);
                put(c.servers(3, 4), "app.e0", "e0");
            });
        }
    }
}
