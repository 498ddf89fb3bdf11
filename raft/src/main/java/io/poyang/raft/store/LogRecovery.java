package io.poyang.raft.store;

import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Rebuilds a store's state from its files when it opens. Runs as one blocking task on the I/O
 * executor.
 *
 * <p>Rules: the status file names the last trusted point (an index whose index-file entries and
 * log bytes were fsynced, at or below the commit index). Everything up to it is trusted without
 * reading; from the item after it the log is scanned forward, checking each item's CRCs, that its
 * index is the next one, and that its prevLogTerm is the previous item's term. The first item that
 * fails ends the log:
 * <ul>
 *   <li>a zeroed header (the preallocated, never written tail) is a clean end;</li>
 *   <li>anything else (a partial item, garbage, a broken chain) is a torn tail, cut off by zeroing
 *       it, when it lies above the saved commit index (a crash tears only items never reported
 *       persisted; damage there cannot be told from a tear, and the saved commit index lags the
 *       real one, so what is cut may have been reported: the leader sends it again);</li>
 *   <li>when the failure, or a clean end, lies at or below the commit index, data the store had
 *       reported persisted is gone: recovery refuses with a {@link LogCorruptedException} naming
 *       the file and offset, and changes nothing on disk.</li>
 * </ul>
 * Segments after the end are kept as preallocated spares, with their first header zeroed so stale
 * items in them can never be read as part of the log.
 */
final class LogRecovery {

    private static final PoyangLog log = PoyangLogs.get(LogRecovery.class);
    private static final int READ_CHUNK_BYTES = 4 << 20;
    /** How much of a torn tail is zeroed: enough for any torn batch in practice; the chain checks cover the rest. */
    private static final int ZERO_TORN_BYTES = 1 << 20;

    static final String K_FIRST_INDEX = "firstIndex";
    static final String K_FIRST_INDEX_POS = "firstIndexPos";
    static final String K_FIRST_PREV_TERM = "firstPrevTerm";
    static final String K_TRUSTED_INDEX = "trustedIndex";
    static final String K_TRUSTED_NEXT_POS = "trustedNextPos";
    static final String K_TRUSTED_TERM = "trustedTerm";
    static final String K_TERMS = "terms";
    static final String K_TERM = "term";
    static final String K_VOTED_FOR = "votedFor";
    static final String K_COMMIT_INDEX = "commitIndex";
    /**
     * Set when an fsync failed: the last index an fsync covered before. Items after it may be in
     * the page cache only (a failed fsync can leave pages the disk never got marked clean), so the
     * next recovery cuts them off, as a torn tail; none of them was reported persisted.
     */
    static final String K_FSYNC_FAILED_AFTER = "fsyncFailedAfter";
    /**
     * Set when recovery failed to make what it scanned durable (a zeroing write or an fsync of the
     * log failed): the id of the machine's boot it happened on ({@link BootId}), or
     * {@link #UNKNOWN_BOOT}. Until the machine restarts, the page cache may hold items the disk never
     * got, marked clean, and recovery cannot cut them as after {@link #K_FSYNC_FAILED_AFTER}: it does
     * not know which of them the killed process had reported persisted. So a start on that boot is
     * refused; after a reboot the disk is the truth and the scan decides. The store writes it too when
     * an fsync fails without syncForce (see {@link LogStore#onFsyncFailed}), but carries none over
     * from recovery, so the next status save drops it.
     */
    static final String K_FSYNC_FAILED_ON_BOOT = "fsyncFailedOnBoot";
    /** {@link #K_FSYNC_FAILED_ON_BOOT} on a system that gives no boot id: no later boot can be told from it. */
    static final String UNKNOWN_BOOT = "unknown";

    private final LogStore store;
    private final Path logDir;
    private final Path idxDir;
    /** The machine's current boot (null: unknown), read once per recovery. */
    private String bootId;

    LogRecovery(LogStore store, Path logDir, Path idxDir) {
        this.store = store;
        this.logDir = logDir;
        this.idxDir = idxDir;
    }

