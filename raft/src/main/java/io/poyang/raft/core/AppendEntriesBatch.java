package io.poyang.raft.core;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;
import io.poyang.net.DecoderFactory;
import io.poyang.net.ResponseCode;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * APPEND_ENTRIES_BATCH: the AppendEntries requests that the groups of one dispatcher round send to
 * the same node, in one frame, and their answers in one frame (messages AppendEntriesBatch and
 * AppendEntriesBatchAnswer of docs/proto/raft.proto). With several groups on a node, each round of
 * its dispatcher would otherwise send one request per group to each peer, and each peer would
 * answer each one: the per-message costs (framing, the pending-request map, a callback, an answer)
 * grow with the groups while the work per entry does not. A batch answers once every part has
 * been answered (each after its own fsync, usually in the same round of the follower's dispatcher).
 */
public final class AppendEntriesBatch {

    private AppendEntriesBatch() {
    }

    /**
     * The request (its parts, each an AppendEntriesRequest) and the answer (a {@link PartAnswer}
     * per part, in the parts' order): both are repeated field 1.
     */
    public static final class Parts<M extends Encodable> implements Encodable {
        private final List<M> parts;
        private int size = -1;

        public Parts(List<M> parts) {
            this.parts = parts;
        }

        public List<M> parts() {
            return parts;
        }

        @Override
        public int encodedSize() {
            if (size < 0) {
                size = PbUtil.sizeOfRepeatedMessageField(1, parts);
            }
            return size;
        }

        @Override
        public boolean encode(EncodeContext c, ByteBuffer dest) {
            return c.stage != 0 || c.repeatedMessageField(dest, 1, parts);
        }
    }

    /** The answer to one part: a response, or the error the part's request would have been answered with. */
    public static final class PartAnswer implements Encodable {
        /** A {@link ResponseCode}; SUCCESS with {@link #response}. */
        public final int code;
        /** The error's detail (raft's leader hint, ...), as a response packet's field 5. */
        public final int bizCode;
        /** The error's message, or null. */
        public final String message;
        /** The part's answer when {@link #code} is SUCCESS, else null. */
        public final AppendEntriesResponse response;
        private final byte[] messageBytes;
        private int size = -1;

        public PartAnswer(int code, int bizCode, String message, AppendEntriesResponse response) {
            this.code = code;
            this.bizCode = bizCode;
            this.message = message;
            this.response = response;
            this.messageBytes = message == null || message.isEmpty() ? null : PbUtil.utf8(message);
        }

        @Override
        public int encodedSize() {
            if (size < 0) {
                size = PbUtil.sizeOfUInt32Field(1, code) + PbUtil.sizeOfInt32Field(2, bizCode)
                        + PbUtil.sizeOfBytesField(3, messageBytes) + PbUtil.sizeOfMessageField(4, response);
            }
            return size;
        }

        @Override
        @SuppressWarnings("fallthrough")
        public boolean encode(EncodeContext c, ByteBuffer dest) {
            switch (c.stage) {
                case 0:
                    if (!c.uint32Field(dest, 1, code)) {
                        return false;
                    }
                    // fall through
                case 1:
                    if (!c.int32Field(dest, 2, bizCode)) {
                        return false;
                    }
                    // fall through
                case 2:
                    if (!c.bytesField(dest, 3, messageBytes)) {
                        return false;
                    }
                    // fall through
                case 3:
                    if (!c.messageField(dest, 4, response)) {
                        return false;
                    }
                    // fall through
                default:
                    return true;
            }
        }
    }

    /** Decodes a batch into its parts, each as {@link AppendEntriesRequest.Decoder} reads it. */
    public static final DecoderFactory<List<AppendEntriesRequest>> REQUEST_DECODER =
            () -> new RepeatedDecoder<>(AppendEntriesRequest.Decoder::new);

    /** Decodes a batch's answer into its part answers. */
    public static final DecoderFactory<List<PartAnswer>> ANSWER_DECODER =
            () -> new RepeatedDecoder<>(PartAnswerDecoder::new);

    /** Reads repeated field 1, each element with a fresh decoder from {@code parts}. */
    private static final class RepeatedDecoder<X> extends PbCallback<List<X>> {
        private final DecoderFactory<X> parts;
        private List<X> decoded;
        private PbCallback<X> current;

        RepeatedDecoder(DecoderFactory<X> parts) {
            this.parts = parts;
        }

        @Override
        protected int wireTypeOf(int field) {
            return field == 1 ? PbWireType.LEN : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            decoded = new ArrayList<>(4);
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            if (offsetInField == 0) {
                // a fresh decoder per element: an AppendEntriesRequest keeps what its decoder read
                current = parts.create();
            }
            X x = parseNested(piece, fieldLength, offsetInField, current);
            if (x != null) {
                decoded.add(x);
            }
        }

        @Override
        protected List<X> end() {
            List<X> l = decoded;
            decoded = null;
            current = null;
            return l;
        }
    }

    private static final class PartAnswerDecoder extends PbCallback<PartAnswer> {
        private int code;
        private int bizCode;
        private String message;
        private AppendEntriesResponse response;
        private final AppendEntriesResponse.Decoder responseDecoder = new AppendEntriesResponse.Decoder();

        @Override
        protected int wireTypeOf(int field) {
            if (field == 1 || field == 2) {
                return PbWireType.VARINT;
            }
            return field == 3 || field == 4 ? PbWireType.LEN : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            code = ResponseCode.SUCCESS;
            bizCode = 0;
            message = null;
            response = null;
        }

        @Override
        protected void readVarint(int field, long value) {
            if (field == 1) {
                code = (int) value;
            } else {
                bizCode = (int) value;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            if (field == 3) {
                String s = parseString(piece, fieldLength, offsetInField);
                if (s != null) {
                    message = s;
                }
            } else {
                AppendEntriesResponse r = parseNested(piece, fieldLength, offsetInField, responseDecoder);
                if (r != null) {
                    response = r;
                }
            }
        }

        @Override
        protected PartAnswer end() {
            return new PartAnswer(code, bizCode, message, response);
        }
    }
}
