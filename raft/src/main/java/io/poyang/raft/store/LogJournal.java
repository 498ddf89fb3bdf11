package io.poyang.raft.store;

import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

/**
 * A node's log journal: one write and one fsync per round for the appends of all its groups.
 *
 * <p>Without it each group's log fsyncs its own files, so G groups on a node run G fsync chains.
 * With it, a group's write still goes into its own log file (page cache only), and then, as a
 * record, into the journal; the journal's thread takes every record queued meanwhile, writes them
 * with one positional write, runs one {@code fdatasync}, and only then reports them written. The
 * groups' files are fsynced by checkpoints, well behind the appends. So a node runs one fsync per
 * round whatever its number of groups; and as the journal's files are made zero-filled and written
 * round and round, its appends go over allocated blocks, which an fsync commits without journalling
 * any block allocation in the file system.
 *
 * <p><b>Checkpoints.</b> Before the writer goes on into a journal file holding records of the
 * previous lap, those records' target files must be fsynced: a checkpoint fsyncs every file written
 * by records before a position, then saves that position in one of the two slots of the
 * {@code checkpoint-slots} file, written in place ({@link CheckpointSlots}: a save needs no new
 * space, so a full disk does not fail it), from which the next start replays ({@link JournalReplay}).
 * The writer writes over records only once both slots start after them, so either slot is a valid
 * start: a crash that tears the slot being written leaves the other. Each time the writer enters a file it starts a
 * checkpoint of everything before it on the checkpoint thread, so with four files or more a
 * checkpoint has at least two files' worth of appends to finish in before the writer would wait for it.
 * It also starts one after every eighth of a file written ({@link #CHECKPOINTS_PER_FILE}), when none
 * runs: the groups' files are written without fsync, so the kernel holds their dirty pages (it writes
 * them back on its own only after 30 s), and a checkpoint per file flushed a whole file's worth at
 * once (16 MiB by default), which the journal's next fdatasyncs waited behind. Smaller, more frequent
 * checkpoints spread that flush: with one group on three nodes the p99 latency went from 25-30 ms to
 * 9-13 ms (docs/benchmarks.md, eleventh session), as without the journal.
 * {@link #checkpoint()} asks for one at once (the removal of a group's files, the node's stop).
 *
 * <p><b>Order.</b> Records of one group reach the journal in the order its writes completed, which
 * for writes to the same bytes is the order they were made: a log truncation waits for its writes
 * in flight before it zeroes, and records the zeros ({@link #recordZeros}) after them. Replay
 * repeats the writes in the journal's order, so it ends with the bytes the files last had.
 *
 * <p><b>Failures.</b> A failed journal write or fsync, or a failed fsync of a checkpoint, is not
 * retried (after a failed fsync the kernel may have dropped the pages): the journal fails every
 * record from then on with a {@link LogJournalFailedException}, and the groups' stores fail with it at
 * once: a failed journal does not come back, so they do not retry (a write whose own segment write
 * failed does retry). Their error
 * names the journal and says to restart the node (restarting a group would write through the same
 * failed journal); {@link #failure()} tells health checks. Restarting the node replays what is on disk.
 *
 * <p>Threads: {@link #append} and {@link #recordZeros} from any thread; one writer thread; one
 * checkpoint thread.
 */
public final class LogJournal implements AutoCloseable {

    private static final PoyangLog log = PoyangLogs.get(LogJournal.class);
    /** The journal's directory under the node's data directory. */
    public static final String DIR_NAME = "log-journal";
    /** The least size of one journal file (a larger log write goes as several records). */
    public static final long MIN_FILE_BYTES = 4L << 20;
    /** How many checkpoints a journal file's worth of appends starts at least (see the class comment). */
    static final int CHECKPOINTS_PER_FILE = 8;
    private static final int STAGING_BYTES = 1 << 20;
    /**
     * The writer writes whole blocks of this many bytes at multiples of it (when the file size is a
     * multiple of it), so the files can be opened to bypass the page cache: an fdatasync then has no
     * pages to write back, and a write is not first copied into the cache. Measured with 60 KiB
     * rounds on this project's test VM: 50-60 µs of CPU per write and fdatasync against 90-210 µs
     * buffered (docs/benchmarks.md, sixteenth session). A round that ends inside a block writes
     * that block again in the next round, its earlier bytes unchanged.
     */
    static final int WRITE_ALIGNMENT = 4096;
    /** How long the close waits for the final checkpoint (and twice that for the writer). */
    private static final long CLOSE_WAIT_SECONDS = 15;