    /** The outcome, handed to the dispatcher thread. */
    static final class Result {
        final List<LogSegment> live = new ArrayList<>();
        final List<LogSegment> spares = new ArrayList<>();
        long firstIndex;
        long firstIndexPos;
        int firstPrevTerm;
        long trustedIndex;
        long trustedNextPos;
        int trustedTerm;
        long lastIndex;
        int lastTerm;
        long nextPos;
        /** Positions of the scanned items, indexes scanStartIndex..lastIndex. */
        long scanStartIndex;
        long[] positions = new long[1024];
        int positionCount;
        final TermIndex terms = new TermIndex();
        long commitIndex;
        /** {@link #K_FSYNC_FAILED_AFTER}, or -1. */
        long fsyncFailedAfter;
        int currentTerm;
        int votedFor;
        long tornBytes;
        /** The machine's current boot, or null ({@link BootId}). */
        String bootId;

        /** Closes every segment (the result was handed to nobody). */
        void closeAll() {
            for (LogSegment s : live) {
                SegmentQueue.closeQuietly(s);
            }
            for (LogSegment s : spares) {
                SegmentQueue.closeQuietly(s);
            }
        }

        void addPosition(long pos) {
            if (positionCount == positions.length) {
                positions = Arrays.copyOf(positions, positionCount * 2);
            }
            positions[positionCount++] = pos;
        }
    }

    Result run() throws IOException {
        safePoint();
        Files.createDirectories(logDir);
        Files.createDirectories(idxDir);
        Files.createDirectories(store.config().dir().resolve("snapshot"));
        // What a killed process renamed or created may not be durable yet: a status file renamed in
        // before its directory's fsync, spare segments cut before the log directory's. Recovery acts
        // on them (a vote read back counts as saved, items go into the spares), so their directory
        // entries are made durable first: a power loss must not bring back the state before them.
        FileIo io = store.fileIo();
        io.syncDirectory(store.config().dir());
        io.syncDirectory(logDir);
        io.syncDirectory(idxDir);
        Map<String, String> status = store.statusFile().loadBlocking();
        Result r = new Result();
        r.firstIndex = longOf(status, K_FIRST_INDEX, 1);
        r.firstIndexPos = longOf(status, K_FIRST_INDEX_POS, 0);
        r.firstPrevTerm = (int) longOf(status, K_FIRST_PREV_TERM, 0);
        r.trustedIndex = longOf(status, K_TRUSTED_INDEX, 0);
        r.trustedNextPos = longOf(status, K_TRUSTED_NEXT_POS, 0);
        r.trustedTerm = (int) longOf(status, K_TRUSTED_TERM, 0);
        r.commitIndex = longOf(status, K_COMMIT_INDEX, 0);
        r.currentTerm = (int) longOf(status, K_TERM, 0);
        r.votedFor = (int) longOf(status, K_VOTED_FOR, 0);
        r.fsyncFailedAfter = longOf(status, K_FSYNC_FAILED_AFTER, -1);
        bootId = store.config().bootId().get();
        r.bootId = bootId;
        String failedBoot = status.get(K_FSYNC_FAILED_ON_BOOT);
        if (failedBoot != null) {
            checkRestartedSince(failedBoot);
        }

        List<LogSegment> all = openSegments();
        try {
            scan(r, all, status);
        } catch (IOException | RuntimeException e) {
            for (LogSegment s : all) {
                SegmentQueue.closeQuietly(s);
            }
            throw e;
        }
        return r;
    }

