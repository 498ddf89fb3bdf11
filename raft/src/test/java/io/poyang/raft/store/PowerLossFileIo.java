package io.poyang.raft.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A file system that can lose power: every write made since a file's last fsync (by any handle of
 * that path) can be taken back by {@link #powerLoss()}, which puts back the bytes the write covered.
 * A process crash keeps the page cache; a power loss (or an OS crash) does not, and that is what this
 * models for the log's files. Creating, renaming and deleting files are durable at once here.
 */
final class PowerLossFileIo extends ForwardingFileIo {

    PowerLossFileIo() {
        super(FileIo.DEFAULT);
    }

    /** Per path: the bytes each unsynced write covered before it, oldest first. Guarded by this. */
    private final Map<Path, List<Undo>> unsynced = new HashMap<>();
    private long writesTakenBack;

    private static final class Undo {
        final long position;
        final byte[] before;

        Undo(long position, byte[] before) {
            this.position = position;
            this.before = before;
        }
    }

    /** Takes back every write not covered by an fsync of its file since; returns how many. */
    synchronized long powerLoss() throws IOException {
        long n = 0;
        for (Map.Entry<Path, List<Undo>> e : unsynced.entrySet()) {
            List<Undo> undos = e.getValue();
            if (undos.isEmpty() || !java.nio.file.Files.exists(e.getKey())) {
                continue;
            }
            try (LogFile f = inner.openExisting(e.getKey())) {
                for (int i = undos.size() - 1; i >= 0; i--) {
                    Undo u = undos.get(i);
                    f.writeFully(ByteBuffer.wrap(u.before), u.position);
                    n++;
                }
                f.force(false);
            }
        }
        unsynced.clear();
        writesTakenBack += n;
        return n;
    }

    /** How many writes to {@code path} a power loss now would take back. */
    synchronized int unsyncedWrites(Path path) {
        List<Undo> undos = unsynced.get(key(path));
        return undos == null ? 0 : undos.size();
    }

    synchronized long writesTakenBack() {
        return writesTakenBack;
    }

    private static Path key(Path p) {
        return p.toAbsolutePath().normalize();
    }

    private synchronized void beforeWrite(LogFile f, ByteBuffer src, long position) throws IOException {
        byte[] before = new byte[src.remaining()];
        ByteBuffer b = ByteBuffer.wrap(before);
        f.readFully(b, position);   // past the end it stays zero, which a lost write leaves there too
        unsynced.computeIfAbsent(key(f.path()), k -> new ArrayList<>()).add(new Undo(position, before));
    }

    private synchronized void synced(Path path) {
        List<Undo> undos = unsynced.get(key(path));
        if (undos != null) {
            undos.clear();
        }
    }

    @Override
    protected LogFile wrap(LogFile f) {
        return new Tracked(f);
    }

    @Override
    public void atomicMove(Path from, Path to) throws IOException {
        inner.atomicMove(from, to);
        synchronized (this) {
            List<Undo> moved = unsynced.remove(key(from));
            if (moved != null) {
                unsynced.put(key(to), moved);
            }
        }
    }

    @Override
    public void delete(Path path) throws IOException {
        inner.delete(path);
        synchronized (this) {
            unsynced.remove(key(path));
        }
    }

    private final class Tracked extends ForwardingLogFile {
        Tracked(LogFile f) {
            super(f);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            // the whole remaining range is recorded; a short write then takes back a little too much,
            // bytes that were not written anyway
            beforeWrite(f, src.duplicate(), position);
            return f.write(src, position);
        }

        @Override
        public void force(boolean metadata) throws IOException {
            f.force(metadata);
            synced(f.path());
        }
    }
}
