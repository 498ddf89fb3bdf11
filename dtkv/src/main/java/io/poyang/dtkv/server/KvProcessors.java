package io.poyang.dtkv.server;

import io.poyang.codec.PbCallback;
import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvKeys;
import io.poyang.dtkv.KvOp;
import io.poyang.dtkv.KvReadKind;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvWatchReq;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.ResponseCode;
import io.poyang.net.WritePacket;
import io.poyang.raft.client.RaftCommands;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.ReadKind;

/**
 * The DtKV commands on the service port. All run on the service I/O thread and only route: a write
 * goes into raft's write path as it is (the decoded {@link KvReq} becomes the log entry's body on the
 * leader, so it is never decoded again), reads and watch registrations go to the group's state
 * machine, which serves them on its dispatcher.
 */
final class KvProcessors {

    /** DtKV's read kinds as raft's, by ordinal (the wire numbers are raft's codes). */
    private static final ReadKind[] READ_KINDS = new ReadKind[KvReadKind.values().length];

    static {
        for (KvReadKind k : KvReadKind.values()) {
            ReadKind r = ReadKind.of(k.number());
            if (!r.name().equals(k.name())) {
                throw new IllegalStateException("DtKV's read kind " + k + " (" + k.number() + ") is raft's " + r);
            }
            READ_KINDS[k.ordinal()] = r;
        }
    }

    private KvProcessors() {
    }

    static WritePacket noGroup(DtKvService service, int groupId) {
        return WritePacket.error(ResponseCode.BAD_REQUEST, RaftCommands.DETAIL_NO_SUCH_GROUP, "node " + service.nodeId()
                + " hosts no DtKV group "
                + (groupId == 0 ? "(the request named none and the node has none)" : groupId)
                + "; check the client's group id");
    }

    /** KV_WRITE: KvReq → raft → KvResp. */
    static final class Write implements ReqProcessor<KvReq> {
        private final DtKvService service;

        Write(DtKvService service) {
            this.service = service;
        }

        @Override
        public PbCallback<KvReq> createDecoder() {
            return new KvReq.Decoder();
        }

        @Override
        public WritePacket process(ReqContext context, KvReq req) {
            RaftGroup g = service.group(req.groupId());
            if (g == null) {
                return noGroup(service, req.groupId());
            }
            KvOp op = req.op();
            if (op == null || !op.isWrite()) {
                return WritePacket.bizError(KvCode.INVALID_REQUEST.number(), "KV_WRITE carries writes only; op "
                        + (op == null ? "#" + req.opNumber() : op) + " is not one (reads go as KV_READ)");
            }
            if (op == KvOp.EXPIRE || op == KvOp.EXPIRE_LOCK) {
                // The leader proposes these itself once a deadline has passed by its clock plus the
                // offset of its term; from a client they would end another client's temp node or lock
                // early (the log clock jumps forward at a leader change).
                return WritePacket.bizError(KvCode.INVALID_REQUEST.number(), "op " + op
                        + " is proposed by the leader only, when a TTL or lease runs out; clients cannot send it");
            }
            if ((op == KvOp.BATCH_PUT || op == KvOp.BATCH_REMOVE) && req.keys().isEmpty()) {
                // applied, it would change nothing, yet cost a replicated and fsynced entry; KvClient refuses
                // it before sending, this is for clients that do not
                return WritePacket.bizError(KvCode.INVALID_REQUEST.number(), op + " with no keys is refused:"
                        + " a batch needs at least one key (nothing was written)");
            }
            WritePacket tooLarge = checkValues(req);
            if (tooLarge != null) {
                return tooLarge;
            }
            int bytes = req.encodedSize();
            KvCode size = KvKeys.checkRequestSize(op, bytes);
            if (size != KvCode.SUCCESS) {
                // raft would refuse it too (an entry must fit one frame between the nodes), but as
                // FLOW_CONTROL, which says "later" to a request that never fits
                return WritePacket.bizError(size.number(), KvKeys.explainRequestSize(op, bytes));
            }
            // No raft session (raft's SessionTable): a DtKV write carries its exactly-once session in the
            // KvReq (client id, seq, acked_below) and the store's ClientSessions check it when it is
            // applied. One mechanism per write; dtkv/README.md, "Sessions", says why it is this one.
            if (req.seq() != 0) {
                // the store applies a repeat of (client, seq) at most once, so if the leader stops leading
                // before the write commits it answers at once, and the client sends it to the new leader
                g.acceptDeduplicatedWrite(context, KvCommands.KV_BIZ_TYPE, req, req.encodedSize());
            } else {
                g.acceptWrite(context, KvCommands.KV_BIZ_TYPE, req, req.encodedSize());
            }
            return null;
        }
    }

