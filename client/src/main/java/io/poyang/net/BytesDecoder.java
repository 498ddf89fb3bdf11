package io.poyang.net;

import io.poyang.codec.PbUtil;

import java.nio.ByteBuffer;

/** Copies a body's raw bytes into a new array (an absent body gives an empty array). */
public final class BytesDecoder extends RawBodyCallback<byte[]> {

    public static final DecoderFactory<byte[]> FACTORY = BytesDecoder::new;

    private static final byte[] EMPTY = new byte[0];

    private byte[] bytes;
    private int length;

    @Override
    public void beginBody(int length) {
        // grown as pieces arrive (see PbCallback.parseBytes): a declared length is not yet data
        this.length = length;
        bytes = length == 0 ? EMPTY : null;
    }

    @Override
    public void bodyPiece(ByteBuffer piece, int offset) {
        int n = piece.remaining();
        if (bytes == null || bytes.length < offset + n) {
            bytes = PbUtil.grow(bytes, offset, offset + n, length);
        }
        piece.get(bytes, offset, n);
    }

    @Override
    public byte[] endBody() {
        byte[] b = bytes == null ? EMPTY : bytes;
        bytes = null;
        return b;
    }
}
