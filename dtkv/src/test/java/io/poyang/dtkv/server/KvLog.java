package io.poyang.dtkv.server;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.PbParser;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A test stand-in for the raft log: every write gets the next index and the current leader
 * timestamp, is encoded as the log would store it, and the store applies the decoded copy (what a
 * follower does). {@link #replayInto} applies the same entries to another store.
 */
final class KvLog {

    static final long CLIENT_A_MOST = 0xA;
    static final long CLIENT_A_LEAST = 0xA1;
    static final long CLIENT_B_MOST = 0xB;
    static final long CLIENT_B_LEAST = 0xB1;

    /** One logged write. */
    static final class Entry {
        final long index;
        final int term;
        final long timestampMillis;
        /** The encoded request, or null for an entry without one (a new leader's no-op). */
        final byte[] body;

        Entry(long index, int term, long timestampMillis, byte[] body) {
            this.index = index;
            this.term = term;
            this.timestampMillis = timestampMillis;
            this.body = body;
        }

        /** Applies this entry to {@code target}, decoded from its bytes. */
        KvResp applyTo(KvStore target) {
            if (body == null) {
                target.applyOther(index, term, timestampMillis);
                return null;
            }
            return target.apply(index, term, timestampMillis, decode());
        }

        KvReq decode() {
            return PbParser.parse(body, new KvReq.Decoder());
        }
    }

    final KvStore store;
    final List<Entry> entries = new ArrayList<>();
    long index;
    int term = 1;
    long clockMillis = 1_700_000_000_000L;

    KvLog(KvStore store) {
        this.store = store;
    }

    KvLog() {
        this(new KvStore());
    }

    KvResp apply(KvReq req) {
        index++;
        Entry e = new Entry(index, term, clockMillis, EncodeContext.encodeToArray(req));
        entries.add(e);
        return e.applyTo(store);
    }

    /** An entry without a DtKV request in the current term (a membership change, say). */
    void entryWithoutRequest() {
        index++;
        Entry e = new Entry(index, term, clockMillis, null);
        entries.add(e);
        e.applyTo(store);
    }

    /**
     * A new leader took over: the term goes up and its first entry, a no-op without a DtKV request,
     * is applied at the current clock (set the clock to the new leader's reading first).
     */
    void newLeaderNoOp() {
        term++;
        entryWithoutRequest();
    }

    /** Advances the leader's clock. */
    void advance(long millis) {
        clockMillis += millis;
    }

    /** Applies the entries with index above {@code afterIndex} to {@code target}, decoded from their bytes. */
    void replayInto(KvStore target, long afterIndex) {
        for (Entry e : entries) {
            if (e.index > afterIndex) {
                e.applyTo(target);
            }
        }
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static KvReq asA(KvReq r) {
        return r.session(CLIENT_A_MOST, CLIENT_A_LEAST);
    }

    static KvReq asB(KvReq r) {
        return r.session(CLIENT_B_MOST, CLIENT_B_LEAST);
    }
}
