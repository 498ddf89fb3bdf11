package io.poyang.raft.server;

import io.poyang.codec.CodecException;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbParser;
import io.poyang.codec.PbWireType;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.ResponseCode;
import io.poyang.net.WritePacket;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.store.ByteBody;

import java.nio.ByteBuffer;

/**
 * RAFT_WRITE on the service port. The request (RaftWriteRequest) is decoded on the I/O thread and
 * its body with the state machine's own decoder, in place, as it arrives: the decoded object
 * becomes the log entry's body on the leader without being copied or decoded again. The write then
 * goes to its group ({@link RaftGroup#acceptWrite}), which answers it once applied.
 */
final class WriteProcessor implements ReqProcessor<WriteProcessor.Decoder> {

    private final GroupRegistry groups;
    private final int nodeId;

    WriteProcessor(GroupRegistry groups, int nodeId) {
        this.groups = groups;
        this.nodeId = nodeId;
    }

    @Override
    public PbCallback<Decoder> createDecoder() {
        return new Decoder(groups);
    }

    @Override
    public WritePacket process(ReqContext context, Decoder w) {
        RaftGroup g = w.group != null ? w.group : groups.get(w.groupId);
        if (g == null) {
            return ReplicationProcessors.noGroup(nodeId, w.groupId);
        }
        Encodable body = w.body;
        if (body instanceof ByteBody && w.decodeLater) {
            // The body came before the group or type it belongs to (fields out of order): decode it now.
            try {
                PbCallback<? extends Encodable> d = g.newBodyDecoder(w.bizType);
                if (d != null) {
                    ByteBody raw = (ByteBody) body;
                    body = PbParser.parse(ByteBuffer.wrap(raw.array(), raw.offset(), raw.length()), d);
                }
            } catch (RuntimeException e) {
                // nothing was applied: a bad request, not an error of unknown outcome (SYS_ERROR)
                return WritePacket.error(ResponseCode.BAD_REQUEST, "the body of a write of biz type " + w.bizType
                        + " to raft group " + w.groupId + " does not decode: " + e.getMessage());
            }
        }
        g.acceptWrite(context, w.bizType, body, w.bodyBytes, w.sessionId, w.sessionSeq);
        return null;
    }

    /** Decodes one RaftWriteRequest; the decoder itself is the decoded value (one object per request). */
    static final class Decoder extends PbCallback<Decoder> {
        private final GroupRegistry groups;
        int groupId;
        int bizType;
        Encodable body;
        int bodyBytes;
        long sessionId;
        long sessionSeq;
        RaftGroup group;
        boolean decodeLater;
        private PbCallback<? extends Encodable> bodyDecoder;
        private boolean bodyDecoderChosen;
        /** The group_id and biz_type the body's decoder was chosen by (they may change after the body). */
        private int chosenGroupId;
        private int chosenBizType;

        Decoder(GroupRegistry groups) {
            this.groups = groups;
        }

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 1:
                case 2:
                case 4:
                case 5:
                    return PbWireType.VARINT;
                case 3:
                    return PbWireType.LEN;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void readVarint(int field, long value) {
            if (field == 1) {
                groupId = (int) value;
            } else if (field == 2) {
                bizType = (int) value;
            } else if (field == 4) {
                sessionId = value;
            } else if (field == 5) {
                sessionSeq = value;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            if (offsetInField == 0) {
                bodyBytes = fieldLength;
                chooseBodyDecoder();
            }
            if (bodyDecoder != null) {
                Encodable b = parseNested(piece, fieldLength, offsetInField, bodyDecoder);
                if (b != null) {
                    body = b;
                }
            } else {
                byte[] b = parseBytes(piece, fieldLength, offsetInField);
                if (b != null) {
                    body = new ByteBody(b);
                }
            }
        }

        private void chooseBodyDecoder() {
            if (bodyDecoderChosen) {
                return;
            }
            bodyDecoderChosen = true;
            chosenGroupId = groupId;
            chosenBizType = bizType;
            group = groups.get(groupId);
            if (group == null) {
                decodeLater = true;   // maybe group_id comes after the body
                return;
            }
            bodyDecoder = group.newBodyDecoder(bizType);
        }

        @Override
        protected Decoder end() {
            if (bodyDecoderChosen && (groupId != chosenGroupId || bizType != chosenBizType)) {
                // group_id or biz_type came after the body (fields out of order; protoc's encoders
                // never do this). A body kept raw is decoded now by the final values; one already
                // decoded by the state machine for other values cannot be, and is refused.
                if (bodyDecoder != null) {
                    throw new CodecException("RaftWriteRequest: group_id " + groupId + " / biz_type " + bizType
                            + " came after a body already decoded as group " + chosenGroupId + " / biz_type "
                            + chosenBizType + "; send group_id (1) and biz_type (2) before body (3)");
                }
                group = null;
                decodeLater = true;
            }
            return this;
        }
    }
}