    private final String name;
    private final Path root;
    private final Path dir;
    private final FileIo io;
    private final int fileCount;
    private final long fileBytes;
    /** Plain: set before the first append (tests), read by the writer after it took a record. */
    private long checkpointEveryBytes;
    private final LogFile[] files;
    /** Where the checkpoints are saved (in place). Checkpoint thread, after the constructor. */
    private final CheckpointSlots checkpointSlots;
    /** The sequence number of the last record written into each file (its latest lap). Writer thread. */
    private final long[] lastSeqIn;

    private final ConcurrentLinkedQueue<JournalRecord> queue = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<CompletableFuture<Void>> checkpointRequests = new ConcurrentLinkedQueue<>();
    private final Thread writer;
    private volatile boolean writerParked;
    private volatile boolean closing;
    /** A crash, for tests: the writer stops without its final checkpoint. */
    private volatile boolean abandoned;
    private final CompletableFuture<Void> writerDone = new CompletableFuture<>();

    // ---- writer thread state
    private int file;
    private long offset;
    private long seq;
    /** The bytes of the current round, from the start of the block the round began in. */
    private final ByteBuffer staging;
    /** Where in the current file the staged bytes go: a multiple of {@link #alignment}. */
    private long stagedAt;
    /** How many bytes at the start of {@link #staging} are on disk already (a block's head written last round). */
    private int stagedOnDisk;
    /** {@link #WRITE_ALIGNMENT}, or 1 when the file size is not a multiple of it (then writes go unaligned). */
    private final int alignment;
    /** Whether the files bypass the page cache (they were opened with O_DIRECT). */
    private final boolean direct;
    private final CRC32C crc = new CRC32C();
    private final List<JournalRecord> round = new ArrayList<>();
    /** Files written by records since the last checkpoint started. */
    private Set<Path> dirtySinceCheckpoint = new HashSet<>();
    /** Journal bytes written since the last checkpoint started; one starts past {@link #checkpointEveryBytes}. */
    private long bytesSinceCheckpoint;

    // ---- checkpoints (guarded by this)
    private int checkpointsPending;
    /**
     * Records below this sequence number may be written over: both checkpoint slots start replay
     * at or after it (it is the older slot's position), so whichever slot a recovery reads, it
     * finds every record after it whole ({@link CheckpointSlots}: either slot will do).
     */
    private long checkpointedSeq;
    /** The newest slot's position: the next save goes over the slot of {@link #checkpointedSeq}. */
    private long newestCheckpointSeq;
    private final Thread checkpointer;
    private final ArrayList<Checkpoint> checkpointQueue = new ArrayList<>();

    /** Whether the writer's or the checkpoint thread's work ended by a crash (see crashedBy). */
    private volatile boolean writerCrashed;
    private volatile boolean checkpointerCrashed;
    /** Set once, by the first failure; then every record fails. */
    private volatile Throwable failure;
    private volatile long fsyncCount;
    private volatile long checkpointCount;
    private volatile long recordCount;

