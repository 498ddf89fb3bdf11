package io.poyang.net;

import java.nio.ByteBuffer;

/** Copies a body's raw bytes into a new array (an absent body gives an empty array). */
public final class BytesDecoder extends RawBodyCallback<byte[]> {

    public static final DecoderFactory<byte[]> FACTORY = BytesDecoder::new;

    private static final byte[] EMPTY = new byte[0];

    private byte[] bytes;

    @Override
    public void beginBody(int length) {
        bytes = length == 0 ? EMPTY : new byte[length];
    }

    @Override
    public void bodyPiece(ByteBuffer piece, int offset) {
        int n = piece.remaining();
        piece.get(bytes, offset, n);
    }

    @Override
    public byte[] endBody() {
        byte[] b = bytes;
        bytes = null;
        return b;
    }
}