    /**
     * Values over the limit are refused before they reach the log: the state machine would refuse
     * them too, but only after an entry of that size was written and replicated.
     */
    static WritePacket checkValues(KvReq req) {
        int pos = 0;
        if (req.value() != null && KvKeys.checkValue(req.value()) != KvCode.SUCCESS) {
            return WritePacket.bizError(KvCode.VALUE_TOO_LARGE.number(), KvKeys.explain(KvCode.VALUE_TOO_LARGE,
                    req.key()));
        }
        if (req.values() != null) {
            for (byte[] v : req.values()) {
                pos++;
                if (v != null && KvKeys.checkValue(v) != KvCode.SUCCESS) {
                    return WritePacket.bizError(KvCode.VALUE_TOO_LARGE.number(), "value " + pos + " of the batch is over"
                            + " the limit of " + KvKeys.MAX_VALUE_BYTES + " bytes [position " + pos + "]");
                }
            }
        }
        return null;
    }

    /**
     * KV_READ: GET, BATCH_GET, LIST through raft's read path, with the read kind the request asks
     * for (lease read by default).
     */
    static final class Read implements ReqProcessor<KvReq> {
        private final DtKvService service;

        Read(DtKvService service) {
            this.service = service;
        }

        @Override
        public PbCallback<KvReq> createDecoder() {
            return new KvReq.Decoder();
        }

        @Override
        public WritePacket process(ReqContext context, KvReq req) {
            RaftGroup g = service.group(req.groupId());
            DtKvStateMachine sm = service.machine(g);
            if (sm == null) {
                return noGroup(service, req.groupId());
            }
            KvOp op = req.op();
            if (op != KvOp.GET && op != KvOp.BATCH_GET && op != KvOp.LIST) {
                return WritePacket.bizError(KvCode.INVALID_REQUEST.number(), "KV_READ serves GET, BATCH_GET and LIST;"
                        + " op " + (op == null ? "#" + req.opNumber() : op) + " is not one");
            }
            if (op == KvOp.BATCH_GET && req.keys().isEmpty()) {
                // it would answer nothing, yet cost a trip through the read path (a lease check, or a
                // heartbeat round for READ_INDEX); KvClient refuses it before sending, this is for
                // clients that do not, as KV_WRITE refuses an empty BATCH_PUT or BATCH_REMOVE
                return WritePacket.bizError(KvCode.INVALID_REQUEST.number(), op + " with no keys is refused:"
                        + " a batch needs at least one key (nothing was read)");
            }
            KvReadKind kind = KvReadKind.of(req.readKindNumber());
            if (kind == null) {
                return WritePacket.bizError(KvCode.INVALID_REQUEST.number(), "read_kind " + req.readKindNumber()
                        + " is not one this node knows (0 LEASE_READ, 1 READ_INDEX, 2 FOLLOWER_READ)");
            }
            sm.read(context, g, req, READ_KINDS[kind.ordinal()]);
            return null;
        }
    }

    /** KV_WATCH: registers watches of the connection with the group's watch manager. */
    static final class Watch implements ReqProcessor<KvWatchReq> {
        private final DtKvService service;

        Watch(DtKvService service) {
            this.service = service;
        }

        @Override
        public PbCallback<KvWatchReq> createDecoder() {
            return new KvWatchReq.Decoder();
        }

        @Override
        public WritePacket process(ReqContext context, KvWatchReq req) {
            RaftGroup g = service.group(req.groupId());
            DtKvStateMachine sm = service.machine(g);
            if (sm == null) {
                return noGroup(service, req.groupId());
            }
            DtKvService.ClientConnection c = service.connection(context.connection());
            if (c == null) {
                return WritePacket.error(ResponseCode.STOPPING, "the connection is closing");
            }
            sm.watch(context, c, req);
            return null;
        }
    }
}