    private LogJournal(String name, Path root, Path dir, FileIo io, int fileCount, long fileBytes,
                       JournalPosition start) throws IOException {
        this.name = name;
        this.root = root;
        this.dir = dir;
        this.io = io;
        this.fileCount = fileCount;
        this.fileBytes = fileBytes;
        this.checkpointEveryBytes = fileBytes / CHECKPOINTS_PER_FILE;
        this.files = new LogFile[fileCount];
        this.lastSeqIn = new long[fileCount];
        this.alignment = fileBytes % WRITE_ALIGNMENT == 0 ? WRITE_ALIGNMENT : 1;
        this.staging = ByteBuffer.allocateDirect(STAGING_BYTES + alignment).alignedSlice(alignment);
        boolean allDirect = true;
        try {
            for (int i = 0; i < fileCount; i++) {
                Path p = dir.resolve(JournalFormat.fileName(i));
                files[i] = alignment > 1 ? io.openExistingForAlignedWrites(p, alignment) : io.openExisting(p);
                allDirect &= files[i].bypassesPageCache();
            }
            this.direct = allDirect;
            if (alignment > 1 && !direct) {
                // mixed is fine (each file's writes are aligned either way), but say what the disk does
                log.info("{}: the log journal's files in {} are written through the page cache (the file"
                        + " system does not take O_DIRECT writes)", name, dir);
            }
            this.file = start.file;
            this.offset = start.offset;
            this.seq = start.seq;
            loadBlockHead();
        } catch (IOException e) {
            closeFiles();
            throw e;
        }
        try {
            this.checkpointSlots = CheckpointSlots.open(io, dir);
        } catch (IOException e) {
            closeFiles();
            throw e;
        }
        this.checkpointedSeq = start.seq;   // the start saved it into both slots
        this.newestCheckpointSeq = start.seq;
        this.writer = new Thread(this::runWriter, name + "-journal");
        this.writer.setDaemon(true);
        this.checkpointer = new Thread(this::runCheckpoints, name + "-journal-checkpoint");
        this.checkpointer.setDaemon(true);
    }

    /**
     * Opens the journal in {@code <dataDir>/log-journal}, replaying what it holds into the groups'
     * files (or making it, the first time), and starts its threads. Call before any group of the
     * node opens its log. {@code name} names the threads ({@code name-journal}).
     */
    public static LogJournal open(String name, Path dataDir, FileIo io, int fileCount, long fileBytes) throws IOException {
        validate(fileCount, fileBytes);
        Path dir = dataDir.resolve(DIR_NAME);
        JournalPosition start = JournalReplay.replayOrCreate(dataDir, dir, io, fileCount, fileBytes);
        LogJournal j = new LogJournal(name, dataDir, dir, io, fileCount, fileBytes, start);
        j.writer.start();
        j.checkpointer.start();
        return j;
    }

    /**
     * For a node whose journal is off: replays a journal left by an earlier run (a crash with the
     * journal on leaves writes only there), then removes it. Nothing happens when there is none.
     */
    public static void replayAndRemoveLeftover(Path dataDir, FileIo io) throws IOException {
        Path dir = dataDir.resolve(DIR_NAME);
        if (!java.nio.file.Files.exists(dir)) {
            return;
        }
        JournalFormat.Checkpoint shape = JournalReplay.readCheckpoint(io, dir);
        if (shape == null) {
            return;
        }
        JournalReplay.replayOrCreate(dataDir, dir, io, shape.fileCount, shape.fileBytes);
        JournalReplay.deleteCheckpoints(io, dir);
        for (int i = 0; i < shape.fileCount; i++) {
            io.delete(dir.resolve(JournalFormat.fileName(i)));
        }
        java.nio.file.Files.deleteIfExists(dir);
        log.info("replayed and removed the log journal in {} (the journal is off)", dir);
    }

    static void validate(int fileCount, long fileBytes) {
        if (fileCount < 3) {
            throw new IllegalArgumentException("the log journal needs at least 3 files (one written, one being"
                    + " checkpointed, one spare): " + fileCount);
        }
        if (fileBytes < MIN_FILE_BYTES) {
            throw new IllegalArgumentException("a log journal file must hold at least " + MIN_FILE_BYTES
                    + " bytes: " + fileBytes);
        }
    }

    /** Whether the journal's writes bypass the page cache (its files took O_DIRECT; see {@link #WRITE_ALIGNMENT}). */
    public boolean bypassesPageCache() {
        return direct;
    }

