package io.poyang.raft.server;

import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.store.LogCorruptedException;
import io.poyang.raft.store.LogCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A committed entry in a running leader's log is damaged (a flipped bit on the disk), and a
 * follower that comes back needs it: the leader's read finds the damage. Its group must fail once,
 * naming the file and offset, and leadership move on; before, the replicator read it again and
 * warned with a stack trace at every heartbeat, for as long as the leader lived.
 */
class DamagedLogEntryTest {

    @TempDir
    Path dir;

    @Test
    void aDamagedEntryTheLeaderReadsForAFollowerFailsItsGroupOnceNamingTheFileAndOffset() throws Exception {
        try (LogCounter warnings = new LogCounter();
             RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.tailCache(50, 1 << 20))) {
            c.start();
            int leader = c.waitForLeader(1);
            int away = leader % 3 + 1;
            long first = c.write(1, 1);
            RaftCluster.waitFor("node " + away + " to apply index " + first, () -> c.group(away, 1).lastApplied() >= first);
            c.stopNode(away);
            long damaged = c.write(1, 2);
            for (int v = 3; v <= 200; v++) {
                c.write(1, v);
            }
            // the leader's tail cache now holds the last 50 entries: the returning node's come from the disk
            Path segment = dir.resolve("node-" + leader).resolve("group-1").resolve("log")
                    .resolve(String.format("%020d", 0));
            long offset = flipBodyByte(segment, damaged);
            c.startNode(away);

            RaftGroup lg = c.group(leader, 1);
            RaftCluster.waitFor("the leader's group to fail", 15, () -> lg.failure() != null);
            LogCorruptedException corrupt = null;
            for (Throwable t = lg.failure(); t != null && corrupt == null; t = t.getCause()) {
                if (t instanceof LogCorruptedException) {
                    corrupt = (LogCorruptedException) t;
                }
            }
            assertNotNull(corrupt, "the group failed with the damage: " + lg.failure());
            assertEquals(segment.toAbsolutePath().normalize(), corrupt.file().toAbsolutePath().normalize());
            assertEquals(offset, corrupt.fileOffset());
            // the others go on without it, and the returning node catches up from the new leader
            long after = c.write(1, 201);
            RaftCluster.waitFor("node " + away + " to catch up", () -> c.group(away, 1).lastApplied() >= after);
            long readWarnings = warnings.messages.stream().filter(m -> m.contains("reading entries from")).count();
            assertTrue(readWarnings <= 1, readWarnings + " warnings about the failed read");
        }
    }

    /** Flips a byte in the body of the item with {@code index} in {@code segment}; returns the item's offset. */
    private static long flipBodyByte(Path segment, long index) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
            long pos = 0;
            while (true) {
                f.seek(pos);
                byte[] header = new byte[48];
                f.readFully(header);
                ByteBuffer h = ByteBuffer.wrap(header);
                int total = h.getInt(0);
                assertTrue(total > 0 && h.get(12) != 127, "index " + index + " is in " + segment);
                if (h.getLong(28) == index) {
                    int headerBytes = h.getInt(4);
                    assertTrue(h.getInt(8) > 2, "index " + index + " has a body");
                    long at = pos + 48 + (headerBytes > 0 ? headerBytes + 4 : 0) + 1;
                    f.seek(at);
                    int b = f.read();
                    f.seek(at);
                    f.write(b ^ 0x5A);
                    return pos;
                }
                pos += total;
            }
        }
    }
}
