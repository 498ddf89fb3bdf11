package io.poyang.server.node;

import io.poyang.raft.core.Members;
import io.poyang.server.config.NodeConfig;
import io.poyang.server.config.PropertiesFile;
import io.poyang.server.config.ServersConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/** The servers.properties rewrite: groups run outside their configuration, and a file that cannot be written. */
class ServersFileSyncTest {

    @TempDir
    Path tmp;

    @Test
    void aFileThatCannotBeWrittenIsReportedOnceNotEverySecond() throws Exception {
        try (InProcessNodes cluster = new InProcessNodes(tmp, 1, Collections.emptyMap())) {
            PoyangNode node = cluster.nodes().get(0);
            Path file = Files.createDirectories(tmp.resolve("read-only-conf")).resolve("servers.properties");
            // a directory where the rewrite puts its temporary file: every write fails (as root, a
            // read-only mode would not stop it)
            Files.createDirectories(file.resolveSibling("servers.properties.tmp"));
            TreeMap<Integer, String> nodes = new TreeMap<>();
            nodes.put(1, node.raftServer().selfAddress());
            // loaded without the group the node runs: the running layout differs, so each sync tries to write
            ServersConfig loaded = new ServersConfig(nodes, new TreeMap<>());
            ServersFileSync sync = new ServersFileSync(1, node.raftServer(), file, loaded);
            AtomicInteger warnings = new AtomicInteger();
            Handler counter = new Handler() {
                @Override
                public void publish(LogRecord r) {
                    if (r.getLevel() == Level.WARNING && String.valueOf(r.getMessage()).contains("writing")) {
                        warnings.incrementAndGet();
                    }
                }

                @Override
                public void flush() {
                }

                @Override
                public void close() {
                }
            };
            Logger logger = Logger.getLogger(ServersFileSync.class.getName());
            logger.addHandler(counter);
            try {
                for (int i = 0; i < 5; i++) {
                    sync.sync();   // what the timer does once a second
                }
            } finally {
                logger.removeHandler(counter);
            }
            assertEquals(1, warnings.get(), "one warning for five failed rewrites with the same cause");
        }
    }

    /**
     * A node given a group whose configuration leaves it out (add-group --on before the change that
     * takes it in): the file says so at once, before the add is answered, and a restart from the
     * file runs the group again.
     */
    @Test
    void aGroupRunOutsideItsConfigurationIsInTheFileAtOnceAndRunsAgainAfterARestart() throws Exception {
        try (InProcessNodes cluster = new InProcessNodes(tmp, 3, Collections.emptyMap())) {
            PoyangNode node = cluster.nodes().get(0);
            Path file = tmp.resolve("conf-1").resolve("servers.properties");
            node.raftServer().addGroup(5, node.kvService().stateMachine(5), new Members(2, 3)).get(60, TimeUnit.SECONDS);
            PropertiesFile written = PropertiesFile.read(file);
            assertEquals("2,3", written.get("group.5.members"), "written before the add was answered");
            assertEquals("1", written.get("group.5.nonMembers"));
            node.stop();
            PoyangNode again = new PoyangNode(NodeConfig.load(tmp.resolve("conf-1").resolve("config.properties")),
                    ServersConfig.load(file), file);
            try {
                again.start();
                assertNotNull(again.raftServer().group(5), "the restarted node runs group 5 again");
                assertArrayEquals(new int[]{2, 3}, again.raftServer().group(5).members().voters(),
                        "a non-member is not made a member by the restart");
                again.raftServer().removeGroup(5, true).get(60, TimeUnit.SECONDS);
                assertFalse(PropertiesFile.read(file).contains("group.5.members"), "written before the removal was answered");
            } finally {
                again.stop();
            }
        }
    }
}
