package io.poyang.raft.store;

import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * Brings a node's log files up to date from its journal before any group opens its log: every
 * intact record after the checkpoint is written again into its target file, in the journal's order,
 * the targets are fsynced, and a new checkpoint after the last record is saved. Writing a record
 * again is harmless when its bytes already reached the file (same bytes, same place), so replay
 * does not need to know which did: after a process crash all did, after an OS crash or power loss
 * some did not.
 *
 * <p>Replay stops at the first record that is not whole and intact or does not carry the next
 * sequence number: the journal's torn tail, or an earlier lap's record. A record for a file that no
 * longer exists is skipped: the log deleted it (compaction, a reset after a snapshot, a removed
 * group) or renamed it to be a later segment (compaction with {@code recycledSegments}), and every
 * later record of that group goes to other paths: a recycled file's records name its new path,
 * which it takes before the journal gets any record for it.
 *
 * <p>Also creates the journal the first time, and re-creates its files when the configured count or
 * size changed (after replaying them with the old shape).
 */
final class JournalReplay {

    private static final PoyangLog log = PoyangLogs.get(JournalReplay.class);

    private final Path root;
    private final Path dir;
    private final FileIo io;
    private final Map<Path, LogFile> targets = new LinkedHashMap<>();
    private long records;
    private long bytes;
    private long skipped;

    private JournalReplay(Path root, Path dir, FileIo io) {
        this.root = root;
        this.dir = dir;
        this.io = io;
    }

    /**
     * Replays (or creates) the journal in {@code dir}, whose record paths are relative to
     * {@code root}, and returns where the writer goes on: both checkpoint slots are saved with that
     * position.
     */
    static JournalPosition replayOrCreate(Path root, Path dir, FileIo io, int fileCount, long fileBytes)
            throws IOException {
        Files.createDirectories(dir);
        JournalReplay r = new JournalReplay(root, dir, io);
        JournalFormat.Checkpoint cp = readCheckpoint(io, dir);
        if (cp == null) {
            // new (or its making was cut short: the checkpoint is saved last, so no record was written)
            JournalPosition start = new JournalPosition(0, 0, 1);
            r.makeFiles(fileCount, fileBytes);
            CheckpointSlots.create(io, dir, start, fileCount, fileBytes);
            writeDowngradeGuard(io, dir);
            log.info("made the log journal in {}: {} files of {} bytes", dir, fileCount, fileBytes);
            return start;
        }
        boolean legacy = cp.generation == 0;
        JournalPosition end = r.replay(cp);
        r.syncTargets();
        if (r.records > 0 || r.skipped > 0) {
            log.info("replayed the log journal in {}: {} records ({} bytes) from {} to {}; {} records for deleted files"
                    + " skipped", dir, r.records, r.bytes, cp.start, end, r.skipped);
        }
        if (cp.fileCount != fileCount || cp.fileBytes != fileBytes) {
            // everything replayed is synced in its own file: the journal may start afresh in its new shape.
            // The checkpoint goes first: a start cut short from here on (a full disk while making the
            // new files, a crash) finds none and makes the journal anew, instead of a checkpoint
            // naming files that are gone
            deleteCheckpoints(io, dir);
            for (int i = 0; i < cp.fileCount; i++) {
                io.delete(dir.resolve(JournalFormat.fileName(i)));
            }
            JournalPosition start = new JournalPosition(0, 0, end.seq + SEQ_GAP_AFTER_START);
            r.makeFiles(fileCount, fileBytes);
            CheckpointSlots.create(io, dir, start, fileCount, fileBytes);
            writeDowngradeGuard(io, dir);
            log.info("the log journal in {} now has {} files of {} bytes (it had {} of {})", dir, fileCount, fileBytes,
                    cp.fileCount, cp.fileBytes);
            return start;
        }
        // The writer goes on at the end with sequence numbers far ahead: records after the end that
        // are intact but were never fsynced (a torn round: a later part of one write can reach the
        // disk without an earlier part) can then never continue the chain once the new records,
        // written over the torn one, happen to end where such a record begins. Both slots get the
        // new start: an older position's chain ends at the jump, so it would no longer be a valid start.
        JournalPosition next = new JournalPosition(end.file, end.offset, end.seq + SEQ_GAP_AFTER_START);
        if (legacy) {
            // an upgrade: the slots file is made whole before the guard replaces the legacy file,
            // so a crash between the two leaves both, and the slots win (readCheckpoint)
            CheckpointSlots.create(io, dir, next, fileCount, fileBytes);
            writeDowngradeGuard(io, dir);
            log.info("the log journal in {} keeps its checkpoint in {} from now on (written in place; it was {})", dir,
                    JournalFormat.CHECKPOINT_SLOTS, JournalFormat.LEGACY_CHECKPOINT);
        } else {
            try (CheckpointSlots slots = CheckpointSlots.open(io, dir)) {
                slots.saveInBoth(next, fileCount, fileBytes);
            }
            if (!hasDowngradeGuard(io, dir)) {
                // a start cut short between making the slots and the guard (or between deleting
                // them). Best effort: the journal is whole without it, and a start on a full disk,
                // which needs no new block otherwise, must not fail for want of one
                try {
                    writeDowngradeGuard(io, dir);
                } catch (IOException e) {
                    log.warn("writing the log journal's downgrade guard {} failed ({}); a Poyang from before {} would"
                            + " not refuse this journal. The next start tries again", dir.resolve(
                            JournalFormat.LEGACY_CHECKPOINT), e.toString(), JournalFormat.CHECKPOINT_SLOTS);
                }
            }
        }
        return next;
    }

