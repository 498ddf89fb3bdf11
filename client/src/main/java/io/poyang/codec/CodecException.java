package io.poyang.codec;

import io.poyang.common.ErrorCode;
import io.poyang.common.PoyangException;

/**
 * Malformed protobuf input (or a message over the size limit), with code {@link ErrorCode#CODEC}.
 * Carries the byte offset, within the outermost message, of the element that is malformed: the
 * tag for a bad field number or wire type, the value or length for a bad varint or length, the
 * start of an element cut off by the end of the message. The decoder that threw is unusable until
 * prepared again.
 */
public class CodecException extends PoyangException {

    private final long position;

    public CodecException(String reason) {
        super(ErrorCode.CODEC, reason);
        this.position = -1;
    }

    public CodecException(long position, String reason) {
        super(ErrorCode.CODEC, "malformed protobuf at byte " + position + ": " + reason);
        this.position = position;
    }

    /** The byte offset within the outermost message, or -1 when not tied to a position. */
    public long position() {
        return position;
    }
}