    private List<LogSegment> openSegments() throws IOException {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.list(logDir)) {
            s.forEach(p -> {
                if (IndexFiles.parseName(p) != null) {
                    files.add(p);
                } else {
                    log.warn("{}: ignoring unexpected file {} in the log directory", store.name(), p);
                }
            });
        }
        files.sort(null);
        List<LogSegment> segs = new ArrayList<>();
        for (Path p : files) {
            LogFile f = null;
            try {
                safePoint();
                f = store.fileIo().open(p);
                segs.add(new LogSegment(IndexFiles.parseName(p), f.size(), f));
            } catch (IOException | RuntimeException e) {
                // (EMFILE, EACCES): the ones opened before are not handed to anyone; close them
                if (f != null) {
                    closeQuietly(f, e);
                }
                for (LogSegment s : segs) {
                    closeQuietly(s.file, e);
                }
                throw e;
            }
        }
        return segs;
    }

    private void scan(Result r, List<LogSegment> all, Map<String, String> status) throws IOException {
        // The segments the log lives in start at the one holding the first index.
        int firstSeg = -1;
        for (int i = 0; i < all.size(); i++) {
            // (the last segment may also end right where the first index goes; an empty file, left by
            // a crash in the group's first preallocation, ends where it starts and holds nothing)
            if (all.get(i).contains(r.firstIndexPos)
                    || (i == all.size() - 1 && all.get(i).sizeBytes > 0 && all.get(i).endPos() == r.firstIndexPos)) {
                firstSeg = i;
                break;
            }
        }
        if (firstSeg < 0) {
            if (r.commitIndex >= r.firstIndex || r.trustedIndex >= r.firstIndex) {
                throw new LogCorruptedException(logDir.resolve(LogSegment.fileName(r.firstIndexPos)), 0,
                        "the log segment holding the first index " + r.firstIndex + " (position " + r.firstIndexPos
                                + ") is missing, but the commit index is " + r.commitIndex);
            }
            // A new log (or one that never got an item): files are only leftovers of preallocation
            // if nothing was ever written in them. Anything else means the status file does not
            // belong to these segments (lost, or restored from elsewhere): refuse, delete nothing.
            for (LogSegment s : all) {
                if (!headerIsZero(s)) {
                    throw new LogCorruptedException(s.path(), 0, "the log segment holds items, but the status file"
                            + " says the log starts at index " + r.firstIndex + " (position " + r.firstIndexPos
                            + ") and no segment covers that position; the status file may be missing or stale");
                }
            }
            for (LogSegment s : all) {
                SegmentQueue.closeQuietly(s);
                store.fileIo().delete(s.path());
            }
            r.lastIndex = r.firstIndex - 1;
            r.lastTerm = r.firstPrevTerm;
            r.nextPos = r.firstIndexPos;
            r.scanStartIndex = r.firstIndex;
            return;
        }
        for (int i = 0; i < firstSeg; i++) {
            // Left behind by a deletion that saved the new first index but crashed before removing them.
            LogSegment s = all.get(i);
            SegmentQueue.closeQuietly(s);
            store.fileIo().delete(s.path());
            log.info("{}: deleted {}, wholly below the first index {}", store.name(), s, r.firstIndex);
        }
        List<LogSegment> segs = new ArrayList<>(all.subList(firstSeg, all.size()));
        for (int i = 1; i < segs.size(); i++) {
            if (segs.get(i).startPos != segs.get(i - 1).endPos()) {
                throw new LogCorruptedException(segs.get(i).path(), 0, "log segments are not contiguous: "
                        + segs.get(i - 1) + " is followed by " + segs.get(i));
            }
        }

        long expect;
        long pos;
        int prevTerm;
        if (r.trustedIndex >= r.firstIndex) {
            expect = r.trustedIndex + 1;
            pos = r.trustedNextPos;
            prevTerm = r.trustedTerm;
            r.terms.decode(status.get(K_TERMS));
        } else {
            expect = r.firstIndex;
            pos = r.firstIndexPos;
            prevTerm = r.firstPrevTerm;
        }
        r.scanStartIndex = expect;
        r.lastIndex = expect - 1;
        r.lastTerm = prevTerm;

        int segIdx = indexOfSegment(segs, pos);
        if (segIdx < 0) {
            throw new LogCorruptedException(segs.get(segs.size() - 1).path(), 0, "the trusted position " + pos
                    + " recorded in the status file is in no log segment");
        }
        LogItemCodec codec = new LogItemCodec();
        LogItemCodec.ItemHeader h = new LogItemCodec.ItemHeader();
        ByteBuffer buf = ByteBuffer.allocate(READ_CHUNK_BYTES);
        long bufStart = -1;  // log position of buf[0]
        int bufLen = 0;
        String tornReason = null;
        LogSegment seg = segs.get(segIdx);
        while (true) {
            if (seg.endPos() - pos < LogItemCodec.HEADER_BYTES) {
                safePoint();
                if (segIdx + 1 >= segs.size()) {
                    break;  // the next item would have gone into a segment that was never made
                }
                seg = segs.get(++segIdx);
                pos = seg.startPos;
                continue;
            }
            if (pos < bufStart || pos + LogItemCodec.HEADER_BYTES > bufStart + bufLen) {
                safePoint();
                bufLen = read(seg, pos, buf, READ_CHUNK_BYTES);
                bufStart = pos;
            }
            int off = (int) (pos - bufStart);
            LogItemCodec.HeaderCheck check = codec.parseHeader(buf, off, h);
            if (check == LogItemCodec.HeaderCheck.ZERO) {
                break;
            }
            if (check == LogItemCodec.HeaderCheck.BAD) {
                tornReason = h.problem;
                break;
            }
            if (check == LogItemCodec.HeaderCheck.SEGMENT_END) {
                if (h.index != expect) {
                    tornReason = "segment-end marker names index " + h.index + ", expected " + expect;
                    break;
                }
                if (segIdx + 1 >= segs.size()) {
                    pos = seg.endPos();
                    break;
                }
                safePoint();
                seg = segs.get(++segIdx);
                pos = seg.startPos;
                continue;
            }
            if (h.totalBytes > seg.endPos() - pos) {
                tornReason = "item of " + h.totalBytes + " bytes crosses the segment end";
                break;
            }
            if (pos + h.totalBytes > bufStart + bufLen) {
                safePoint();
                if (h.totalBytes > buf.capacity()) {
                    buf = ByteBuffer.allocate(h.totalBytes);
                }
                bufLen = read(seg, pos, buf, buf.capacity());
                bufStart = pos;
                off = 0;
                if (bufLen < h.totalBytes) {
                    tornReason = "item cut short by the end of the file";
                    break;
                }
            }
            String partProblem = codec.checkParts(buf, off, h);
            if (partProblem != null) {
                tornReason = partProblem;
                break;
            }
            if (h.index != expect) {
                tornReason = "index chain broken: found index " + h.index + ", expected " + expect;
                break;
            }
            if (h.prevLogTerm != prevTerm || h.term < prevTerm) {
                tornReason = "term chain broken at index " + h.index + ": prevLogTerm " + h.prevLogTerm + ", term "
                        + h.term + ", previous item's term " + prevTerm;
                break;
            }
            if (r.fsyncFailedAfter >= 0 && h.index > r.fsyncFailedAfter) {
                tornReason = "past index " + r.fsyncFailedAfter + ", the last one an fsync covered before an fsync"
                        + " failed (the page cache may hold items the disk never got)";
                break;
            }
            r.addPosition(pos);
            r.terms.onAppend(h.index, h.term);
            // A segment's first index is that of the item at its start — or of the log's first item
            // when the log starts inside it. The scan may begin in the middle of a segment (after the
            // trusted point); that item is not the segment's first: the pass below reads it.
            if (seg.firstIndex < 0 && (pos == seg.startPos || pos == r.firstIndexPos)) {
                seg.firstIndex = h.index;
            }
            r.lastIndex = h.index;
            r.lastTerm = h.term;
            prevTerm = h.term;
            expect++;
            pos += h.totalBytes;
        }

        // the last point the recovery may stop at: from here on it changes the files (cuts a torn
        // tail, zeroes spares' headers) and must finish
        safePoint();
        long offsetInSeg = pos - seg.startPos;
        if (r.lastIndex < r.commitIndex) {
            String what = tornReason != null ? tornReason + " at index " + expect
                    : "the log ends at index " + r.lastIndex;
            throw new LogCorruptedException(seg.path(), offsetInSeg, what + ", but the commit index saved in the"
                    + " status file is " + r.commitIndex + ", so committed entries are damaged or missing");
        }
        r.nextPos = pos;
        // Segments after the one the scan ended in are spares; when the next item would go to the
        // next segment, that one stays a spare too and the appender rolls to it.
        int endSeg = segIdx;
        List<LogFile> touched = new ArrayList<>();
        if (tornReason != null) {
            long zeroLen = Math.min(ZERO_TORN_BYTES, seg.endPos() - pos);
            zeroScanned(seg.file, offsetInSeg, (int) zeroLen, status);
            touched.add(seg.file);
            r.tornBytes = zeroLen;
            log.warn("{}: cut a torn tail after index {} in {} at offset {} ({}). A crash or power loss tears only"
                    + " items never reported persisted; past the commit index the status file saved ({}), recovery"
                    + " cannot tell such a tear from damage to items it did report, so it cuts either way (the"
                    + " leader sends them again)", store.name(), r.lastIndex, seg.path(), offsetInSeg, tornReason,
                    r.commitIndex);
        }
        boolean spareBroken = false;
        for (int i = 0; i < segs.size(); i++) {
            LogSegment s = segs.get(i);
            if (i <= endSeg) {
                r.live.add(s);
            } else if (spareBroken || s.sizeBytes != store.config().segmentBytes()) {
                // A preallocation cut short by the crash (or made with another segment size): drop it
                // and every spare after it, so the spares stay contiguous; new ones are made as needed.
                spareBroken = true;
                SegmentQueue.closeQuietly(s);
                store.fileIo().delete(s.path());
            } else {
                s.firstIndex = -1;
                if (!headerIsZero(s)) {
                    zeroScanned(s.file, 0, LogItemCodec.HEADER_BYTES, status);
                    touched.add(s.file);
                }
                r.spares.add(s);
            }
        }
        // What the scan found past the trusted point may be in the page cache only (the process was
        // killed before its fsync): it is about to be reported persisted, acknowledged to the leader
        // and counted toward commits, so it goes to the disk first. Without syncForce too: the store
        // starts with everything it read counted as fsynced, and the status file it saves next (the
        // commit index, the trusted point) may claim any of it.
        for (LogSegment s : r.live) {
            if (s.endPos() > r.trustedNextPos && !touched.contains(s.file)) {
                touched.add(s.file);
            }
        }
        for (LogFile f : touched) {
            try {
                f.force(false);
            } catch (IOException e) {
                throw scannedNotDurable("fsyncing " + f.path(), e, status);
            }
        }
        // Segments (or their beginnings) in the trusted region were not scanned: their first index is
        // the log's first index for the segment the log starts in (what lies before it there is
        // left over from before a reset), else the index of the item at the segment's start.
        for (LogSegment s : r.live) {
            safePoint();   // what the scan changed is durable now
            if (s.firstIndex < 0 && s.startPos < r.nextPos) {
                if (s.contains(r.firstIndexPos) && r.firstIndexPos != s.startPos) {
                    // the log's first item is here unless it did not fit (then it is in the next segment)
                    boolean here = r.lastIndex >= r.firstIndex
                            && itemIndexAt(s, r.firstIndexPos, codec, h) == r.firstIndex;
                    s.firstIndex = here ? r.firstIndex : -1;
                } else {
                    s.firstIndex = firstIndexOf(s, codec, h);
                }
            }
        }
    }

    /**
     * A safe point: when the group's start was abandoned ({@link LogStore#abandonRecovery}), the
     * recovery ends here, before reading on; the caller closes what it opened. Nothing on disk has
     * been changed by the scan at any of these points, or what was changed is complete.
     */
    private void safePoint() {
        if (store.recoveryAbandoned()) {
            throw store.abandonedError();
        }
    }

    /**
     * A start on the boot an earlier recovery's write or fsync failed on is refused; on a later
     * boot the scan decides (see {@link #K_FSYNC_FAILED_ON_BOOT}).
     */
    private void checkRestartedSince(String failedBoot) {
        String boot = bootId;
        if (boot != null && boot.equals(failedBoot)) {
            throw new LogStoreException(store.name() + ": refusing to start the group in " + store.config().dir()
                    + ": a write or fsync of the log failed earlier on this boot of the machine (boot id " + boot
                    + "), so the page cache may hold log items the disk never got, marked clean, and recovering now"
                    + " would count them persisted. Check the disk (kernel log, space), then restart"
                    + " the machine, not only the node or the group: after a reboot the disk is the truth and"
                    + " recovery decides from it (" + K_FSYNC_FAILED_ON_BOOT + " in the status file)");
        }
        if (boot == null || failedBoot.equals(UNKNOWN_BOOT)) {
            log.error("{}: a write or fsync of the log in {} failed earlier, and this system gives no boot"
                    + " id ({}), so the store cannot tell whether the machine restarted since; it starts, trusting"
                    + " what it reads. If the machine has not restarted since that failure, stop this node and {}",
                    store.name(), store.config().dir(), BootId.LINUX_BOOT_ID, LogStore.RESTART_THE_MACHINE);
        } else {
            log.warn("{}: a write or fsync of the log failed on boot {}; the machine has restarted"
                    + " since, so the disk is the truth and the scan decides", store.name(), failedBoot);
        }
    }

    private void zeroScanned(LogFile f, long offset, int len, Map<String, String> status) {
        try {
            zero(f, offset, len);
        } catch (IOException e) {
            throw scannedNotDurable("zeroing " + len + " bytes at offset " + offset + " of " + f.path(), e, status);
        }
    }

    /**
     * Making the scanned part durable failed (the disk reported an I/O error, or no space for a
     * zeroing write): the scanned items may now sit in the page cache only, marked clean, and a start
     * on this boot would read them back, fsync "successfully" and report them persisted. Records the
     * boot in the status file ({@link #K_FSYNC_FAILED_ON_BOOT}, the rest as read) so such a start is
     * refused, and returns the error the start fails with.
     */
    private LogStoreException scannedNotDurable(String what, IOException e, Map<String, String> status) {
        String boot = bootId;
        Map<String, String> marked = new LinkedHashMap<>(status);
        marked.put(K_FSYNC_FAILED_ON_BOOT, boot != null ? boot : UNKNOWN_BOOT);
        Path statusPath = store.statusFile().path();
        String recorded;
        try {
            store.statusFile().writeBlocking(StatusFile.encode(marked));
            recorded = boot != null ? "Recorded in " + statusPath + ": a start on this boot is refused. "
                    : "Recorded in " + statusPath + ", but this system gives no boot id (" + BootId.LINUX_BOOT_ID
                            + "), so the next start cannot refuse. ";
        } catch (IOException | RuntimeException saveError) {
            e.addSuppressed(saveError);
            log.error("{}: recovery's {} failed, and recording that in {} failed too ({}); {}", store.name(), what,
                    statusPath, saveError.toString(), LogStore.RESTART_THE_MACHINE);
            recorded = "Recording this in " + statusPath + " failed too (" + saveError
                    + "), so the next start cannot refuse. ";
        }
        return new LogStoreException(store.name() + ": recovery of " + store.config().dir() + " could not make the log"
                + " items it read past the trusted point durable: " + what + " failed (" + e + "). " + recorded
                + "Check the disk (kernel log, space), then " + LogStore.RESTART_THE_MACHINE, e);
    }

    private static void closeQuietly(LogFile f, Exception pending) {
        try {
            f.close();
        } catch (IOException e) {
            pending.addSuppressed(e);
        }
    }

    private static int indexOfSegment(List<LogSegment> segs, long pos) {
        for (int i = 0; i < segs.size(); i++) {
            if (segs.get(i).contains(pos) || (pos == segs.get(i).endPos() && i == segs.size() - 1)) {
                return i;
            }
        }
        return -1;
    }

    private static int read(LogSegment seg, long pos, ByteBuffer buf, int max) throws IOException {
        buf.clear();
        buf.limit((int) Math.min(max, seg.endPos() - pos));
        int n = seg.file.readFully(buf, pos - seg.startPos);
        // Past the end of a shorter-than-expected file reads as zeros (a clean end).
        while (buf.hasRemaining()) {
            buf.put((byte) 0);
        }
        return n < 0 ? 0 : buf.position();
    }

    private static void zero(LogFile f, long offset, int len) throws IOException {
        f.writeFully(ByteBuffer.allocate(len), offset);
    }

    private static boolean headerIsZero(LogSegment s) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(LogItemCodec.HEADER_BYTES);
        s.file.readFully(b, 0);
        for (int i = 0; i < b.position(); i++) {
            if (b.get(i) != 0) {
                return false;
            }
        }
        return true;
    }

    /** The index of the item whose header is at log position {@code pos} of {@code s}; -1 when none is there. */
    private static long itemIndexAt(LogSegment s, long pos, LogItemCodec codec, LogItemCodec.ItemHeader h)
            throws IOException {
        if (s.endPos() - pos < LogItemCodec.HEADER_BYTES) {
            return -1;
        }
        ByteBuffer b = ByteBuffer.allocate(LogItemCodec.HEADER_BYTES);
        s.file.readFully(b, pos - s.startPos);
        if (b.position() < LogItemCodec.HEADER_BYTES) {
            return -1;
        }
        return codec.parseHeader(b, 0, h) == LogItemCodec.HeaderCheck.ITEM ? h.index : -1;
    }

    private static long firstIndexOf(LogSegment s, LogItemCodec codec, LogItemCodec.ItemHeader h) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(LogItemCodec.HEADER_BYTES);
        s.file.readFully(b, 0);
        if (b.position() < LogItemCodec.HEADER_BYTES) {
            return -1;
        }
        LogItemCodec.HeaderCheck c = codec.parseHeader(b, 0, h);
        if (c != LogItemCodec.HeaderCheck.ITEM) {
            throw new LogCorruptedException(s.path(), 0, "the first item of a segment in the trusted part of the log"
                    + " is unreadable (" + (c == LogItemCodec.HeaderCheck.BAD ? h.problem : c) + ")");
        }
        return h.index;
    }

    private static long longOf(Map<String, String> m, String key, long dflt) {
        String v = m.get(key);
        if (v == null) {
            return dflt;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new LogStoreException("status file value " + key + "=" + v + " is not a number");
        }
    }
}
