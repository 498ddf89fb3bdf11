package io.poyang.codec;

import io.poyang.common.PoyangException;

/**
 * Malformed protobuf input (or a message over the size limit). Carries the byte offset within the
 * message where decoding failed; the decoder that threw is unusable until prepared again.
 */
public class CodecException extends PoyangException {

    private final long position;

    public CodecException(String reason) {
        super(reason);
        this.position = -1;
    }

    public CodecException(long position, String reason) {
        super("malformed protobuf at byte " + position + ": " + reason);
        this.position = position;
    }

    /** The byte offset within the message, or -1 when not tied to a position. */
    public long position() {
        return position;
    }
}
