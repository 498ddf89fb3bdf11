package io.poyang.server.node;

import io.poyang.raft.store.LogCounter;
import io.poyang.server.config.PropertiesFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The data directory's PID lock holds however the directory is named; it keeps its node id and cluster name. */
class DataDirTest {

    @TempDir
    Path tmp;

    @Test
    void aSecondOpenThroughASymbolicLinkIsRefusedAndKeepsTheFirstLock() throws Exception {
        Path real = Files.createDirectories(tmp.resolve("data"));
        Path link = Files.createSymbolicLink(tmp.resolve("link-to-data"), real);
        try (DataDir first = DataDir.open(real, 1)) {
            NodeStartException e = assertThrows(NodeStartException.class, () -> DataDir.open(link, 1));
            assertTrue(e.getMessage().contains("in use by another node in this process"), e.getMessage());
            // The refused attempt must not have opened and closed the PID file: on POSIX systems that
            // drops this process's lock, and another process could then take the directory.
            assertEquals("held", lockSeenByAnotherProcess(first.pidFile()));
        }
    }

    @Test
    void aNewDirectoryRecordsTheClusterNameAndRefusesAnother() throws Exception {
        Path data = tmp.resolve("data");
        DataDir.open(data, 1, "prod").close();
        assertEquals("prod", recordedClusterName(data));
        DataDir.open(data, 1, "prod").close();

        NodeStartException other = assertThrows(NodeStartException.class, () -> DataDir.open(data, 1, "staging"));
        assertTrue(other.getMessage().contains("belongs to a node of cluster 'prod'"), other.getMessage());
        assertTrue(other.getMessage().contains("not of cluster 'staging'"), other.getMessage());
        NodeStartException none = assertThrows(NodeStartException.class, () -> DataDir.open(data, 1, null));
        assertTrue(none.getMessage().contains("names no cluster. Set clusterName = prod"), none.getMessage());
        assertEquals("prod", recordedClusterName(data));
        // refused without keeping the directory: the right config starts
        DataDir.open(data, 1, "prod").close();
    }

    @Test
    void anUnnamedDirectoryTakesTheNameOfItsFirstNamedStart() throws Exception {
        Path data = tmp.resolve("data");
        DataDir.open(data, 1, null).close();
        assertNull(recordedClusterName(data));
        DataDir.open(data, 1, null).close();

        DataDir.open(data, 1, "prod").close();   // a cluster named node by node, by rolling restarts
        assertEquals("prod", recordedClusterName(data));
        assertEquals("1", PropertiesFile.read(data.resolve(DataDir.NODE_FILE)).get("nodeId"));
        assertThrows(NodeStartException.class, () -> DataDir.open(data, 1, "staging"));
    }

    @Test
    void aStartThatFailsBeforeRunningForgetsTheNameItGaveTheDirectory() throws Exception {
        Path data = tmp.resolve("data");
        DataDir.open(data, 1, null).close();
        DataDir typo = DataDir.open(data, 1, "prdo");
        assertEquals("prdo", recordedClusterName(data));
        typo.unclaim();
        typo.close();
        assertNull(recordedClusterName(data));
        assertEquals("1", PropertiesFile.read(data.resolve(DataDir.NODE_FILE)).get("nodeId"));
        DataDir.open(data, 1, "prod").close();
        assertEquals("prod", recordedClusterName(data));

        // a name recorded before is kept by a failed start that only confirmed it
        DataDir again = DataDir.open(data, 1, "prod");
        again.unclaim();
        again.close();
        assertEquals("prod", recordedClusterName(data));
    }

    /**
     * Undoing a failed start's claim can fail itself; it used to be swallowed, leaving a directory
     * marked with a mistyped node id or cluster name and nothing saying so. Now each failure is logged
     * with the file to fix. (The node file is replaced by a non-empty directory: removing or
     * rewriting it fails as on a read-only or failing disk, and even for root.)
     */
    @Test
    void aClaimThatCannotBeUndoneIsLoggedWithTheFileToFix() throws Exception {
        Path data = tmp.resolve("data");
        Path f = data.resolve(DataDir.NODE_FILE);
        DataDir wrongId = DataDir.open(data, 7);
        blockNodeFile(f);
        try (LogCounter logs = new LogCounter()) {
            wrongId.unclaim();
            wrongId.close();
            assertEquals(1, logs.warnings.get(), "warnings: " + logs.messages);
            String m = logs.messages.peek();
            assertTrue(m.contains("removing " + f) && m.contains("marked as node 7's")
                    && m.contains("delete " + f + " by hand"), m);
        }

        Path named = tmp.resolve("named");
        Path g = named.resolve(DataDir.NODE_FILE);
        DataDir.open(named, 1, null).close();
        DataDir typo = DataDir.open(named, 1, "prdo");
        blockNodeFile(g);
        try (LogCounter logs = new LogCounter()) {
            typo.unclaim();
            typo.close();
            assertEquals(1, logs.warnings.get(), "warnings: " + logs.messages);
            String m = logs.messages.peek();
            assertTrue(m.contains("cluster name 'prdo'") && m.contains("remove the clusterName line of " + g
                    + " by hand"), m);
        }
    }

    /** Puts a non-empty directory where the node file was. */
    private static void blockNodeFile(Path f) throws Exception {
        Files.delete(f);
        Files.createDirectories(f.resolve("in-the-way"));
    }

    @Test
    void anEmptyClusterNameIsNone() throws Exception {
        // "clusterName =" left in node.properties (the name dropped by hand): no cluster, as in config.properties
        Path data = tmp.resolve("data");
        DataDir.open(data, 1, null).close();
        Path f = data.resolve(DataDir.NODE_FILE);
        Files.write(f, "clusterName =\n".getBytes(StandardCharsets.UTF_8), StandardOpenOption.APPEND);
        DataDir.open(data, 1, null).close();
        DataDir.open(data, 1, "prod").close();   // and it takes a name like an unnamed directory
        assertEquals("prod", recordedClusterName(data));

        // an empty name given through the API is no name either: nothing is recorded that refuses "none" later
        Path other = tmp.resolve("other");
        DataDir.open(other, 1, "").close();
        assertNull(recordedClusterName(other));
        DataDir.open(other, 1, null).close();
    }

    private static String recordedClusterName(Path data) {
        return PropertiesFile.read(data.resolve(DataDir.NODE_FILE)).get(DataDir.CLUSTER_NAME_KEY);
    }

    /** "held" or "free": what another JVM finds when it tries to lock {@code file}. */
    private static String lockSeenByAnotherProcess(Path file) throws Exception {
        Process p = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), LockProbe.class.getName(), file.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the lock probe did not end");
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
    }

    /** Run in a child JVM: prints whether the file's lock is free. */
    public static final class LockProbe {
        public static void main(String[] args) throws Exception {
            try (FileChannel ch = FileChannel.open(new File(args[0]).toPath(), StandardOpenOption.WRITE)) {
                FileLock lock = ch.tryLock();
                System.out.println(lock == null ? "held" : "free");
            }
        }
    }
}
