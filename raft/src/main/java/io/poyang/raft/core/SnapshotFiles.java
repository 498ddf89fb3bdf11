package io.poyang.raft.core;

import io.poyang.raft.sm.SnapshotMeta;
import io.poyang.raft.sm.SnapshotWriter;
import io.poyang.raft.store.FileIo;
import io.poyang.raft.store.LogFile;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The snapshot files of a group, in {@code <group dir>/snapshot/}. Blocking; I/O threads only.
 *
 * <pre>
 * 00000000000000012345-7.data   the state: chunks of [length:4][CRC32C:4][bytes], then an end
 *                               marker [0:4][chunk count:4]; big-endian
 * 00000000000000012345-7.meta   written last, after the data file was fsynced: it is the mark
 *                               that the snapshot is complete (lastIndex, lastTerm, members,
 *                               dataBytes, and a CRC32C of those lines)
 * receiving.tmp                 a snapshot coming from the leader, until its last chunk
 * *.meta.tmp                    a meta file being written (left over only by a crash)
 * </pre>
 *
 * A data file without its meta file is an interrupted snapshot and is deleted at start. A meta
 * file that fails its checks, or whose data file is missing or of another size, is a damaged
 * snapshot: {@link #scan} reports it and leaves its files alone. Every
 * read, write, fsync, rename, directory sync and delete goes through the group's {@link FileIo}
 * ({@link RaftConfig#logFileIo}), so tests fail any of them on purpose.
 */
final class SnapshotFiles {

    static final String DATA_SUFFIX = ".data";
    static final String META_SUFFIX = ".meta";
    static final String RECEIVING = "receiving.tmp";
    static final int CHUNK_BYTES = 64 * 1024;

    private SnapshotFiles() {
    }

    /** One complete snapshot on disk. {@code readers} is touched on the dispatcher thread only. */
    static final class Snapshot {
        final SnapshotMeta meta;
        final Path data;
        final Path metaFile;
        final long dataBytes;
        int readers;
        boolean deleteWhenUnread;

        Snapshot(SnapshotMeta meta, Path data, Path metaFile, long dataBytes) {
            this.meta = meta;
            this.data = data;
            this.metaFile = metaFile;
            this.dataBytes = dataBytes;
        }

        @Override
        public String toString() {
            return meta + " in " + data.getFileName();
        }
    }

    static String baseName(SnapshotMeta meta) {
        return String.format("%020d-%d", meta.lastIndex(), meta.lastTerm());
    }

    /**
     * A snapshot whose meta file exists but cannot be trusted: it fails its CRC or lacks a field, or
     * the data file it names is missing or of another size (truncated, say). Its files are left as
     * they are; {@link SnapshotManager#init} decides whether an older snapshot can stand in for it.
     */
    static final class Damaged {
        /** The index its file name gives, or {@link Long#MAX_VALUE} when the name does not give one. */
        final long lastIndex;
        final Path metaFile;
        final Path data;
        final String reason;

        Damaged(long lastIndex, Path metaFile, Path data, String reason) {
            this.lastIndex = lastIndex;
            this.metaFile = metaFile;
            this.data = data;
            this.reason = reason;
        }

        /** {@link #baseName}: the name its files share. */
        String baseName() {
            String n = metaFile.getFileName().toString();
            return n.substring(0, n.length() - META_SUFFIX.length());
        }

        @Override
        public String toString() {
            return metaFile.getFileName() + " (" + reason + ")";
        }
    }

    /** What {@link #scan} found in a snapshot directory. */
    static final class Scan {
        /** The snapshots whose meta file checks out and whose data file has the recorded size, oldest first. */
        final List<Snapshot> complete;
        /** The snapshots whose meta file or data file is damaged, in no particular order. */
        final List<Damaged> damaged;
        /**
         * Meta files that do not read and whose names are not a snapshot's ({@code <index>-<term>}):
         * not written by the node (a copy an operator left there, say), so left alone and ignored.
         */
        final List<Path> foreign;

        Scan(List<Snapshot> complete, List<Damaged> damaged, List<Path> foreign) {
            this.complete = complete;
            this.damaged = damaged;
            this.foreign = foreign;
        }
    }

    /**
     * Lists the snapshots, after removing leftovers of interrupted ones. A snapshot whose meta file
     * or data file is damaged is reported in {@link Scan#damaged}, not thrown: the start may go on
     * from an older snapshot.
     */
    static Scan scan(FileIo io, Path dir) throws IOException {
        Files.createDirectories(dir);
        List<Snapshot> found = new ArrayList<>();
        List<Damaged> damaged = new ArrayList<>();
        List<Path> foreign = new ArrayList<>();
        List<Path> dataFiles = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                if (n.endsWith(".tmp")) {
                    io.delete(p);
                } else if (n.endsWith(META_SUFFIX)) {
                    String base = n.substring(0, n.length() - META_SUFFIX.length());
                    Path data = dir.resolve(base + DATA_SUFFIX);
                    try {
                        found.add(readComplete(io, p, data));
                    } catch (IOException | RuntimeException e) {
                        long index = indexOfBaseName(base);
                        if (index == Long.MAX_VALUE) {
                            // not a name the node gives: taken for a damaged newest snapshot, it would
                            // fail every start, however sound the real snapshots are
                            foreign.add(p);
                        } else {
                            // an I/O error on the meta file is treated as damage too: either way the
                            // snapshot cannot be loaded, and an older one may do instead
                            damaged.add(new Damaged(index, p, data, e.toString()));
                        }
                    }
                } else if (n.endsWith(DATA_SUFFIX)) {
                    dataFiles.add(p);
                }
            }
        }
        for (Path d : dataFiles) {
            String n = d.getFileName().toString();
            Path meta = dir.resolve(n.substring(0, n.length() - DATA_SUFFIX.length()) + META_SUFFIX);
            if (!Files.exists(meta)) {
                io.delete(d);   // interrupted before its meta file: never complete
            }
        }
        found.sort(Comparator.comparingLong(s -> s.meta.lastIndex()));
        return new Scan(found, damaged, foreign);
    }

    /** Reads a meta file and checks that its data file has the size it records. */
    private static Snapshot readComplete(FileIo io, Path metaFile, Path data) throws IOException {
        Map<String, String> m = readMeta(io, metaFile);
        SnapshotMeta meta = new SnapshotMeta(Long.parseLong(m.get("lastIndex")),
                Integer.parseInt(m.get("lastTerm")), parseMembers(m.get("members")),
                m.containsKey("newVoters") ? parseMembers(m.get("newVoters")) : null,
                parseMembers(m.getOrDefault("observers", "")),
                parseMembers(m.getOrDefault("oldObservers", "")),
                Integer.parseInt(m.getOrDefault("format", "0")));
        long bytes = Long.parseLong(m.get("dataBytes"));
        if (!Files.exists(data)) {
            throw new IOException("its data file " + data.getFileName() + " is missing");
        }
        long size = Files.size(data);
        if (size != bytes) {
            throw new IOException("its data file " + data.getFileName() + " has " + size + " bytes, the meta file"
                    + " records " + bytes + " (truncated or overwritten)");
        }
        return new Snapshot(meta, data, metaFile, bytes);
    }

    /**
     * The last index a base name ({@link #baseName}: {@code <index>-<term>}, digits only) gives, or
     * {@link Long#MAX_VALUE} for another name.
     */
    static long indexOfBaseName(String base) {
        int dash = base.indexOf('-');
        if (dash <= 0 || dash == base.length() - 1) {
            return Long.MAX_VALUE;
        }
        for (int i = 0; i < base.length(); i++) {
            char c = base.charAt(i);
            if (i != dash && (c < '0' || c > '9')) {
                return Long.MAX_VALUE;
            }
        }
        try {
            return Long.parseLong(base.substring(0, dash));
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;   // too many digits
        }
    }

    /**
     * Writes a snapshot: the data file (fsynced), then the meta file as the commit mark. On failure
     * nothing of this attempt is left behind (see {@link #commit}).
     */
    static Snapshot write(FileIo io, Path dir, SnapshotMeta meta, SnapshotWriter writer) throws IOException {
        Files.createDirectories(dir);
        String base = baseName(meta);
        Path tmp = dir.resolve(base + DATA_SUFFIX + ".tmp");
        Path data = dir.resolve(base + DATA_SUFFIX);
        boolean moved = false;
        try {
            long bytes;
            try (LogFile f = io.open(tmp)) {
                f.setLength(0);
                ChunkOutputStream out = new ChunkOutputStream(f);
                writer.writeTo(out);
                out.finish();
                f.force(true);
                bytes = out.position;
            }
            io.atomicMove(tmp, data);
            moved = true;
            return commit(io, dir, meta, data, bytes);
        } catch (IOException | RuntimeException e) {
            removeFailed(io, e, dir, base, tmp, moved);
            throw e;
        }
    }

    /**
     * Makes a data file received from the leader a complete snapshot: fsyncs and closes it, checks
     * it, renames it and writes its meta file. On failure the received file is deleted too.
     */
    static Snapshot commitReceived(FileIo io, Path dir, SnapshotMeta meta, LogFile received) throws IOException {
        String base = baseName(meta);
        Path tmp = received.path();
        Path data = dir.resolve(base + DATA_SUFFIX);
        boolean moved = false;
        try {
            long bytes;
            try (LogFile f = received) {
                f.force(true);
                bytes = f.size();
            }
            verify(io, tmp);
            io.atomicMove(tmp, data);
            moved = true;
            return commit(io, dir, meta, data, bytes);
        } catch (IOException | RuntimeException e) {
            removeFailed(io, e, dir, base, tmp, moved);
            throw e;
        }
    }

    /**
     * Typically the disk is full: the partial files would hold on to the space until the next start
     * (each failed attempt, at a later index, leaving another one behind). The data file goes only
     * if this attempt put it there and no meta file made it complete ({@link #commit} removes the
     * meta file it renamed into place when the directory sync after it fails).
     */
    private static void removeFailed(FileIo io, Throwable cause, Path dir, String base, Path tmp, boolean moved) {
        deleteQuietly(io, cause, tmp, dir.resolve(base + META_SUFFIX + ".tmp"));
        if (moved && !Files.exists(dir.resolve(base + META_SUFFIX))) {
            deleteQuietly(io, cause, dir.resolve(base + DATA_SUFFIX));
        }
    }

    /** Best-effort removal of a failed snapshot's files; what cannot be deleted is noted on {@code cause}. */
    private static void deleteQuietly(FileIo io, Throwable cause, Path... files) {
        for (Path p : files) {
            try {
                io.delete(p);
            } catch (IOException | RuntimeException suppressed) {
                cause.addSuppressed(suppressed);
            }
        }
    }

    private static Snapshot commit(FileIo io, Path dir, SnapshotMeta meta, Path data, long bytes) throws IOException {
        syncDirectory(io, dir);
        Map<String, String> m = new LinkedHashMap<>();
        m.put("lastIndex", Long.toString(meta.lastIndex()));
        m.put("lastTerm", Integer.toString(meta.lastTerm()));
        m.put("members", joinMembers(meta.members()));
        if (meta.newVoters() != null) {
            m.put("newVoters", joinMembers(meta.newVoters()));
        }
        m.put("observers", joinMembers(meta.observers()));
        m.put("oldObservers", joinMembers(meta.oldObservers()));
        m.put("format", Integer.toString(meta.format()));
        m.put("dataBytes", Long.toString(bytes));
        Path metaFile = dir.resolve(baseName(meta) + META_SUFFIX);
        Path tmp = dir.resolve(baseName(meta) + META_SUFFIX + ".tmp");
        byte[] content = encodeMeta(m);
        boolean moved = false;
        try {
            try (LogFile f = io.open(tmp)) {
                f.setLength(0);
                f.writeFully(ByteBuffer.wrap(content), 0);
                f.force(true);
            }
            io.atomicMove(tmp, metaFile);
            moved = true;
            syncDirectory(io, dir);
        } catch (IOException | RuntimeException e) {
            // A meta file whose rename may not be durable is not reported written, so it must not
            // stay either: unlisted, it would be nobody's to delete until the next start.
            deleteQuietly(io, e, moved ? new Path[]{metaFile, tmp} : new Path[]{tmp});
            throw e;
        }
        return new Snapshot(meta, data, metaFile, bytes);
    }

    /** Deletes a snapshot: the meta file first, so a crash in between leaves an incomplete one, removed at start. */
    static void delete(FileIo io, Snapshot s) throws IOException {
        io.delete(s.metaFile);
        io.delete(s.data);
    }

    /** Deletes a damaged snapshot's files, the meta file first (a data file left alone is removed at start). */
    static void delete(FileIo io, Damaged d) throws IOException {
        io.delete(d.metaFile);
        io.delete(d.data);
    }

    /** Reads the data file through, checking every chunk's CRC and the end marker. */
    static void verify(FileIo io, Path data) throws IOException {
        try (InputStream in = open(io, data)) {
            byte[] buf = new byte[CHUNK_BYTES];
            while (in.read(buf) >= 0) {
                // reading is the check
            }
        }
    }

    /** The snapshot's state as a stream, checked chunk by chunk; it ends at the end marker. */
    static InputStream open(FileIo io, Path data) throws IOException {
        return open(io, data, () -> false);
    }

    /**
     * Like {@link #open(FileIo, Path)}, but once {@code abandoned} says so the stream reads nothing
     * more from the file: the next read throws (a group stopped while it loads its snapshot, whose
     * state machine would otherwise read the whole file for nothing). Checked before each file read.
     */
    static InputStream open(FileIo io, Path data, java.util.function.BooleanSupplier abandoned) throws IOException {
        return new ChunkInputStream(io.openForRead(data), abandoned);
    }

    static void syncDirectory(FileIo io, Path dir) throws IOException {
        try {
            io.syncDirectory(dir);
        } catch (IOException e) {
            // some file systems cannot open a directory for syncing; the rename is then as durable as it gets
            if (!System.getProperty("os.name", "").toLowerCase().contains("win")) {
                throw e;
            }
        }
    }

    // ---------------------------------------------------------------- meta file

    private static byte[] encodeMeta(Map<String, String> values) {
        StringBuilder sb = new StringBuilder("# poyang raft snapshot; written after its data file was fsynced\n");
        for (Map.Entry<String, String> e : values.entrySet()) {
            sb.append(e.getKey()).append('=').append(e.getValue()).append('\n');
        }
        byte[] body = sb.toString().getBytes(StandardCharsets.UTF_8);
        CRC32C crc = new CRC32C();
        crc.update(body, 0, body.length);
        return (sb + "crc=" + Long.toHexString(crc.getValue()) + "\n").getBytes(StandardCharsets.UTF_8);
    }

    static Map<String, String> readMeta(FileIo io, Path p) throws IOException {
        String text;
        try (LogFile f = io.openForRead(p)) {
            long size = f.size();
            if (size > (1 << 20)) {
                throw new IOException("snapshot meta file " + p + " is " + size + " bytes; it is damaged");
            }
            ByteBuffer b = ByteBuffer.allocate((int) size);
            f.readFully(b, 0);
            text = new String(b.array(), 0, b.position(), StandardCharsets.UTF_8);
        }
        int crcAt = text.lastIndexOf("crc=");
        if (crcAt < 0) {
            throw new IOException("snapshot meta file " + p + " has no crc line; it is damaged");
        }
        byte[] body = text.substring(0, crcAt).getBytes(StandardCharsets.UTF_8);
        CRC32C crc = new CRC32C();
        crc.update(body, 0, body.length);
        if (!Long.toHexString(crc.getValue()).equals(text.substring(crcAt + 4).trim())) {
            throw new IOException("snapshot meta file " + p + " fails its CRC; it is damaged");
        }
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : text.substring(0, crcAt).split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int eq = line.indexOf('=');
            m.put(line.substring(0, eq), line.substring(eq + 1));
        }
        for (String k : new String[]{"lastIndex", "lastTerm", "members", "dataBytes"}) {
            if (!m.containsKey(k)) {
                throw new IOException("snapshot meta file " + p + " lacks '" + k + "'");
            }
        }
        return m;
    }

    static String joinMembers(int[] members) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < members.length; i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append(members[i]);
        }
        return sb.toString();
    }

    static int[] parseMembers(String s) {
        if (s.isEmpty()) {
            return new int[0];
        }
        String[] parts = s.split(",");
        int[] r = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            r[i] = Integer.parseInt(parts[i].trim());
        }
        return r;
    }

    // ---------------------------------------------------------------- chunked streams

    /** Cuts what the state machine writes into CRC'd chunks. */
    private static final class ChunkOutputStream extends OutputStream {
        private final LogFile file;
        private final byte[] buf = new byte[CHUNK_BYTES];
        private final ByteBuffer header = ByteBuffer.allocate(8);
        private final CRC32C crc = new CRC32C();
        private int used;
        private int chunks;
        /** Bytes written so far: the file's length once finished. */
        long position;

        ChunkOutputStream(LogFile file) {
            this.file = file;
        }

        @Override
        public void write(int b) throws IOException {
            if (used == buf.length) {
                flushChunk();
            }
            buf[used++] = (byte) b;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            while (len > 0) {
                if (used == buf.length) {
                    flushChunk();
                }
                int n = Math.min(len, buf.length - used);
                System.arraycopy(b, off, buf, used, n);
                used += n;
                off += n;
                len -= n;
            }
        }

        private void flushChunk() throws IOException {
            if (used == 0) {
                return;
            }
            crc.reset();
            crc.update(buf, 0, used);
            header.clear();
            header.putInt(used).putInt((int) crc.getValue()).flip();
            writeFully(header);
            writeFully(ByteBuffer.wrap(buf, 0, used));
            used = 0;
            chunks++;
        }

        void finish() throws IOException {
            flushChunk();
            header.clear();
            header.putInt(0).putInt(chunks).flip();
            writeFully(header);
        }

        private void writeFully(ByteBuffer b) throws IOException {
            int n = b.remaining();
            file.writeFully(b, position);
            position += n;
        }
    }

    /** Reads chunks back, checking each CRC; a missing end marker or a bad CRC is an IOException. */
    private static final class ChunkInputStream extends InputStream {
        private final LogFile file;
        private final Path path;
        private final ByteBuffer header = ByteBuffer.allocate(8);
        private final CRC32C crc = new CRC32C();
        private byte[] chunk = new byte[0];
        private int pos;
        private int len;
        private int chunks;
        private boolean ended;
        /** Where the next chunk's header starts. */
        private long next;

        private final java.util.function.BooleanSupplier abandoned;

        ChunkInputStream(LogFile file, java.util.function.BooleanSupplier abandoned) {
            this.file = file;
            this.path = file.path();
            this.abandoned = abandoned;
        }

        private boolean nextChunk() throws IOException {
            if (ended) {
                return false;
            }
            long at = next;
            header.clear();
            readFully(header, at);
            header.flip();
            int n = header.getInt();
            int c = header.getInt();
            if (n == 0) {
                if (c != chunks) {
                    throw new IOException(path + ": the end marker at offset " + at + " counts " + c
                            + " chunks, but " + chunks + " were read; the file is damaged");
                }
                ended = true;
                next = at + 8;
                return false;
            }
            if (n < 0 || n > (16 << 20)) {
                throw new IOException(path + ": a chunk at offset " + at + " claims " + n + " bytes; the file is damaged");
            }
            if (chunk.length < n) {
                chunk = new byte[n];
            }
            ByteBuffer b = ByteBuffer.wrap(chunk, 0, n);
            readFully(b, at + 8);
            crc.reset();
            crc.update(chunk, 0, n);
            if ((int) crc.getValue() != c) {
                throw new IOException(path + ": the chunk at offset " + at + " fails its CRC; the file is damaged");
            }
            pos = 0;
            len = n;
            chunks++;
            next = at + 8 + n;
            return true;
        }

        private void readFully(ByteBuffer b, long at) throws IOException {
            if (abandoned.getAsBoolean()) {
                throw new IOException(path + ": reading the snapshot was abandoned (its group was stopped)");
            }
            int n = file.readFully(b, at);
            if (b.hasRemaining()) {
                throw new EOFException(path + " ends inside a chunk at offset " + (at + n)
                        + "; the snapshot is incomplete or damaged");
            }
        }

        @Override
        public int read() throws IOException {
            if (pos == len && !nextChunk()) {
                return -1;
            }
            return chunk[pos++] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int n) throws IOException {
            if (n == 0) {
                return 0;
            }
            if (pos == len && !nextChunk()) {
                return -1;
            }
            int r = Math.min(n, len - pos);
            System.arraycopy(chunk, pos, b, off, r);
            pos += r;
            return r;
        }

        @Override
        public void close() throws IOException {
            file.close();
        }
    }
}
