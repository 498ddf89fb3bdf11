package io.poyang.raft.store;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * The on-disk format of the node's log journal ({@link LogJournal}).
 *
 * <p>Files: {@code journal-0} .. {@code journal-(N-1)}, each zero-filled to the same size when made,
 * written round and round; and {@code checkpoint-slots}, which says where replay starts.
 *
 * <p>A record, big-endian: magic (int, {@link #RECORD_MAGIC}), type (byte: {@link #WRITE},
 * {@link #ZEROS}, {@link #END}), sequence number (long; each record's is the previous one's plus
 * one, across files, so a stale record of an earlier lap never continues the chain), path length
 * (short), position in the target file (long), length (int: the payload's bytes, or the zeros'),
 * CRC32C (int) of everything before it plus the path and the payload; then the target's path
 * (UTF-8, relative to the node's data directory), then the payload (WRITE only). An END record
 * (no path, length 0) says the rest of its file is unused: replay goes on at the start of the
 * next file.
 *
 * <p>The checkpoint, in the file {@code checkpoint-slots} ({@link CheckpointSlots}): two slots of
 * {@link #SLOT_BYTES} each, written in place by turns. A slot: magic (int, {@link #SLOT_MAGIC}),
 * generation (long; each save's is the previous one's plus one), file count (int), file size
 * (long), file (int), offset (long), sequence number (long), CRC32C (int) of the rest; zeros after
 * it. Replay starts at that file and offset and expects that sequence number; everything before it
 * is in the groups' own files, fsynced.
 *
 * <p>Before the slots, a journal kept its checkpoint in the file {@code checkpoint}, replaced whole
 * by a rename at each save: magic (int, {@link #LEGACY_CHECKPOINT_MAGIC}) and the slot's fields
 * without the generation. A start reads it when there is no slots file (an upgrade), then moves
 * to the slots.
 *
 * <p>A journal that keeps its checkpoint in the slots keeps {@link #DOWNGRADE_GUARD} in the file
 * {@code checkpoint}: a Poyang from before the slots would otherwise find no checkpoint file, take
 * the journal for one whose making was cut short, and make it anew over records not yet replayed
 * (a loss of acknowledged writes after a crash). The guard is not of a legacy checkpoint's length,
 * so that version reports its checkpoint damaged and refuses to start instead.
 */
final class JournalFormat {

    static final int RECORD_MAGIC = 0x504a524e;        // "PJRN"
    static final int SLOT_MAGIC = 0x504a4353;          // "PJCS"
    static final int LEGACY_CHECKPOINT_MAGIC = 0x504a434b;    // "PJCK"
    static final byte WRITE = 1;
    static final byte ZEROS = 2;
    static final byte END = 3;
    /** magic, type, seq, path length, position, length, crc. */
    static final int HEADER_BYTES = 4 + 1 + 8 + 2 + 8 + 4 + 4;
    /** The bytes covered by the CRC before the path: the header without the CRC. */
    static final int CRC_COVERED_HEADER_BYTES = HEADER_BYTES - 4;
    /**
     * One checkpoint slot's share of its file: a file system block (and page) of its own, so that a
     * write torn by a crash damages no more than the slot written.
     */
    static final int SLOT_BYTES = 4096;
    /** The bytes of a slot that are not zeros: magic, generation, count, size, file, offset, seq, crc. */
    static final int SLOT_CONTENT_BYTES = 4 + 8 + 4 + 8 + 4 + 8 + 8 + 4;
    static final String CHECKPOINT_SLOTS = "checkpoint-slots";
    /** The checkpoint file of journals before the slots (see the class comment). */
    static final String LEGACY_CHECKPOINT = "checkpoint";
    static final int LEGACY_CHECKPOINT_BYTES = 4 + 4 + 8 + 4 + 8 + 8 + 4;
    /** What the file {@link #LEGACY_CHECKPOINT} holds beside the slots (see the class comment). */
    static final byte[] DOWNGRADE_GUARD = ("This log journal keeps its checkpoint in the file " + CHECKPOINT_SLOTS
            + ", which Poyang versions before it cannot read: they refuse this journal because of this file."
            + " Run the newer version. Never delete this file or the journal's other files by hand.\n")
            .getBytes(StandardCharsets.UTF_8);
    static final int MAX_PATH_BYTES = 4096;

    private JournalFormat() {
    }

    static String fileName(int i) {
        return "journal-" + i;
    }

    /** The target's path as a record stores it: relative to the data directory, '/'-separated. */
    static byte[] pathBytes(Path root, Path target) {
        Path rel = root.toAbsolutePath().normalize().relativize(target.toAbsolutePath().normalize());
        StringBuilder sb = new StringBuilder();
        for (Path part : rel) {
            if (sb.length() > 0) {
                sb.append('/');
            }
            sb.append(part);
        }
        byte[] b = sb.toString().getBytes(StandardCharsets.UTF_8);
        if (b.length > MAX_PATH_BYTES || sb.indexOf("..") >= 0) {
            throw new IllegalArgumentException(target + " is not inside the journal's data directory " + root);
        }
        return b;
    }

    static Path resolve(Path root, byte[] path) {
        return root.resolve(new String(path, StandardCharsets.UTF_8));
    }

    /**
     * Puts a record's header and path into {@code dst} and returns the CRC to put at
     * {@code headerAt + CRC_COVERED_HEADER_BYTES}; the caller adds the payload to the CRC first.
     */
    static void putHeader(ByteBuffer dst, byte type, long seq, byte[] path, long position, int length) {
        dst.putInt(RECORD_MAGIC);
        dst.put(type);
        dst.putLong(seq);
        dst.putShort((short) path.length);
        dst.putLong(position);
        dst.putInt(length);
        dst.putInt(0);   // the CRC, filled in by sealCrc
        dst.put(path);
    }

    /** Computes the record's CRC over header, path and payload and writes it into the header. */
    static void sealCrc(ByteBuffer staged, int headerAt, int pathLength, ByteBuffer payload, CRC32C crc) {
        crc.reset();
        ByteBuffer h = staged.duplicate();
        h.limit(headerAt + CRC_COVERED_HEADER_BYTES).position(headerAt);
        crc.update(h);
        h.limit(headerAt + HEADER_BYTES + pathLength).position(headerAt + HEADER_BYTES);
        crc.update(h);
        if (payload != null) {
            crc.update(payload.duplicate());
        }
        staged.putInt(headerAt + CRC_COVERED_HEADER_BYTES, (int) crc.getValue());
    }

    /** A checkpoint slot's content ({@link #SLOT_CONTENT_BYTES}), ready to write. */
    static ByteBuffer encodeSlot(long generation, JournalPosition p, int fileCount, long fileBytes) {
        ByteBuffer b = ByteBuffer.allocate(SLOT_CONTENT_BYTES);
        b.putInt(SLOT_MAGIC).putLong(generation).putInt(fileCount).putLong(fileBytes).putInt(p.file)
                .putLong(p.offset).putLong(p.seq);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, b.position());
        b.putInt((int) crc.getValue());
        b.flip();
        return b;
    }

    /** A decoded checkpoint: where replay starts, the journal's shape when it was saved, and the save's generation. */
    static final class Checkpoint {
        /** 0 for a legacy checkpoint file. */
        final long generation;
        final int fileCount;
        final long fileBytes;
        final JournalPosition start;

        Checkpoint(long generation, int fileCount, long fileBytes, JournalPosition start) {
            this.generation = generation;
            this.fileCount = fileCount;
            this.fileBytes = fileBytes;
            this.start = start;
        }
    }

    /** Null when {@code b} (a slot's {@link #SLOT_CONTENT_BYTES}) is not a whole, intact slot: never written, or torn. */
    static Checkpoint decodeSlot(ByteBuffer b) {
        if (b.remaining() != SLOT_CONTENT_BYTES) {
            return null;
        }
        CRC32C crc = new CRC32C();
        ByteBuffer covered = b.duplicate();
        covered.limit(covered.position() + SLOT_CONTENT_BYTES - 4);
        crc.update(covered);
        if (b.getInt() != SLOT_MAGIC) {
            return null;
        }
        long generation = b.getLong();
        return decodeRest(b, crc, generation);
    }

    /** Null when {@code b} is not a whole, intact checkpoint file of the format before the slots. */
    static Checkpoint decodeLegacyCheckpoint(ByteBuffer b) {
        if (b.remaining() != LEGACY_CHECKPOINT_BYTES) {
            return null;
        }
        CRC32C crc = new CRC32C();
        ByteBuffer covered = b.duplicate();
        covered.limit(covered.position() + LEGACY_CHECKPOINT_BYTES - 4);
        crc.update(covered);
        if (b.getInt() != LEGACY_CHECKPOINT_MAGIC) {
            return null;
        }
        return decodeRest(b, crc, 0);
    }

    /** The fields after the magic (and generation): count, size, file, offset, seq, crc. */
    private static Checkpoint decodeRest(ByteBuffer b, CRC32C crc, long generation) {
        int count = b.getInt();
        long bytes = b.getLong();
        int file = b.getInt();
        long offset = b.getLong();
        long seq = b.getLong();
        if (b.getInt() != (int) crc.getValue() || count < 2 || bytes <= 0 || file < 0 || file >= count || offset < 0
                || offset > bytes || seq < 1 || generation < 0) {
            return null;
        }
        return new Checkpoint(generation, count, bytes, new JournalPosition(file, offset, seq));
    }
}
