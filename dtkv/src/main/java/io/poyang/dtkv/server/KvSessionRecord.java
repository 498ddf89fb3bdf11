package io.poyang.dtkv.server;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;
import io.poyang.dtkv.KvResp;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/** A client session in a snapshot (messages {@code KvSessionRecord} and {@code KvSessionResult}). Immutable. */
final class KvSessionRecord implements Encodable {

    final long most;
    final long least;
    final long ackedBelow;
    final long lastActiveMillis;
    final List<Result> results;
    private final int size;

    KvSessionRecord(long most, long least, long ackedBelow, long lastActiveMillis, List<Result> results) {
        this.most = most;
        this.least = least;
        this.ackedBelow = ackedBelow;
        this.lastActiveMillis = lastActiveMillis;
        this.results = results;
        this.size = PbUtil.sizeOfFixed64Field(1, most) + PbUtil.sizeOfFixed64Field(2, least)
                + PbUtil.sizeOfInt64Field(3, ackedBelow) + PbUtil.sizeOfInt64Field(4, lastActiveMillis)
                + PbUtil.sizeOfRepeatedMessageField(5, results);
    }

    static KvSessionRecord of(ClientSession s) {
        List<Result> rs = new ArrayList<>();
        s.forEachResult((seq, resp) -> rs.add(new Result(seq, resp)));
        return new KvSessionRecord(s.most, s.least, s.ackedBelow, s.lastActiveMillis, rs);
    }

    /**
     * This record as parts of at most about {@code maxBytes} each (at least one answer per part), all
     * with the session's fields: a session may hold 65,536 answers of several KiB, far more than one
     * snapshot chunk should. The restorer merges parts of one client into one session.
     */
    List<KvSessionRecord> split(int maxBytes) {
        if (size <= maxBytes || results.size() <= 1) {
            return java.util.Collections.singletonList(this);
        }
        List<KvSessionRecord> parts = new ArrayList<>();
        List<Result> part = new ArrayList<>();
        int bytes = 0;
        for (Result r : results) {
            int n = r.encodedSize() + 8;
            if (!part.isEmpty() && bytes + n > maxBytes) {
                parts.add(new KvSessionRecord(most, least, ackedBelow, lastActiveMillis, part));
                part = new ArrayList<>();
                bytes = 0;
            }
            part.add(r);
            bytes += n;
        }
        parts.add(new KvSessionRecord(most, least, ackedBelow, lastActiveMillis, part));
        return parts;
    }

    @Override
    public int encodedSize() {
        return size;
    }

    @Override
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        switch (c.stage) {
            case 0:
                if (!c.fixed64Field(dest, 1, most)) {
                    return false;
                }
            case 1:
                if (!c.fixed64Field(dest, 2, least)) {
                    return false;
                }
            case 2:
                if (!c.int64Field(dest, 3, ackedBelow)) {
                    return false;
                }
            case 3:
                if (!c.int64Field(dest, 4, lastActiveMillis)) {
                    return false;
                }
            case 4:
                if (!c.repeatedMessageField(dest, 5, results)) {
                    return false;
                }
            default:
                return true;
        }
    }

    /** The recorded answer of one seq (message {@code KvSessionResult}). */
    static final class Result implements Encodable {
        final long seq;
        final KvResp resp;
        private final int size;

        Result(long seq, KvResp resp) {
            this.seq = seq;
            this.resp = resp;
            this.size = PbUtil.sizeOfInt64Field(1, seq) + PbUtil.sizeOfMessageField(2, resp);
        }

        @Override
        public int encodedSize() {
            return size;
        }

        @Override
        public boolean encode(EncodeContext c, ByteBuffer dest) {
            switch (c.stage) {
                case 0:
                    if (!c.int64Field(dest, 1, seq)) {
                        return false;
                    }
                case 1:
                    if (!c.messageField(dest, 2, resp)) {
                        return false;
                    }
                default:
                    return true;
            }
        }
    }

    static final class ResultDecoder extends PbCallback<Result> {
        private final KvResp.Decoder respDecoder = new KvResp.Decoder();
        private long seq;
        private KvResp resp;

        @Override
        protected int wireTypeOf(int field) {
            return field == 1 ? PbWireType.VARINT : field == 2 ? PbWireType.LEN : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            seq = 0;
            resp = new KvResp();
        }

        @Override
        protected void readVarint(int field, long v) {
            seq = v;
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            KvResp r = parseNested(piece, fieldLength, offsetInField, respDecoder);
            if (r != null) {
                resp = r;
            }
        }

        @Override
        protected Result end() {
            return new Result(seq, resp);
        }
    }

    static final class Decoder extends PbCallback<KvSessionRecord> {
        private final ResultDecoder resultDecoder = new ResultDecoder();
        private long most;
        private long least;
        private long ackedBelow;
        private long lastActive;
        private List<Result> results;

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 1:
                case 2:
                    return PbWireType.FIXED64;
                case 3:
                case 4:
                    return PbWireType.VARINT;
                case 5:
                    return PbWireType.LEN;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void begin(int messageLength) {
            most = 0;
            least = 0;
            ackedBelow = 0;
            lastActive = 0;
            results = new ArrayList<>();
        }

        @Override
        protected void readFixed64(int field, long v) {
            if (field == 1) {
                most = v;
            } else {
                least = v;
            }
        }

        @Override
        protected void readVarint(int field, long v) {
            if (field == 3) {
                ackedBelow = v;
            } else {
                lastActive = v;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            Result r = parseNested(piece, fieldLength, offsetInField, resultDecoder);
            if (r != null) {
                results.add(r);
            }
        }

        @Override
        protected KvSessionRecord end() {
            return new KvSessionRecord(most, least, ackedBelow, lastActive, results);
        }
    }
}
