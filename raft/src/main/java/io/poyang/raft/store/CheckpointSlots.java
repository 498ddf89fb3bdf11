package io.poyang.raft.store;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The log journal's checkpoint file ({@code checkpoint-slots}): where the next start's replay
 * begins, saved in place, so that a save needs no new space on the disk.
 *
 * <p><b>Why in place.</b> A checkpoint saved by writing a new file and renaming it over the old one
 * needs a free block for the new file. On a full disk that save failed, and with it the journal and
 * every group of the node, where without the journal only the groups that write fail. This file is
 * made once, whole ({@link JournalFormat#SLOT_BYTES} per slot, zero-filled, fsynced, renamed into
 * place); each save then writes over one of its two slots and fdatasyncs it: no block to allocate
 * and no size to change on a file system that writes over a file's blocks in place (ext4, XFS; a
 * copy-on-write one such as btrfs or ZFS allocates anyway).
 *
 * <p><b>Crash safety.</b> A save writes the slot that does not hold the newest checkpoint, with the
 * next generation number and a CRC. A crash during that write leaves the slot torn (its CRC fails)
 * or with its older content, and the other slot whole: {@link #read} takes the intact slot with the
 * highest generation. A slot is its own file system block, so a torn write damages no other.
 *
 * <p><b>Either slot will do.</b> The journal keeps both slots valid starts for replay, not only the
 * newest: its writer writes over no record after the older slot's position, and a start saves its
 * position into both slots ({@link #saveInBoth}; the sequence numbers jump at a start, so an older
 * position's chain would end there). So recovery from the older slot, when the newest is damaged
 * however that happened, replays a longer but whole chain of records.
 *
 * <p>Thread: the journal's checkpoint thread, or the start before the journal's threads run.
 */
final class CheckpointSlots implements Closeable {

    private final LogFile file;
    /** The slot holding the newest checkpoint (0 or 1), and its generation. */
    private int newestSlot;
    private long newestGeneration;

    private CheckpointSlots(LogFile file, int newestSlot, long newestGeneration) {
        this.file = file;
        this.newestSlot = newestSlot;
        this.newestGeneration = newestGeneration;
    }

    static Path path(Path dir) {
        return dir.resolve(JournalFormat.CHECKPOINT_SLOTS);
    }

    /**
     * Makes the file with {@code start} in both slots: written under a temporary name, fsynced and
     * renamed into place, so that the file exists only whole. Needs {@code 2 * SLOT_BYTES} of free
     * space: when the journal is made, changes its shape, or is upgraded from the legacy checkpoint file.
     */
    static void create(FileIo io, Path dir, JournalPosition start, int fileCount, long fileBytes) throws IOException {
        Path tmp = dir.resolve(JournalFormat.CHECKPOINT_SLOTS + ".tmp");
        try (LogFile f = io.open(tmp)) {
            f.setLength(0);
            ByteBuffer whole = ByteBuffer.allocate(2 * JournalFormat.SLOT_BYTES);
            whole.put(JournalFormat.encodeSlot(1, start, fileCount, fileBytes));
            whole.position(JournalFormat.SLOT_BYTES);
            whole.put(JournalFormat.encodeSlot(2, start, fileCount, fileBytes));
            whole.clear();
            f.writeFully(whole, 0);
            f.force(true);
        }
        io.atomicMove(tmp, path(dir));
        io.syncDirectory(dir);
    }

    /**
     * The newest intact checkpoint in {@code dir}'s slots file, or null when there is no such file.
     * Throws {@link LogCorruptedException} when neither slot is intact.
     */
    static JournalFormat.Checkpoint read(FileIo io, Path dir) throws IOException {
        Path p = path(dir);
        if (!Files.exists(p)) {
            return null;
        }
        JournalFormat.Checkpoint[] slots = readSlots(io, p);
        int newest = newest(slots);
        if (newest < 0) {
            throw new LogCorruptedException(p, 0, "both slots of the log journal's checkpoint are damaged (a torn"
                    + " write damages only the slot being written, so this is not a crash); the journal's records"
                    + " cannot be replayed, and the groups' logs may lack writes they reported persisted");
        }
        return slots[newest];
    }

    /** Opens the file for saves; {@link #read} (or {@link #create}) first. */
    static CheckpointSlots open(FileIo io, Path dir) throws IOException {
        Path p = path(dir);
        JournalFormat.Checkpoint[] slots = readSlots(io, p);
        int newest = newest(slots);
        if (newest < 0) {
            throw new LogCorruptedException(p, 0, "both slots of the log journal's checkpoint are damaged");
        }
        return new CheckpointSlots(io.openExisting(p), newest, slots[newest].generation);
    }

    private static JournalFormat.Checkpoint[] readSlots(FileIo io, Path p) throws IOException {
        JournalFormat.Checkpoint[] slots = new JournalFormat.Checkpoint[2];
        try (LogFile f = io.openForRead(p)) {
            for (int i = 0; i < 2; i++) {
                ByteBuffer b = ByteBuffer.allocate(JournalFormat.SLOT_CONTENT_BYTES);
                if (f.readFully(b, (long) i * JournalFormat.SLOT_BYTES) == JournalFormat.SLOT_CONTENT_BYTES) {
                    b.flip();
                    slots[i] = JournalFormat.decodeSlot(b);
                }
            }
        }
        return slots;
    }

    /** The index of the intact slot with the highest generation; -1 when neither is intact. */
    private static int newest(JournalFormat.Checkpoint[] slots) {
        if (slots[0] == null) {
            return slots[1] == null ? -1 : 1;
        }
        if (slots[1] == null) {
            return 0;
        }
        return slots[1].generation > slots[0].generation ? 1 : 0;
    }

    /**
     * Saves {@code start} over the older slot and fdatasyncs it: once this returns, replay starts at
     * {@code start} or later (the other slot keeps the previous checkpoint).
     */
    void save(JournalPosition start, int fileCount, long fileBytes) throws IOException {
        int slot = 1 - newestSlot;
        long generation = newestGeneration + 1;
        file.writeFully(JournalFormat.encodeSlot(generation, start, fileCount, fileBytes),
                (long) slot * JournalFormat.SLOT_BYTES);
        file.force(false);
        newestSlot = slot;
        newestGeneration = generation;
    }

    /** Saves {@code start} into both slots, one after the other: replay starts there from either. */
    void saveInBoth(JournalPosition start, int fileCount, long fileBytes) throws IOException {
        save(start, fileCount, fileBytes);
        save(start, fileCount, fileBytes);
    }

    @Override
    public void close() throws IOException {
        file.close();
    }
}
