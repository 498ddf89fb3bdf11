package io.poyang.dtkv.server;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** A lock in a snapshot (messages {@code KvLockRecord} and {@code KvLockWaiter}). Immutable. */
final class KvLockRecord implements Encodable {

    final String key;
    private final byte[] keyUtf8;
    final long holderMost;
    final long holderLeast;
    final long fencingToken;
    final long leaseMillis;
    final long leaseExpireAtMillis;
    final List<Waiter> waiters;
    private final int size;

    KvLockRecord(String key, long holderMost, long holderLeast, long fencingToken, long leaseMillis,
                 long leaseExpireAtMillis, List<Waiter> waiters) {
        this.key = key;
        this.keyUtf8 = key.getBytes(StandardCharsets.UTF_8);
        this.holderMost = holderMost;
        this.holderLeast = holderLeast;
        this.fencingToken = fencingToken;
        this.leaseMillis = leaseMillis;
        this.leaseExpireAtMillis = leaseExpireAtMillis;
        this.waiters = waiters;
        this.size = PbUtil.sizeOfBytesField(1, keyUtf8) + PbUtil.sizeOfFixed64Field(2, holderMost)
                + PbUtil.sizeOfFixed64Field(3, holderLeast) + PbUtil.sizeOfInt64Field(4, fencingToken)
                + PbUtil.sizeOfInt64Field(5, leaseMillis) + PbUtil.sizeOfInt64Field(6, leaseExpireAtMillis)
                + PbUtil.sizeOfRepeatedMessageField(7, waiters);
    }

    static KvLockRecord of(KvLock lock) {
        List<Waiter> ws = new ArrayList<>(lock.waiters.size());
        for (KvLock.LockWaiter w : lock.waiters) {
            ws.add(new Waiter(w.most, w.least, w.leaseMillis, w.waitUntilMillis));
        }
        return new KvLockRecord(lock.key, lock.holderMost, lock.holderLeast, lock.fencingToken, lock.leaseMillis,
                lock.leaseExpireAtMillis, ws);
    }

    KvLock toLock() {
        KvLock lock = new KvLock(key);
        // lock operations need a client id, so a holder is never (0, 0); a released lock keeps its old token
        lock.held = holderMost != 0 || holderLeast != 0;
        lock.holderMost = holderMost;
        lock.holderLeast = holderLeast;
        lock.fencingToken = fencingToken;
        lock.leaseMillis = leaseMillis;
        lock.leaseExpireAtMillis = leaseExpireAtMillis;
        for (Waiter w : waiters) {
            lock.waiters.addLast(new KvLock.LockWaiter(w.most, w.least, w.leaseMillis, w.waitUntilMillis));
        }
        return lock;
    }

    @Override
    public int encodedSize() {
        return size;
    }

    @Override
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        switch (c.stage) {
            case 0:
                if (!c.bytesField(dest, 1, keyUtf8)) {
                    return false;
                }
            case 1:
                if (!c.fixed64Field(dest, 2, holderMost)) {
                    return false;
                }
            case 2:
                if (!c.fixed64Field(dest, 3, holderLeast)) {
                    return false;
                }
            case 3:
                if (!c.int64Field(dest, 4, fencingToken)) {
                    return false;
                }
            case 4:
                if (!c.int64Field(dest, 5, leaseMillis)) {
                    return false;
                }
            case 5:
                if (!c.int64Field(dest, 6, leaseExpireAtMillis)) {
                    return false;
                }
            case 6:
                if (!c.repeatedMessageField(dest, 7, waiters)) {
                    return false;
                }
            default:
                return true;
        }
    }

    /** A waiting client (message {@code KvLockWaiter}). */
    static final class Waiter implements Encodable {
        final long most;
        final long least;
        final long leaseMillis;
        final long waitUntilMillis;
        private final int size;

        Waiter(long most, long least, long leaseMillis, long waitUntilMillis) {
            this.most = most;
            this.least = least;
            this.leaseMillis = leaseMillis;
            this.waitUntilMillis = waitUntilMillis;
            this.size = PbUtil.sizeOfFixed64Field(1, most) + PbUtil.sizeOfFixed64Field(2, least)
                    + PbUtil.sizeOfInt64Field(3, leaseMillis) + PbUtil.sizeOfInt64Field(4, waitUntilMillis);
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
                    if (!c.int64Field(dest, 3, leaseMillis)) {
                        return false;
                    }
                case 3:
                    if (!c.int64Field(dest, 4, waitUntilMillis)) {
                        return false;
                    }
                default:
                    return true;
            }
        }
    }

    static final class WaiterDecoder extends PbCallback<Waiter> {
        private long most;
        private long least;
        private long lease;
        private long waitUntil;

        @Override
        protected int wireTypeOf(int field) {
            return field == 1 || field == 2 ? PbWireType.FIXED64
                    : field == 3 || field == 4 ? PbWireType.VARINT : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            most = 0;
            least = 0;
            lease = 0;
            waitUntil = 0;
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
                lease = v;
            } else {
                waitUntil = v;
            }
        }

        @Override
        protected Waiter end() {
            return new Waiter(most, least, lease, waitUntil);
        }
    }

    static final class Decoder extends PbCallback<KvLockRecord> {
        private final WaiterDecoder waiterDecoder = new WaiterDecoder();
        private String key;
        private long most;
        private long least;
        private long token;
        private long lease;
        private long expireAt;
        private List<Waiter> waiters;

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 1:
                case 7:
                    return PbWireType.LEN;
                case 2:
                case 3:
                    return PbWireType.FIXED64;
                case 4:
                case 5:
                case 6:
                    return PbWireType.VARINT;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void begin(int messageLength) {
            key = "";
            most = 0;
            least = 0;
            token = 0;
            lease = 0;
            expireAt = 0;
            waiters = new ArrayList<>();
        }

        @Override
        protected void readFixed64(int field, long v) {
            if (field == 2) {
                most = v;
            } else {
                least = v;
            }
        }

        @Override
        protected void readVarint(int field, long v) {
            if (field == 4) {
                token = v;
            } else if (field == 5) {
                lease = v;
            } else {
                expireAt = v;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            if (field == 1) {
                String s = parseString(piece, fieldLength, offsetInField);
                if (s != null) {
                    key = s;
                }
            } else {
                Waiter w = parseNested(piece, fieldLength, offsetInField, waiterDecoder);
                if (w != null) {
                    waiters.add(w);
                }
            }
        }

        @Override
        protected KvLockRecord end() {
            return new KvLockRecord(key, most, least, token, lease, expireAt, waiters);
        }
    }
}
