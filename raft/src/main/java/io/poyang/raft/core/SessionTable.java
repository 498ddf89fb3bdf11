package io.poyang.raft.core;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbParser;
import io.poyang.common.LongObjMap;
import io.poyang.raft.client.FieldMessage;
import io.poyang.raft.store.ByteBody;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Exactly-once writes for any state machine (DESIGN §6). A client that wants them sends a session
 * id and a sequence number with a write (RaftWriteRequest fields 4 and 5, or
 * {@link RaftGroup#submit(int, Encodable, long, long, long)}); the leader writes them into the log
 * entry's business header. When the entry is applied, this table — part of the replicated state,
 * the same on every node — decides:
 * <ul>
 * <li>a (session, seq) not seen before is applied, and its result (or error) is kept;</li>
 * <li>a (session, seq) already applied is <b>not</b> applied again: the writer gets the result of
 * the first application (a retry after a timeout, or a retry that reached the log twice);</li>
 * <li>a seq below the session's window of kept results (the last {@code sessionWindow} seqs) is
 * answered "outcome unknown": the table no longer knows.</li>
 * </ul>
 * A session expires {@code sessionExpiryMillis} after its last write, measured on the entries'
 * timestamps (the leader's clock, made monotonic here), so every replica expires it at the same
 * entry. The table is saved in snapshots (raft's section of the data file, before the state
 * machine's data) and restored with them. Writes without a session pay nothing. Dispatcher thread.
 */
final class SessionTable {

    /** The business header of a session write (message SessionHeader of raft.proto): 1 session_id, 2 seq. */
    static final FieldMessage.Schema HEADER = new FieldMessage.Schema("SessionHeader", new int[0], new int[0]);
    private static final int MAGIC = 0x50595353;   // "PYSS"

    /** Outcome of {@link #check}. */
    static final int NEW = 0;
    static final int DUPLICATE = 1;
    static final int TOO_OLD = 2;

    private final RaftGroup g;
    private final int window;
    private final long expiryMillis;
    private final LongObjMap<Session> sessions = new LongObjMap<>();
    private int sessionCount;
    /** The latest entry timestamp seen (never goes back): the table's clock. */
    private long clockMillis;
    private long lastPurgeMillis;

    /** What {@link #check} found for a duplicate: the first application's outcome. */
    Encodable foundResult;
    int foundErrorCode;
    String foundErrorMessage;
    /** For a duplicate of an entry in the same batch that is not applied yet: its slot in the batch, else -1. */
    int foundPendingSlot;

    SessionTable(RaftGroup g) {
        this.g = g;
        this.window = g.config.sessionWindow();
        this.expiryMillis = g.config.sessionExpiryMillis();
    }

    private static final class Session {
        final long id;
        long lastActiveMillis;
        /** Ring of the last window seqs, their results, error codes and messages. */
        final long[] seqs;
        final Object[] results;
        final int[] errorCodes;
        final String[] errorMessages;
        /** Slot in the current apply batch while applied but not yet recorded; -1 otherwise. */
        final int[] pendingSlots;
        int count;
        int head;

        Session(long id, int window) {
            this.id = id;
            this.seqs = new long[window];
            this.results = new Object[window];
            this.errorCodes = new int[window];
            this.errorMessages = new String[window];
            this.pendingSlots = new int[window];
        }

        int find(long seq) {
            for (int i = 0; i < count; i++) {
                int k = (head + i) % seqs.length;
                if (seqs[k] == seq) {
                    return k;
                }
            }
            return -1;
        }

        long minSeq() {
            long min = Long.MAX_VALUE;
            for (int i = 0; i < count; i++) {
                min = Math.min(min, seqs[(head + i) % seqs.length]);
            }
            return min;
        }

        /** Adds a seq, dropping the oldest when full; returns its ring position. */
        int add(long seq) {
            int k;
            if (count < seqs.length) {
                k = (head + count) % seqs.length;
                count++;
            } else {
                k = head;
                head = (head + 1) % seqs.length;
            }
            seqs[k] = seq;
            results[k] = null;
            errorCodes[k] = 0;
            errorMessages[k] = null;
            pendingSlots[k] = -1;
            return k;
        }
    }

    // ---------------------------------------------------------------- leader: the header

    /** The business header carrying a write's session, or null for a write without one. */
    Encodable header(WriteTask t) {
        if (t.sessionId == 0) {
            return null;
        }
        return HEADER.builder().set(1, t.sessionId).set(2, t.sessionSeq).build();
    }

    /** The session header of an entry: {session id, seq}, or null when it has none. */
    static long[] parseHeader(Encodable header) {
        if (header == null) {
            return null;
        }
        FieldMessage f;
        if (header instanceof FieldMessage) {
            f = (FieldMessage) header;
        } else {
            ByteBody b = (ByteBody) header;
            f = PbParser.parse(java.nio.ByteBuffer.wrap(b.array(), b.offset(), b.length()), HEADER.create());
        }
        long id = f.getLong(1);
        return id == 0 ? null : new long[]{id, f.getLong(2)};
    }

    // ---------------------------------------------------------------- apply

    /**
     * Decides what to do with (session, seq) at an entry of {@code timestampMillis}. On
     * {@link #DUPLICATE}, {@link #foundResult}/{@link #foundErrorCode}/{@link #foundPendingSlot}
     * say what the first application gave. On {@link #NEW} the caller applies the entry and calls
     * {@link #record} (after {@link #markPending} when the result comes later in the batch).
     */
    int check(long sessionId, long seq, long timestampMillis) {
        if (timestampMillis > clockMillis) {
            clockMillis = timestampMillis;
        }
        Session s = sessions.get(sessionId);
        if (s != null && s.lastActiveMillis < clockMillis - expiryMillis) {
            sessions.remove(sessionId);
            sessionCount--;
            s = null;
        }
        if (s == null) {
            return NEW;
        }
        int k = s.find(seq);
        if (k >= 0) {
            foundResult = (Encodable) s.results[k];
            foundErrorCode = s.errorCodes[k];
            foundErrorMessage = s.errorMessages[k];
            foundPendingSlot = s.pendingSlots[k];
            s.lastActiveMillis = clockMillis;
            return DUPLICATE;
        }
        if (s.count == s.seqs.length && seq < s.minSeq()) {
            return TOO_OLD;
        }
        return NEW;
    }

    /** A NEW (session, seq) is in the current batch at {@code slot}; its result is recorded after the batch. */
    void markPending(long sessionId, long seq, int slot) {
        Session s = sessions.get(sessionId);
        if (s == null) {
            s = new Session(sessionId, window);
            sessions.put(sessionId, s);
            sessionCount++;
        }
        int k = s.add(seq);
        s.pendingSlots[k] = slot;
        s.lastActiveMillis = clockMillis;
    }

    /** The outcome of (session, seq) after the state machine applied it. */
    void record(long sessionId, long seq, Encodable result, int errorCode, String errorMessage) {
        Session s = sessions.get(sessionId);
        if (s == null) {
            return;
        }
        int k = s.find(seq);
        if (k >= 0) {
            s.results[k] = result;
            s.errorCodes[k] = errorCode;
            s.errorMessages[k] = errorMessage;
            s.pendingSlots[k] = -1;
        }
        if (clockMillis - lastPurgeMillis > Math.max(1000, expiryMillis / 10)) {
            purge();
        }
    }

    /** Drops expired sessions (memory only: {@link #check} treats them as expired anyway). */
    private void purge() {
        lastPurgeMillis = clockMillis;
        List<Long> dead = new ArrayList<>();
        sessions.forEach((id, s) -> {
            if (s.lastActiveMillis < clockMillis - expiryMillis) {
                dead.add(id);
            }
            return true;
        });
        for (long id : dead) {
            sessions.remove(id);
            sessionCount--;
        }
    }

    int size() {
        return sessionCount;
    }

    // ---------------------------------------------------------------- snapshots

    /** The table as bytes (captured on the dispatcher with the state machine). */
    byte[] serialize() throws IOException {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        DataOutputStream d = new DataOutputStream(bytes);
        d.writeLong(clockMillis);
        d.writeInt(sessionCount);
        List<Session> all = new ArrayList<>();
        sessions.forEach((id, s) -> {
            all.add(s);
            return true;
        });
        all.sort((a, b) -> Long.compare(a.id, b.id));
        for (Session s : all) {
            d.writeLong(s.id);
            d.writeLong(s.lastActiveMillis);
            d.writeInt(s.count);
            for (int i = 0; i < s.count; i++) {
                int k = (s.head + i) % s.seqs.length;
                d.writeLong(s.seqs[k]);
                d.writeInt(s.errorCodes[k]);
                d.writeUTF(s.errorMessages[k] == null ? "" : s.errorMessages[k]);
                Encodable r = (Encodable) s.results[k];
                byte[] rb = r == null ? null : EncodeContext.encodeToArray(r);
                d.writeInt(rb == null ? -1 : rb.length);
                if (rb != null) {
                    d.write(rb);
                }
            }
        }
        d.flush();
        return bytes.toByteArray();
    }

    /** Writes raft's section of a snapshot's data: a mark, the length, the table. */
    static void writeSection(DataOutputStream out, byte[] table) throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(table.length);
        out.write(table);
    }

    /** Reads raft's section of a snapshot's data (I/O thread); the stream is left at the state machine's data. */
    static byte[] readSection(DataInputStream in) throws IOException {
        int magic = in.readInt();
        if (magic != MAGIC) {
            throw new IOException("the snapshot's raft section is damaged (mark " + Integer.toHexString(magic) + ")");
        }
        int len = in.readInt();
        if (len < 0 || len > (1 << 30)) {
            throw new IOException("the snapshot's raft section has an impossible length " + len);
        }
        byte[] b = new byte[len];
        in.readFully(b);
        return b;
    }

    /** Replaces the table with a snapshot's (dispatcher thread); null or empty: no sessions. */
    void restore(byte[] table) throws IOException {
        sessions.clear();
        sessionCount = 0;
        clockMillis = 0;
        if (table == null || table.length == 0) {
            return;
        }
        DataInputStream d = new DataInputStream(new java.io.ByteArrayInputStream(table));
        clockMillis = d.readLong();
        int n = d.readInt();
        for (int i = 0; i < n; i++) {
            Session s = new Session(d.readLong(), window);
            s.lastActiveMillis = d.readLong();
            int c = d.readInt();
            for (int j = 0; j < c; j++) {
                long seq = d.readLong();
                int code = d.readInt();
                String msg = d.readUTF();
                int len = d.readInt();
                byte[] rb = null;
                if (len >= 0) {
                    rb = new byte[len];
                    d.readFully(rb);
                }
                int k = s.add(seq);
                s.errorCodes[k] = code;
                s.errorMessages[k] = msg.isEmpty() ? null : msg;
                s.results[k] = rb == null ? null : new ByteBody(rb);
            }
            sessions.put(s.id, s);
            sessionCount++;
        }
    }

    /** For tests: whether the table knows (session, seq). */
    boolean knows(long sessionId, long seq) {
        Session s = sessions.get(sessionId);
        return s != null && s.find(seq) >= 0;
    }
}