    /** Journal thread writes and fsyncs so far (for metrics). */
    public long fsyncCount() {
        return fsyncCount;
    }

    /** Checkpoints saved since the journal opened (each fsynced the groups' files written before its position). */
    public long checkpointCount() {
        return checkpointCount;
    }

    /** Records written so far (for metrics). */
    public long recordCount() {
        return recordCount;
    }

    /**
     * The failure that stopped the journal (a failed write, fsync or checkpoint, or a crash of one of
     * its threads), or null while it works: from then on every group's log on the node fails, and
     * only a restart of the node helps (for health checks).
     */
    public Throwable failure() {
        return failure;
    }

    /**
     * What a record learns once the journal has failed: the cause, and that restarting the group
     * does not help (a group restarted on this node writes through the same failed journal).
     */
    private LogJournalFailedException refusal(Throwable cause) {
        return new LogJournalFailedException(name + ": the node's log journal in " + dir + " failed (" + cause + ") and takes no more"
                + " writes; fix the disk (space, kernel log), then restart the node (it replays the journal)", cause);
    }

    /** Queues a record; {@link JournalRecord#journaled} reports it durable (or failed). Any thread. */
    void append(JournalRecord r) {
        if (closing) {
            r.journaled(new IllegalStateException(name + ": the log journal is closed"));
            return;
        }
        queue.offer(r);
        if (writerParked) {
            LockSupport.unpark(writer);
        }
        if (writerDone.isDone()) {
            failLeftovers();   // the writer stopped between the check above and the offer
        }
    }

    /** Fails what is queued once the writer has stopped (closed, or died): nothing else would take it. */
    private void failLeftovers() {
        Throwable f = failure;
        String why = name + ": the log journal is closed";
        JournalRecord r;
        while ((r = queue.poll()) != null) {
            r.journaled(f != null ? refusal(f) : new IOException(why));
        }
        CompletableFuture<Void> c;
        while ((c = checkpointRequests.poll()) != null) {
            c.completeExceptionally(f != null ? refusal(f) : new IOException(why));
        }
    }

    /**
     * Records that {@code length} zeros were written at {@code position} of a log file (a truncation)
     * and waits until the record is durable. Blocking: an I/O thread, never a dispatcher.
     */
    void recordZeros(LogSegment target, long position, int length) throws IOException {
        ZeroRecord z = new ZeroRecord(target, position, length);
        append(z);
        awaitIo(z.done, "recording a truncation's zeros in the log journal");
    }

    /**
     * Fsyncs every log file the journal's records so far went to and moves the replay start past
     * them; waits for it. After it, no record written before it is replayed: call it before files
     * the log wrote through the journal are deleted for good and may be made again under the same
     * name (a removed group). Blocking: never on a dispatcher.
     */
    public void checkpoint() throws IOException {
        CompletableFuture<Void> f = new CompletableFuture<>();
        if (closing) {
            throw new IllegalStateException(name + ": the log journal is closed");
        }
        checkpointRequests.offer(f);
        LockSupport.unpark(writer);
        if (writerDone.isDone()) {
            failLeftovers();
        }
        awaitIo(f, "a log journal checkpoint");
    }