    /** How far the sequence numbers jump at each start (see replayOrCreate). */
    static final long SEQ_GAP_AFTER_START = 1L << 32;

    /**
     * The checkpoint replay starts from: the newest intact slot of the slots file, or, when there is
     * none, the legacy checkpoint file of journals made before the slots (its generation is 0);
     * null when neither exists (no journal, or its making was cut short).
     */
    static JournalFormat.Checkpoint readCheckpoint(FileIo io, Path dir) throws IOException {
        JournalFormat.Checkpoint cp = CheckpointSlots.read(io, dir);
        if (cp != null) {
            return cp;
        }
        Path legacy = dir.resolve(JournalFormat.LEGACY_CHECKPOINT);
        if (!Files.exists(legacy)) {
            return null;
        }
        if (hasDowngradeGuard(io, dir)) {
            throw new LogCorruptedException(CheckpointSlots.path(dir), 0, "the log journal's checkpoint file is"
                    + " missing (its " + JournalFormat.LEGACY_CHECKPOINT + " file says the journal keeps it there);"
                    + " the journal's records cannot be replayed, and the groups' logs may lack writes they reported"
                    + " persisted. Restore the file from a backup, or rebuild this node from the others");
        }
        ByteBuffer b = ByteBuffer.allocate(JournalFormat.LEGACY_CHECKPOINT_BYTES + 1);
        int n;
        try (LogFile f = io.openForRead(legacy)) {
            n = f.readFully(b, 0);
        }
        b.flip();
        cp = n == JournalFormat.LEGACY_CHECKPOINT_BYTES ? JournalFormat.decodeLegacyCheckpoint(b) : null;
        if (cp == null) {
            throw new LogCorruptedException(legacy, 0, "the log journal's checkpoint is damaged (it is written whole"
                    + " and renamed into place, so this is not a torn write); the journal's records cannot be replayed,"
                    + " and the groups' logs may lack writes they reported persisted");
        }
        return cp;
    }

    /**
     * Deletes the checkpoint files (the guard or legacy file, then the slots, and their temporary
     * files) and syncs the directory. The guard goes first, its deletion made durable before the
     * slots': a crash in between leaves the slots without the guard, which the next start repairs,
     * where the guard without the slots would be refused as a journal that lost its checkpoint.
     */
    static void deleteCheckpoints(FileIo io, Path dir) throws IOException {
        deleteLegacyCheckpoint(io, dir);
        io.syncDirectory(dir);
        io.delete(CheckpointSlots.path(dir));
        io.delete(dir.resolve(JournalFormat.CHECKPOINT_SLOTS + ".tmp"));
        io.syncDirectory(dir);
    }

    private static void deleteLegacyCheckpoint(FileIo io, Path dir) throws IOException {
        io.delete(dir.resolve(JournalFormat.LEGACY_CHECKPOINT));
        io.delete(dir.resolve(JournalFormat.LEGACY_CHECKPOINT + ".tmp"));
    }

    /**
     * Puts {@link JournalFormat#DOWNGRADE_GUARD} into the file {@code checkpoint} (over a legacy
     * checkpoint, on an upgrade): a new file, fsynced, renamed into place, directory synced, so that
     * the file holds either its old content or the whole guard.
     */
    static void writeDowngradeGuard(FileIo io, Path dir) throws IOException {
        Path tmp = dir.resolve(JournalFormat.LEGACY_CHECKPOINT + ".tmp");
        try (LogFile f = io.open(tmp)) {
            f.setLength(0);
            f.writeFully(ByteBuffer.wrap(JournalFormat.DOWNGRADE_GUARD), 0);
            f.force(true);
        }
        io.atomicMove(tmp, dir.resolve(JournalFormat.LEGACY_CHECKPOINT));
        io.syncDirectory(dir);
    }

    /** Whether the file {@code checkpoint} holds the guard, whole. */
    static boolean hasDowngradeGuard(FileIo io, Path dir) throws IOException {
        Path p = dir.resolve(JournalFormat.LEGACY_CHECKPOINT);
        if (!Files.exists(p)) {
            return false;
        }
        ByteBuffer b = ByteBuffer.allocate(JournalFormat.DOWNGRADE_GUARD.length + 1);
        int n;
        try (LogFile f = io.openForRead(p)) {
            n = f.readFully(b, 0);
        }
        b.flip();
        return n == JournalFormat.DOWNGRADE_GUARD.length && b.equals(ByteBuffer.wrap(JournalFormat.DOWNGRADE_GUARD));
    }

