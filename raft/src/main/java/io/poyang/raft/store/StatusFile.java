package io.poyang.raft.store;

import io.poyang.fiber.FiberFuture;
import io.poyang.fiber.FiberGroup;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.zip.CRC32C;

/**
 * The small file of a group's durable state: raft's term, vote and commit index, and the positions
 * recovery starts from. Text, one {@code key=value} per line, ending with a {@code crc=} line (the
 * CRC32C of everything before it), so an operator can read it and a damaged one is recognised.
 *
 * <p>A save writes {@code status.tmp}, fsyncs it, renames it over {@code status} and fsyncs the
 * directory: a crash at any point leaves either the old or the new content under {@code status}
 * (rename is atomic; a half-written temp file is never read). Saves are serialised: a save asked
 * for while one is running waits for it and then writes the latest content once for all who asked
 * meanwhile.
 */
final class StatusFile {

    static final String FILE_NAME = "status";
    static final String TEMP_NAME = "status.tmp";

    private final Path dir;
    private final FileIo io;
    private final Executor ioExecutor;
    private final FiberGroup group;
    private final Supplier<Map<String, String>> content;
    /** Told of each save that succeeded, with what it wrote, before its waiters resume. */
    private final Consumer<Map<String, String>> onSaved;

    private FiberFuture<Void> running;
    private FiberFuture<Void> queued;
    private long saveCount;

    StatusFile(Path dir, FileIo io, Executor ioExecutor, FiberGroup group, Supplier<Map<String, String>> content) {
        this(dir, io, ioExecutor, group, content, null);
    }

    StatusFile(Path dir, FileIo io, Executor ioExecutor, FiberGroup group, Supplier<Map<String, String>> content,
               Consumer<Map<String, String>> onSaved) {
        this.dir = dir;
        this.io = io;
        this.ioExecutor = ioExecutor;
        this.group = group;
        this.content = content;
        this.onSaved = onSaved;
    }

    Path path() {
        return dir.resolve(FILE_NAME);
    }

    /** A save is under way (its write, fsync or rename may be running on an I/O thread). Dispatcher thread. */
    boolean isSaving() {
        return running != null;
    }

    /** Saves completed so far. Dispatcher thread. */
    long saveCount() {
        return saveCount;
    }

    /**
     * Saves the content the supplier gives when the write starts; the future completes after the
     * rename and the directory fsync. Dispatcher thread.
     */
    FiberFuture<Void> save() {
        if (running == null) {
            running = group.newFuture("status-save");
            start(running);
            return running;
        }
        if (queued == null) {
            queued = group.newFuture("status-save");
        }
        return queued;
    }

    private void start(FiberFuture<Void> result) {
        Map<String, String> values = content.get();
        byte[] bytes = encode(values);
        FiberFuture<Void> done = group.executeBlocking("status-write", ioExecutor, () -> {
            writeBlocking(bytes);
            return null;
        });
        done.whenComplete((v, e) -> {
            running = null;
            if (e == null) {
                saveCount++;
                if (onSaved != null) {
                    onSaved.accept(values);
                }
                result.complete(null);
            } else {
                result.completeExceptionally(new LogStoreException("saving " + path() + " failed (" + e
                        + "); the previous content is intact. Check the disk (space, permissions, kernel log)", e));
            }
            if (queued != null) {
                running = queued;
                queued = null;
                start(running);
            }
        });
    }

    /** The blocking write, for the I/O executor (and recovery). */
    void writeBlocking(byte[] bytes) throws IOException {
        Path tmp = dir.resolve(TEMP_NAME);
        try (LogFile f = io.open(tmp)) {
            f.setLength(0);
            f.writeFully(ByteBuffer.wrap(bytes), 0);
            f.force(true);
        }
        io.atomicMove(tmp, path());
        io.syncDirectory(dir);
    }

    static byte[] encode(Map<String, String> values) {
        StringBuilder sb = new StringBuilder();
        sb.append("# poyang raft group status; written by the log store, do not edit\n");
        for (Map.Entry<String, String> e : values.entrySet()) {
            sb.append(e.getKey()).append('=').append(e.getValue()).append('\n');
        }
        byte[] body = sb.toString().getBytes(StandardCharsets.UTF_8);
        CRC32C crc = new CRC32C();
        crc.update(body, 0, body.length);
        byte[] tail = ("crc=" + Long.toHexString(crc.getValue()) + "\n").getBytes(StandardCharsets.UTF_8);
        byte[] all = new byte[body.length + tail.length];
        System.arraycopy(body, 0, all, 0, body.length);
        System.arraycopy(tail, 0, all, body.length, tail.length);
        return all;
    }

    /**
     * Reads the status file; an empty map when there is none yet (a new group). A leftover temp
     * file is a save that did not reach its rename and is ignored. Blocking.
     */
    Map<String, String> loadBlocking() throws IOException {
        Path p = path();
        if (!Files.exists(p)) {
            return new LinkedHashMap<>();
        }
        byte[] all = Files.readAllBytes(p);
        return decode(p, all);
    }

    static Map<String, String> decode(Path p, byte[] all) {
        String text = new String(all, StandardCharsets.UTF_8);
        int crcLine = text.lastIndexOf("crc=");
        if (crcLine < 0 || (crcLine > 0 && text.charAt(crcLine - 1) != '\n')) {
            throw new LogCorruptedException(p, 0, "status file has no crc line");
        }
        byte[] body = text.substring(0, crcLine).getBytes(StandardCharsets.UTF_8);
        CRC32C crc = new CRC32C();
        crc.update(body, 0, body.length);
        String stored = text.substring(crcLine + 4).trim();
        if (!Long.toHexString(crc.getValue()).equals(stored)) {
            throw new LogCorruptedException(p, body.length, "status file fails its CRC");
        }
        Map<String, String> values = new LinkedHashMap<>();
        for (String line : text.substring(0, crcLine).split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int eq = line.indexOf('=');
            if (eq < 0) {
                throw new LogCorruptedException(p, 0, "status file has a malformed line '" + line + "'");
            }
            values.put(line.substring(0, eq), line.substring(eq + 1));
        }
        return values;
    }
}
