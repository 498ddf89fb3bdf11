package io.poyang.raft.core;

import io.poyang.raft.sm.SnapshotMeta;
import io.poyang.raft.sm.SnapshotWriter;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
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
 * A data file without its meta file is an interrupted snapshot and is deleted at start.
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

    /** Lists the complete snapshots, oldest first, after removing leftovers of interrupted ones. */
    static List<Snapshot> scan(Path dir) throws IOException {
        Files.createDirectories(dir);
        List<Snapshot> found = new ArrayList<>();
        List<Path> dataFiles = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                if (n.endsWith(".tmp")) {
                    Files.deleteIfExists(p);
                } else if (n.endsWith(META_SUFFIX)) {
                    Path data = dir.resolve(n.substring(0, n.length() - META_SUFFIX.length()) + DATA_SUFFIX);
                    Map<String, String> m = readMeta(p);
                    SnapshotMeta meta = new SnapshotMeta(Long.parseLong(m.get("lastIndex")),
                            Integer.parseInt(m.get("lastTerm")), parseMembers(m.get("members")),
                            m.containsKey("newVoters") ? parseMembers(m.get("newVoters")) : null,
                            parseMembers(m.getOrDefault("observers", "")),
                            parseMembers(m.getOrDefault("oldObservers", "")),
                            Integer.parseInt(m.getOrDefault("format", "0")));
                    long bytes = Long.parseLong(m.get("dataBytes"));
                    if (!Files.exists(data) || Files.size(data) != bytes) {
                        throw new IOException("snapshot " + p + " names a data file " + data + " of " + bytes
                                + " bytes that is missing or of another size; move the snapshot files away to start"
                                + " without it (the node then needs the log or a snapshot from the leader)");
                    }
                    found.add(new Snapshot(meta, data, p, bytes));
                } else if (n.endsWith(DATA_SUFFIX)) {
                    dataFiles.add(p);
                }
            }
        }
        for (Path d : dataFiles) {
            String n = d.getFileName().toString();
            Path meta = dir.resolve(n.substring(0, n.length() - DATA_SUFFIX.length()) + META_SUFFIX);
            if (!Files.exists(meta)) {
                Files.deleteIfExists(d);   // interrupted before its meta file: never complete
            }
        }
        found.sort(Comparator.comparingLong(s -> s.meta.lastIndex()));
        return found;
    }

    /** Writes a snapshot: the data file (fsynced), then the meta file as the commit mark. */
    static Snapshot write(Path dir, SnapshotMeta meta, SnapshotWriter writer) throws IOException {
        Files.createDirectories(dir);
        String base = baseName(meta);
        Path tmp = dir.resolve(base + DATA_SUFFIX + ".tmp");
        Path data = dir.resolve(base + DATA_SUFFIX);
        Path metaFile = dir.resolve(base + META_SUFFIX);
        boolean moved = false;
        try {
            long bytes;
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ChunkOutputStream out = new ChunkOutputStream(ch);
                writer.writeTo(out);
                out.finish();
                ch.force(true);
                bytes = ch.size();
            }
            Files.move(tmp, data, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            moved = true;
            return commit(dir, meta, data, bytes);
        } catch (IOException | RuntimeException e) {
            // Typically the disk is full: the partial files would hold on to the space until the
            // next start (each failed attempt, at a later index, leaving another one behind). The
            // data file goes only if this attempt put it there and no meta file made it complete.
            deleteQuietly(e, tmp, dir.resolve(base + META_SUFFIX + ".tmp"));
            if (moved && !Files.exists(metaFile)) {
                deleteQuietly(e, data);
            }
            throw e;
        }
    }

    /** Best-effort removal of a failed snapshot's files; what cannot be deleted is noted on {@code cause}. */
    private static void deleteQuietly(Throwable cause, Path... files) {
        for (Path p : files) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException | RuntimeException suppressed) {
                cause.addSuppressed(suppressed);
            }
        }
    }

    /** Makes a received (or written) data file a complete snapshot: renames it and writes its meta file. */
    static Snapshot commitReceived(Path dir, SnapshotMeta meta, Path received) throws IOException {
        try (FileChannel ch = FileChannel.open(received, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        verify(received);
        Path data = dir.resolve(baseName(meta) + DATA_SUFFIX);
        Files.move(received, data, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return commit(dir, meta, data, Files.size(data));
    }

    private static Snapshot commit(Path dir, SnapshotMeta meta, Path data, long bytes) throws IOException {
        syncDirectory(dir);
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
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer b = ByteBuffer.wrap(content);
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        }
        Files.move(tmp, metaFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        syncDirectory(dir);
        return new Snapshot(meta, data, metaFile, bytes);
    }

    /** Deletes a snapshot: the meta file first, so a crash in between leaves an incomplete one, removed at start. */
    static void delete(Snapshot s) throws IOException {
        Files.deleteIfExists(s.metaFile);
        Files.deleteIfExists(s.data);
    }

    /** Reads the data file through, checking every chunk's CRC and the end marker. */
    static void verify(Path data) throws IOException {
        try (InputStream in = open(data)) {
            byte[] buf = new byte[CHUNK_BYTES];
            while (in.read(buf) >= 0) {
                // reading is the check
            }
        }
    }

    /** The snapshot's state as a stream, checked chunk by chunk; it ends at the end marker. */
    static InputStream open(Path data) throws IOException {
        return new ChunkInputStream(FileChannel.open(data, StandardOpenOption.READ), data);
    }

    static void syncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
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

    static Map<String, String> readMeta(Path p) throws IOException {
        String text = new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
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
        private final FileChannel ch;
        private final byte[] buf = new byte[CHUNK_BYTES];
        private final ByteBuffer header = ByteBuffer.allocate(8);
        private final CRC32C crc = new CRC32C();
        private int used;
        private int chunks;

        ChunkOutputStream(FileChannel ch) {
            this.ch = ch;
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
            while (b.hasRemaining()) {
                ch.write(b);
            }
        }
    }

    /** Reads chunks back, checking each CRC; a missing end marker or a bad CRC is an IOException. */
    private static final class ChunkInputStream extends InputStream {
        private final FileChannel ch;
        private final Path path;
        private final ByteBuffer header = ByteBuffer.allocate(8);
        private final CRC32C crc = new CRC32C();
        private byte[] chunk = new byte[0];
        private int pos;
        private int len;
        private int chunks;
        private boolean ended;

        ChunkInputStream(FileChannel ch, Path path) {
            this.ch = ch;
            this.path = path;
        }

        private boolean nextChunk() throws IOException {
            if (ended) {
                return false;
            }
            long at = ch.position();
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
            return true;
        }

        private void readFully(ByteBuffer b, long at) throws IOException {
            ch.position(at);
            while (b.hasRemaining()) {
                if (ch.read(b) < 0) {
                    throw new EOFException(path + " ends inside a chunk at offset " + ch.position()
                            + "; the snapshot is incomplete or damaged");
                }
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
            ch.close();
        }
    }
}
