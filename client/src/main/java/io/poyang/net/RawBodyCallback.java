package io.poyang.net;

import io.poyang.codec.PbCallback;
import io.poyang.codec.PbWireType;

import java.nio.ByteBuffer;

/**
 * A body decoder that takes the body's raw bytes instead of protobuf fields: for bodies that are
 * opaque to the net layer (echo) or that the receiver parses itself. The bytes arrive in place,
 * piece by piece, as they are read.
 */
public abstract class RawBodyCallback<T> extends PbCallback<T> {

    /** A body of {@code length} bytes starts (0 for an absent body). */
    public abstract void beginBody(int length);

    /**
     * The bytes between {@code piece.position()} and {@code piece.limit()}, following
     * {@code offset} bytes already delivered. Must not keep the buffer or change its limit.
     */
    public abstract void bodyPiece(ByteBuffer piece, int offset);

    /** The body is complete. */
    public abstract T endBody();

    @Override
    protected final int wireTypeOf(int field) {
        return PbWireType.UNKNOWN;
    }

    @Override
    protected final void begin(int messageLength) {
        beginBody(messageLength);
    }

    @Override
    protected final T end() {
        return endBody();
    }
}