    private void makeFiles(int fileCount, long fileBytes) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
        for (int i = 0; i < fileCount; i++) {
            try (LogFile f = io.open(dir.resolve(JournalFormat.fileName(i)))) {
                f.setLength(0);
                // zero-filled, not sparse: the appends then write over allocated blocks, and an
                // fdatasync has no block allocation to commit (see docs/benchmarks.md)
                for (long at = 0; at < fileBytes; ) {
                    zeros.clear();
                    zeros.limit((int) Math.min(zeros.capacity(), fileBytes - at));
                    int len = zeros.remaining();
                    f.writeFully(zeros, at);
                    at += len;
                }
                f.force(true);
            }
        }
        io.syncDirectory(dir);
    }

    private JournalPosition replay(JournalFormat.Checkpoint cp) throws IOException {
        LogFile[] files = new LogFile[cp.fileCount];
        try {
            for (int i = 0; i < files.length; i++) {
                Path p = dir.resolve(JournalFormat.fileName(i));
                files[i] = io.openExisting(p);
                if (files[i].size() < cp.fileBytes) {
                    throw new LogCorruptedException(p, files[i].size(), "a log journal file is shorter than the "
                            + cp.fileBytes + " bytes it was made with");
                }
            }
            return scan(files, cp);
        } catch (NoSuchFileException e) {
            throw new LogCorruptedException(Path.of(e.getFile()), 0, "a log journal file is missing");
        } finally {
            for (LogFile f : files) {
                if (f != null) {
                    f.close();
                }
            }
        }
    }

    private JournalPosition scan(LogFile[] files, JournalFormat.Checkpoint cp) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(JournalFormat.HEADER_BYTES);
        ByteBuffer body = ByteBuffer.allocate(64 << 10);
        CRC32C crc = new CRC32C();
        int file = cp.start.file;
        long offset = cp.start.offset;
        long seq = cp.start.seq;
        int filesEntered = 0;
        while (true) {
            if (offset + JournalFormat.HEADER_BYTES > cp.fileBytes) {
                break;
            }
            header.clear();
            if (files[file].readFully(header, offset) < JournalFormat.HEADER_BYTES) {
                break;
            }
            header.flip();
            int magic = header.getInt();
            byte type = header.get();
            long recSeq = header.getLong();
            int pathLen = header.getShort() & 0xffff;
            long position = header.getLong();
            int length = header.getInt();
            int storedCrc = header.getInt();
            if (magic != JournalFormat.RECORD_MAGIC || recSeq != seq || type < JournalFormat.WRITE
                    || type > JournalFormat.END || pathLen > JournalFormat.MAX_PATH_BYTES || length < 0 || position < 0) {
                break;
            }
            int payloadLen = type == JournalFormat.WRITE ? length : 0;
            long recordBytes = (long) JournalFormat.HEADER_BYTES + pathLen + payloadLen;
            if (offset + recordBytes > cp.fileBytes) {
                break;
            }
            int bodyLen = pathLen + payloadLen;
            if (body.capacity() < bodyLen) {
                body = ByteBuffer.allocate(Math.max(bodyLen, body.capacity() * 2));
            }
            body.clear().limit(bodyLen);
            if (files[file].readFully(body, offset + JournalFormat.HEADER_BYTES) < bodyLen) {
                break;
            }
            body.flip();
            crc.reset();
            crc.update(header.array(), 0, JournalFormat.CRC_COVERED_HEADER_BYTES);
            crc.update(body.array(), 0, bodyLen);
            if ((int) crc.getValue() != storedCrc) {
                break;
            }
            seq++;
            if (type == JournalFormat.END) {
                if (++filesEntered > files.length) {
                    break;   // cannot happen with intact sequence numbers; a guard against looping
                }
                file = (file + 1) % files.length;
                offset = 0;
                continue;
            }
            byte[] path = new byte[pathLen];
            body.get(path);
            apply(JournalFormat.resolve(root, path), type, position, body, length);
            offset += recordBytes;
        }
        return new JournalPosition(file, offset, seq);
    }

    private void apply(Path target, byte type, long position, ByteBuffer payload, int length) throws IOException {
        LogFile f = targets.get(target);
        if (f == null && !targets.containsKey(target)) {
            try {
                f = io.openExisting(target);
            } catch (NoSuchFileException e) {
                f = null;
            }
            targets.put(target, f);
        }
        if (f == null) {
            skipped++;
            return;
        }
        if (type == JournalFormat.WRITE) {
            f.writeFully(payload, position);
        } else {
            ByteBuffer zeros = ByteBuffer.allocate(Math.min(length, 1 << 20));
            for (long at = position; at < position + length; ) {
                zeros.clear();
                zeros.limit((int) Math.min(zeros.capacity(), position + length - at));
                int n = zeros.remaining();
                f.writeFully(zeros, at);
                at += n;
            }
        }
        records++;
        bytes += length;
    }

    private void syncTargets() throws IOException {
        IOException first = null;
        for (LogFile f : targets.values()) {
            if (f == null) {
                continue;
            }
            try {
                f.force(false);
            } catch (IOException e) {
                if (first == null) {
                    first = e;
                }
            } finally {
                try {
                    f.close();
                } catch (IOException ignored) {
                    // the force above decided
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
