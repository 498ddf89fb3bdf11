package io.poyang.server.node;

import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.server.config.ConfigException;
import io.poyang.server.config.PropertiesFile;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A node's data directory, held for the life of the node process:
 *
 * <ul>
 *   <li>{@code poyang.pid} — the PID file: the running node's process id, and an exclusive OS lock
 *       on it ({@link FileChannel#tryLock()}) while the node runs, so a second node on the same
 *       directory refuses to start. The lock goes with the process (even on {@code kill -9}); a PID
 *       file left behind by a killed node is stale and simply taken over.</li>
 *   <li>{@code node.properties} — which node the directory belongs to ({@code nodeId}), the data
 *       format version ({@code dataFormat}) and, once the node runs with one, the cluster's name
 *       ({@code clusterName}); written atomically when the directory is first used, and again when
 *       a node of an unnamed directory starts with a name. A directory of another node id, of a
 *       newer format, or of another cluster is refused, and so is a start without a name on a
 *       named directory: a config that names the wrong cluster (or none) is caught before the node
 *       connects to anyone.</li>
 *   <li>{@code group-<id>/} — each raft group's log, index, status and snapshots (raft's own).</li>
 * </ul>
 */
public final class DataDir implements AutoCloseable {

    private static final PoyangLog log = PoyangLogs.get(DataDir.class);

    /** The data format this version writes and reads. Raise it when the layout changes incompatibly. */
    public static final int DATA_FORMAT = 1;
    public static final String PID_FILE = "poyang.pid";
    public static final String NODE_FILE = "node.properties";
    /** The key of the cluster's name in {@link #NODE_FILE}. */
    static final String CLUSTER_NAME_KEY = "clusterName";

    /**
     * Data directories this JVM holds, by {@link #identityOf} (not by path). Checked before the PID
     * file is even opened: on POSIX systems closing any channel of a file drops every lock this
     * process has on it, so a second attempt in the same JVM must not open (and then close) the PID
     * file at all — whatever path it reaches the directory by (a symbolic link, a bind mount).
     */
    private static final java.util.Set<Object> HELD = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final Path dir;
    /** This directory's key in {@link #HELD}. */
    private final Object identity;
    private final FileChannel pidChannel;
    private final FileLock lock;
    /** This open wrote the node file (the directory was new to any node). */
    private boolean claimedNow;
    /** This open added the cluster's name to a node file that had none (undone by {@link #unclaim}). */
    private boolean namedNow;
    /** The node id and cluster name (null: none) this open was for, named when undoing its claim fails. */
    private int claimedNodeId;
    private String claimedName;

    private DataDir(Path dir, Object identity, FileChannel pidChannel, FileLock lock) {
        this.dir = dir;
        this.identity = identity;
        this.pidChannel = pidChannel;
        this.lock = lock;
    }

    /** {@link #open(Path, int, String)} for a node that names no cluster. */
    public static DataDir open(Path dir, int nodeId) {
        return open(dir, nodeId, null);
    }

    /**
     * Takes {@code dir} for node {@code nodeId} of cluster {@code clusterName} (null: none): creates
     * it if needed, locks the PID file and writes this process's id into it, checks (or, for a new
     * directory, writes) {@code node.properties}, and records the cluster's name there the first time
     * the node runs with one.
     *
     * @throws NodeStartException when another process holds it, it belongs to another node or
     *                            another cluster, it is named and the node names no cluster, it was
     *                            written by a newer format, or it cannot be created or written
     */
    public static DataDir open(Path dir, int nodeId, String clusterName) {
        String cluster = noneIfBlank(clusterName);   // as config.properties reads an empty value
        Path abs = dir.toAbsolutePath().normalize();
        try {
            Files.createDirectories(abs);
        } catch (IOException e) {
            throw new NodeStartException("cannot create the data directory " + abs + ": " + e
                    + "; check dataDir and the permissions of its parent", e);
        }
        if (!Files.isWritable(abs)) {
            throw new NodeStartException("the data directory " + abs + " is not writable by this user");
        }
        Path pid = abs.resolve(PID_FILE);
        Object identity = identityOf(abs);
        if (!HELD.add(identity)) {
            throw new NodeStartException("the data directory " + abs + " is in use by another node in this process ("
                    + pid + " is locked); give each node its own dataDir");
        }
        FileChannel ch;
        try {
            ch = FileChannel.open(pid, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        } catch (IOException e) {
            HELD.remove(identity);
            throw new NodeStartException("cannot open the PID file " + pid + ": " + e, e);
        }
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;   // not expected after the HELD check; treated as held
        } catch (IOException e) {
            HELD.remove(identity);
            closeQuietly(ch);
            throw new NodeStartException("cannot lock the PID file " + pid + ": " + e, e);
        }
        if (lock == null) {
            String holder = readQuietly(ch).trim();
            HELD.remove(identity);
            closeQuietly(ch);
            throw new NodeStartException("the data directory " + abs + " is in use by another node process"
                    + (holder.isEmpty() ? "" : " (pid " + holder + ")") + ": " + pid + " is locked. Stop that"
                    + " node first, or give this one another dataDir");
        }
        DataDir d = new DataDir(abs, identity, ch, lock);
        try {
            d.writePid();
            d.checkOwner(nodeId, cluster);
        } catch (RuntimeException e) {
            d.release(false);
            throw e;
        }
        return d;
    }

    /**
     * What makes two paths the same directory: the file system's key for it (device and inode on
     * POSIX systems), else its real path (links resolved).
     */
    private static Object identityOf(Path abs) {
        try {
            Object key = Files.readAttributes(abs, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
            return key != null ? key : abs.toRealPath();
        } catch (IOException e) {
            throw new NodeStartException("cannot read the data directory " + abs + ": " + e, e);
        }
    }

    public Path path() {
        return dir;
    }

    public Path pidFile() {
        return dir.resolve(PID_FILE);
    }

    private void writePid() {
        byte[] b = (ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII);
        try {
            pidChannel.truncate(0);
            pidChannel.write(ByteBuffer.wrap(b), 0);
            pidChannel.force(true);
        } catch (IOException e) {
            throw new NodeStartException("cannot write the PID file " + pidFile() + ": " + e, e);
        }
    }

    /**
     * Forgets the claim this start wrote (a start that failed before anything ran): a directory first
     * used by a failed start, with a wrong node id in its config, is not left marked as that node's.
     * Undoing it can fail (the disk, permissions): the start's own error is what the caller reports,
     * so this one is logged, with the file to fix by hand, and the start goes on failing as it would.
     */
    public void unclaim() {
        Path f = dir.resolve(NODE_FILE);
        if (claimedNow) {
            claimedNow = false;
            try {
                Files.deleteIfExists(f);
            } catch (IOException e) {
                log.warn("the start failed, and removing {}, which it wrote, failed too ({}): the directory {} stays"
                        + " marked as node {}'s. If that nodeId was a mistake, delete {} by hand,"
                        + " or a start with the right nodeId is refused", f, e.toString(), dir,
                        claimedNodeId, f);
            }
        }
        if (namedNow) {
            namedNow = false;
            // the name may be a typo of a start that never ran: the directory goes back to unnamed
            try {
                PropertiesFile p = PropertiesFile.read(f);
                p.remove(CLUSTER_NAME_KEY);
                p.writeAtomically();
            } catch (IOException | ConfigException e) {
                log.warn("the start failed, and taking the cluster name '{}' it recorded out of {} failed too ({}):"
                        + " the directory stays named. If that name was a mistake, remove the {} line of {} by hand,"
                        + " with the node stopped, or a start with the right clusterName is refused", claimedName,
                        f, e.toString(), CLUSTER_NAME_KEY, f);
            }
        }
    }

    private void checkOwner(int nodeId, String clusterName) {
        claimedNodeId = nodeId;
        claimedName = clusterName;
        Path f = dir.resolve(NODE_FILE);
        if (!Files.exists(f)) {
            PropertiesFile p = PropertiesFile.empty(f);
            p.addComment("Written by the Poyang node when it first used this directory. A node refuses a");
            p.addComment("data directory of another node id, of another cluster or of a newer data format.");
            p.addComment("Edit only clusterName, with every node of the cluster stopped, to rename the");
            p.addComment("cluster (docs/operations.md); never nodeId or dataFormat.");
            p.set("nodeId", String.valueOf(nodeId));
            p.set("dataFormat", String.valueOf(DATA_FORMAT));
            if (clusterName != null) {
                p.set(CLUSTER_NAME_KEY, clusterName);
            }
            try {
                p.writeAtomically();
            } catch (IOException e) {
                throw new NodeStartException("cannot write " + f + ": " + e, e);
            }
            claimedNow = true;
            return;
        }
        PropertiesFile p;
        try {
            p = PropertiesFile.read(f);
        } catch (ConfigException e) {
            throw new NodeStartException("the data directory's " + NODE_FILE + " is damaged: " + e.getMessage()
                    + ". It records which node owns " + dir + "; restore it (nodeId = N, dataFormat = " + DATA_FORMAT
                    + ") if you know this is the right directory", e);
        }
        int owner = intOf(p, f, "nodeId");
        int format = intOf(p, f, "dataFormat");
        if (format > DATA_FORMAT) {
            throw new NodeStartException("the data directory " + dir + " was written by a newer Poyang (data format "
                    + format + "; this version reads up to " + DATA_FORMAT + "). Run the newer version, or restore"
                    + " a backup made before the upgrade (see docs/operations.md)");
        }
        if (owner != nodeId) {
            throw new NodeStartException("the data directory " + dir + " belongs to node " + owner + " (" + f
                    + "), not to node " + nodeId + ". Point dataDir at node " + nodeId + "'s directory, or fix nodeId"
                    + " in config.properties; never start a node on another node's data");
        }
        checkClusterName(p, f, clusterName);
    }

    /**
     * The directory's cluster against the config's: equal, or the directory unnamed (it takes the
     * config's name: how a running cluster is given a name, node by node). A named directory is never
     * renamed or unnamed by a config: a config of another cluster, or one that lost its name, would
     * otherwise let the node connect to whatever cluster answers at its peers' addresses.
     */
    private void checkClusterName(PropertiesFile p, Path f, String clusterName) {
        // an emptied value ("clusterName =", an edit meant to drop the name) records no name
        String recorded = noneIfBlank(p.get(CLUSTER_NAME_KEY));
        if (recorded == null) {
            if (clusterName != null) {
                p.set(CLUSTER_NAME_KEY, clusterName);
                try {
                    p.writeAtomically();
                } catch (IOException e) {
                    throw new NodeStartException("cannot record the cluster's name in " + f + ": " + e, e);
                }
                namedNow = true;
            }
            return;
        }
        if (clusterName == null) {
            throw new NodeStartException("the data directory " + dir + " belongs to a node of cluster '" + recorded
                    + "' (" + f + "), but config.properties names no cluster. Set clusterName = " + recorded
                    + " in config.properties; to take the name away from the cluster, remove the clusterName line of "
                    + NODE_FILE + " on every node, with the nodes stopped");
        }
        if (!recorded.equals(clusterName)) {
            throw new NodeStartException("the data directory " + dir + " belongs to a node of cluster '" + recorded
                    + "' (" + f + "), not of cluster '" + clusterName + "'. Fix clusterName in config.properties;"
                    + " never start a node on another cluster's data. To rename the cluster, set the new name in"
                    + " config.properties and in " + NODE_FILE + " on every node, with the nodes stopped");
        }
    }

    private static String noneIfBlank(String clusterName) {
        return clusterName == null || clusterName.trim().isEmpty() ? null : clusterName;
    }

    private static int intOf(PropertiesFile p, Path f, String key) {
        String v = p.get(key);
        try {
            if (v != null) {
                return Integer.parseInt(v);
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new NodeStartException(f + ": " + key + " is " + (v == null ? "missing" : "'" + v + "', not a number")
                + "; the file records which node owns this directory; restore it if you know the right value");
    }

    /** Empties the PID file and releases the lock (at a clean stop). */
    @Override
    public void close() {
        release(true);
    }

    private void release(boolean clearPid) {
        try {
            releaseLock(clearPid);
        } finally {
            // whatever happened to the file, this JVM no longer holds the directory: a later open
            // here must not be refused as "in use by another node in this process"
            HELD.remove(identity);
        }
    }

    private void releaseLock(boolean clearPid) {
        if (clearPid) {
            // Emptied, not deleted: a node that opened the file just before we release the lock
            // must get the lock of the file that stays in the directory. Had we deleted it, that
            // node would lock a file no longer there, and a third start would create and lock a new
            // one: two nodes on one data directory. (Nor may the file be opened and closed through
            // another channel while locked: closing any descriptor of it drops this process's lock.)
            try {
                pidChannel.truncate(0);
                pidChannel.force(true);
            } catch (IOException e) {
                // a stale PID in the file is harmless: the lock is what counts
            }
        }
        try {
            lock.release();
        } catch (IOException e) {
            // closing the channel releases it too
        }
        closeQuietly(pidChannel);
    }

    private static String readQuietly(FileChannel ch) {
        try {
            ByteBuffer b = ByteBuffer.allocate(64);
            ch.read(b, 0);
            b.flip();
            return StandardCharsets.US_ASCII.decode(b).toString();
        } catch (IOException e) {
            return "";
        }
    }

    private static void closeQuietly(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // nothing to do
        }
    }
}
