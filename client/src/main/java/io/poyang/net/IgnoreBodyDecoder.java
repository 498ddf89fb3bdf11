package io.poyang.net;

import java.nio.ByteBuffer;

/** Skips the body and yields null: for commands whose response carries nothing of interest (ping). */
public final class IgnoreBodyDecoder extends RawBodyCallback<Object> {

    private static final IgnoreBodyDecoder INSTANCE = new IgnoreBodyDecoder();

    /** The decoder holds no state, so one instance serves every body. */
    private static final DecoderFactory<Object> FACTORY = () -> INSTANCE;

    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <T> DecoderFactory<T> factory() {
        return (DecoderFactory) FACTORY;
    }

    @Override
    public void beginBody(int length) {
    }

    @Override
    public void bodyPiece(ByteBuffer piece, int offset) {
        piece.position(piece.limit());
    }

    @Override
    public Object endBody() {
        return null;
    }
}