    private static void awaitIo(CompletableFuture<Void> f, String what) throws IOException {
        try {
            f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while waiting for " + what);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof IOException) {
                throw (IOException) c;
            }
            throw new IOException(what + " failed: " + c, c);
        }
    }

    // ------------------------------------------------------------------ writer thread

    private void runWriter() {
        try {
            while (true) {
                JournalRecord r;
                while ((r = queue.poll()) != null) {
                    round.add(r);
                }
                CompletableFuture<Void> cpRequest = checkpointRequests.poll();
                if (abandoned) {
                    writerDone.complete(null);
                    return;
                }
                if (round.isEmpty() && cpRequest == null) {
                    if (closing && queue.isEmpty() && checkpointRequests.isEmpty()) {
                        break;
                    }
                    writerParked = true;
                    if (queue.isEmpty() && checkpointRequests.isEmpty() && !closing) {
                        LockSupport.park(this);
                    }
                    writerParked = false;
                    continue;
                }
                if (!round.isEmpty()) {
                    writeRound();
                }
                if (cpRequest != null) {
                    requestCheckpoint(cpRequest);
                }
            }
            // the close's own checkpoint: the next start has nothing to replay
            CompletableFuture<Void> last = new CompletableFuture<>();
            requestCheckpoint(last);
            last.get(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS);
            writerDone.complete(null);
        } catch (Throwable e) {
            if (!closing) {
                writerCrashed = true;
                fail(e, "the log journal's writer thread");
            }
            writerDone.completeExceptionally(e);
            failLeftovers();
        }
    }

    private void writeRound() {
        Throwable error = failure;
        if (error == null) {
            try {
                // stagedAt + staging.position() == offset between rounds: staging holds the head of
                // the block the last round ended in
                for (int i = 0, n = round.size(); i < n; i++) {
                    stage(round.get(i));
                }
                flushStaging();
                files[file].force(false);
                fsyncCount++;
                recordCount += round.size();
                if (bytesSinceCheckpoint >= checkpointEveryBytes) {
                    synchronized (this) {
                        if (checkpointsPending == 0) {   // else the next round starts it
                            startCheckpointLocked(null);
                        }
                    }
                }
            } catch (Throwable e) {
                error = e;
                if (crashedBy(e)) {
                    writerCrashed = true;
                }
                fail(e, "writing or fsyncing the log journal in " + dir);
            }
        }
        if (error != null) {
            error = refusal(error);
        }
        for (int i = 0, n = round.size(); i < n; i++) {
            JournalRecord r = round.get(i);
            try {
                r.journaled(error);
            } catch (Throwable t) {
                log.error("{}: a log journal record's completion failed", name, t);
            }
        }
        round.clear();
    }

    private void stage(JournalRecord r) throws IOException, InterruptedException {
        if (!r.writeIntoTarget()) {
            return;   // its segment write failed: journaled reports that write's own error
        }
        LogSegment target = r.target();
        byte[] path = target.journalPath;
        if (path == null) {
            path = JournalFormat.pathBytes(root, target.file.path());
            target.journalPath = path;
        }
        dirtySinceCheckpoint.add(target.file.path());
        ByteBuffer payload = r.payload();
        if (payload == null) {
            stageRecord(JournalFormat.ZEROS, path, r.filePosition(), r.length(), null);
            return;
        }
        // A write larger than half a file (one large entry can be a segment's size) goes as several
        // records, each for its part of the target range: replay writes them in turn, and the round
        // reports the write once all are fsynced. Half a file, so a part always fits an empty file.
        int maxPart = (int) Math.min(Integer.MAX_VALUE, fileBytes / 2 - JournalFormat.HEADER_BYTES - path.length);
        for (int from = 0; from < r.length(); from += maxPart) {
            int len = Math.min(maxPart, r.length() - from);
            ByteBuffer part = payload.duplicate();
            part.limit(from + len).position(from);
            stageRecord(JournalFormat.WRITE, path, r.filePosition() + from, len, part.slice());
        }
    }

    /** Stages one record ({@code body} null for zeros), going on into the next file when it does not fit. */
    private void stageRecord(byte type, byte[] path, long position, int length, ByteBuffer body)
            throws IOException, InterruptedException {
        int payloadLen = body == null ? 0 : length;
        long recordBytes = (long) JournalFormat.HEADER_BYTES + path.length + payloadLen;
        if (offset + recordBytes + JournalFormat.HEADER_BYTES > fileBytes) {
            nextFile();
        }
        if (staging.remaining() < recordBytes) {
            flushWholeBlocks();
        }
        int at = staging.position();
        JournalFormat.putHeader(staging, type, seq, path, position, length);
        if (staging.remaining() >= payloadLen) {
            if (body != null) {
                staging.put(body.duplicate());
            }
            JournalFormat.sealCrc(staging, at, path.length, body, crc);
        } else {
            // larger than the staging buffer: sealed while its header is staged, then streamed
            // through the buffer a buffer's worth at a time (the blocks must come from its aligned memory)
            JournalFormat.sealCrc(staging, at, path.length, body, crc);
            ByteBuffer rest = body.duplicate();
            while (rest.hasRemaining()) {
                if (!staging.hasRemaining()) {
                    flushWholeBlocks();
                }
                ByteBuffer piece = rest.duplicate();
                piece.limit(piece.position() + Math.min(rest.remaining(), staging.remaining()));
                rest.position(piece.limit());
                staging.put(piece);
            }
        }
        offset += recordBytes;
        bytesSinceCheckpoint += recordBytes;
        lastSeqIn[file] = seq;
        seq++;
    }

    /**
     * Writes every staged byte where it goes in the current file, the last block filled up with
     * zeros (the next round writes that block again, with its next records in place of the zeros;
     * replay stops at the zeros, as at the end of any round). Keeps the last block's head staged.
     */
    private void flushStaging() throws IOException {
        int n = staging.position();
        if (n == stagedOnDisk) {
            return;
        }
        int whole = n - n % alignment;
        int padded = n == whole ? n : whole + alignment;
        for (int i = n; i < padded; i++) {
            staging.put(i, (byte) 0);
        }
        ByteBuffer out = staging.duplicate();
        out.limit(padded).position(0);
        files[file].writeFully(out, stagedAt);
        keepTail(whole, n);
        stagedOnDisk = n - whole;
    }

    /** Writes the staged whole blocks, keeping the bytes after them (less than a block) staged. */
    private void flushWholeBlocks() throws IOException {
        int n = staging.position();
        int whole = n - n % alignment;
        if (whole == 0) {
            return;
        }
        ByteBuffer out = staging.duplicate();
        out.limit(whole).position(0);
        files[file].writeFully(out, stagedAt);
        keepTail(whole, n);
        stagedOnDisk = 0;
    }

    /** Moves staged bytes {@code [whole, n)} to the front; they now go at {@code stagedAt + whole}. */
    private void keepTail(int whole, int n) {
        ByteBuffer tail = staging.duplicate();
        tail.limit(n).position(whole);
        staging.clear();
        staging.put(tail);   // no overlap: the tail is shorter than a block and starts at one or later
        stagedAt += whole;
    }

    /**
     * At the start: stages the head of the block the journal goes on in (bytes already on disk),
     * so the first round's write of that block keeps them.
     */
    private void loadBlockHead() throws IOException {
        int head = (int) (offset % alignment);
        stagedAt = offset - head;
        staging.clear();
        if (head > 0) {
            ByteBuffer block = staging.duplicate();
            block.limit(alignment).position(0);
            if (files[file].readFully(block, stagedAt) < head) {
                throw new LogCorruptedException(files[file].path(), stagedAt, "the log journal file ends inside"
                        + " the records replay found in it");
            }
            staging.position(head);
        }
        stagedOnDisk = head;
    }

    /**
     * Ends the current file with an END record and goes on at the start of the next, once the
     * records of the next file's previous lap are covered by a checkpoint; then starts a checkpoint
     * of everything before the new file, unless one is under way.
     */
    private void nextFile() throws IOException, InterruptedException {
        if (staging.remaining() < JournalFormat.HEADER_BYTES) {
            flushWholeBlocks();
        }
        int at = staging.position();
        JournalFormat.putHeader(staging, JournalFormat.END, seq, new byte[0], 0, 0);
        JournalFormat.sealCrc(staging, at, 0, null, crc);
        lastSeqIn[file] = seq;
        seq++;
        flushStaging();
        // The END and this round's records before it must be durable before the round reports
        // them: the round's own fsync covers only the file it ends in, and the checkpoint started
        // below may not finish before a power loss (replay would stop at the lost tail, and never
        // reach the new file's records either). A checkpoint started from here on starts at the new
        // file's beginning, where replay must go on.
        files[file].force(false);
        fsyncCount++;
        int next = (file + 1) % fileCount;
        file = next;
        offset = 0;
        stagedAt = 0;
        staging.clear();
        stagedOnDisk = 0;
        waitForCheckpointBeyond(lastSeqIn[next]);
        synchronized (this) {
            if (checkpointsPending == 0) {
                startCheckpointLocked(null);
            }
        }
    }

    /** Waits until records up to {@code seqInclusive} are covered by a finished checkpoint, starting one if none runs. */
    private void waitForCheckpointBeyond(long seqInclusive) throws IOException, InterruptedException {
        synchronized (this) {
            while (checkpointedSeq <= seqInclusive) {
                if (failure != null) {
                    throw new IOException(name + ": the log journal failed", failure);
                }
                if (checkpointsPending == 0) {
                    // the records before the current position hold the previous lap's last ones too
                    startCheckpointLocked(null);
                }
                wait();
            }
        }
    }

    /**
     * Two checkpoints of the same position, {@code done} completing with the second: then both
     * slots start replay there, so no record before it is replayed from either (a removed group's
     * records must never reach files made again under their names).
     */
    private void requestCheckpoint(CompletableFuture<Void> done) {
        if (failure != null) {
            done.completeExceptionally(refusal(failure));
            return;
        }
        synchronized (this) {
            startCheckpointLocked(null);
            startCheckpointLocked(done);
        }
    }

    /** Writer thread, holding this: a checkpoint of every record before the current position. */
    private void startCheckpointLocked(CompletableFuture<Void> done) {
        Checkpoint c = new Checkpoint(new JournalPosition(file, offset, seq), dirtySinceCheckpoint, done);
        dirtySinceCheckpoint = new HashSet<>();
        bytesSinceCheckpoint = 0;
        checkpointsPending++;
        checkpointQueue.add(c);
        notifyAll();
    }

    // ------------------------------------------------------------------ checkpoint thread

    private static final class Checkpoint {
        final JournalPosition start;
        final Set<Path> files;
        final CompletableFuture<Void> done;

        Checkpoint(JournalPosition start, Set<Path> files, CompletableFuture<Void> done) {
            this.start = start;
            this.files = files;
            this.done = done;
        }
    }

    private void runCheckpoints() {
        while (true) {
            Checkpoint c;
            synchronized (this) {
                while (checkpointQueue.isEmpty()) {
                    if (closing && writerDone.isDone()) {
                        return;
                    }
                    try {
                        wait(100);
                    } catch (InterruptedException e) {
                        // nothing interrupts it on purpose: without checkpoints the writer would
                        // wait for good, so the journal fails instead
                        checkpointerCrashed = true;
                        fail(e, "the log journal's checkpoint thread (interrupted)");
                        return;
                    }
                }
                c = checkpointQueue.remove(0);
            }
            Throwable error = failure;
            if (error == null) {
                try {
                    for (Path p : c.files) {
                        try (LogFile f = io.openExisting(p)) {
                            f.force(false);
                        } catch (NoSuchFileException deleted) {
                            // deleted by the log since: its records are skipped by replay
                        }
                    }
                    checkpointSlots.save(c.start, fileCount, fileBytes);
                    checkpointCount++;   // this thread only
                } catch (Throwable e) {
                    error = e;
                    if (crashedBy(e)) {
                        checkpointerCrashed = true;
                    }
                    fail(e, "a log journal checkpoint (fsync of the groups' log files, or the write of a slot of "
                            + CheckpointSlots.path(dir) + ")");
                }
            }
            synchronized (this) {
                checkpointsPending--;
                if (error == null) {
                    // the save went over the older slot: the previous newest is now the older one
                    checkpointedSeq = newestCheckpointSeq;
                    newestCheckpointSeq = c.start.seq;
                }
                notifyAll();
            }
            if (c.done != null) {
                if (error == null) {
                    c.done.complete(null);
                } else {
                    c.done.completeExceptionally(error);
                }
            }
        }
    }

    /**
     * Whether a failure of a journal thread's work is a crash of the thread (an Error or a runtime
     * exception: a bug, or the JVM out of memory) rather than the disk's answer (an IOException).
     */
    private static boolean crashedBy(Throwable e) {
        return !(e instanceof IOException);
    }

    /**
     * The journal's threads that crashed (0 or 1 each): its writer ({@code name-journal}) and its
     * checkpoint thread ({@code name-journal-checkpoint}). A crash fails the journal (see
     * {@link #failure()}); a failed disk operation fails it too but is not counted here. For metrics.
     */
    public int crashedWriterThreads() {
        return writerCrashed ? 1 : 0;
    }

    /** See {@link #crashedWriterThreads()}. */
    public int crashedCheckpointThreads() {
        return checkpointerCrashed ? 1 : 0;
    }

    private void fail(Throwable e, String what) {
        if (failure == null) {
            failure = e;
            log.error("{}: {} failed; the log journal refuses every record from now on, and the groups' log stores"
                    + " fail with it. Check the disk (space, kernel log), then restart the node: it replays what the"
                    + " journal holds", name, what, e);
        }
        synchronized (this) {
            notifyAll();
        }
    }

    /**
     * Writes what is queued, checkpoints (so the next start has nothing to replay), and stops the
     * threads. Call after the node's groups have closed their logs.
     */
    @Override
    public void close() throws IOException {
        if (closing) {
            return;
        }
        closing = true;
        LockSupport.unpark(writer);
        try {
            // bounded: a hung disk must not hang the node's stop (the next start replays what is left)
            writerDone.get(2 * CLOSE_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            log.warn("{}: the log journal's final checkpoint failed; the next start replays it", name, e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            log.warn("{}: the log journal's writer did not finish within {} s (a hung disk?); closing its files; the"
                    + " next start replays the journal", name, 2 * CLOSE_WAIT_SECONDS);
        }
        failLeftovers();
        synchronized (this) {
            notifyAll();
        }
        try {
            checkpointer.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeFiles();
    }

    /**
     * Tests: stops like a crash of the process: the threads end without writing what is queued and
     * without a final checkpoint (one running may finish), and the files are closed.
     */
    /**
     * Checkpoints start only when the writer enters the next file (and on demand), as before the
     * checkpoints per eighth of a file: for tests that need the logs' files unsynced at a power
     * loss, to show the replay brings their writes back. Call before the first append.
     */
    void checkpointOnlyAtFileSwitchesForTests() {
        checkpointEveryBytes = Long.MAX_VALUE;
    }

    void abandonForTests() throws InterruptedException {
        abandoned = true;
        closing = true;
        LockSupport.unpark(writer);
        writer.join(10_000);
        synchronized (this) {
            notifyAll();
        }
        checkpointer.join(10_000);
        closeFiles();
    }

    private void closeFiles() {
        if (checkpointSlots != null) {
            try {
                checkpointSlots.close();
            } catch (IOException e) {
                log.warn("{}: closing the log journal's checkpoint file failed", name, e);
            }
        }
        for (LogFile f : files) {
            if (f != null) {
                try {
                    f.close();
                } catch (IOException e) {
                    log.warn("{}: closing a log journal file failed", name, e);
                }
            }
        }
    }

    @Override
    public String toString() {
        return name + " log journal in " + dir;
    }

    /** Zeros written over a truncated range of a log file; the truncation waits for it. */
    private static final class ZeroRecord extends JournalRecord {
        private final LogSegment target;
        private final long position;
        private final int length;
        final CompletableFuture<Void> done = new CompletableFuture<>();

        ZeroRecord(LogSegment target, long position, int length) {
            this.target = target;
            this.position = position;
            this.length = length;
        }

        @Override
        LogSegment target() {
            return target;
        }

        @Override
        long filePosition() {
            return position;
        }

        @Override
        ByteBuffer payload() {
            return null;
        }

        @Override
        int length() {
            return length;
        }

        @Override
        void journaled(Throwable error) {
            if (error == null) {
                done.complete(null);
            } else {
                done.completeExceptionally(error);
            }
        }
    }
}
