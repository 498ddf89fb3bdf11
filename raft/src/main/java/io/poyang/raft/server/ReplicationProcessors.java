package io.poyang.raft.server;

import io.poyang.codec.PbCallback;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.ResponseCode;
import io.poyang.net.WritePacket;
import io.poyang.raft.client.FieldMessage;
import io.poyang.raft.client.RaftCommands;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.client.RaftStatusRequest;
import io.poyang.raft.client.RaftStatusResponse;
import io.poyang.raft.core.AppendEntriesBatch;
import io.poyang.raft.core.AppendEntriesRequest;
import io.poyang.raft.core.AppendEntriesResponse;
import io.poyang.raft.core.InstallSnapshotRequest;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.VoteRequest;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The processors of the replication port (and RAFT_STATUS on both ports). Each runs on the I/O
 * thread: the body is decoded there, in place, and handed to its group's fibers through a channel
 * ({@code RaftGroup.accept*}); the group answers later through the request's {@link ReqContext}.
 */
final class ReplicationProcessors {

    private ReplicationProcessors() {
    }

    static WritePacket noGroup(int nodeId, int groupId) {
        return WritePacket.error(ResponseCode.BAD_REQUEST, RaftCommands.DETAIL_NO_SUCH_GROUP, "node " + nodeId
                + " hosts no raft group " + groupId);
    }

    /** VOTE: pre-votes and votes. */
    static final class Vote implements ReqProcessor<VoteRequest> {
        private final GroupRegistry groups;
        private final int nodeId;

        Vote(GroupRegistry groups, int nodeId) {
            this.groups = groups;
            this.nodeId = nodeId;
        }

        @Override
        public PbCallback<VoteRequest> createDecoder() {
            return new VoteRequest.Decoder();
        }

        @Override
        public WritePacket process(ReqContext context, VoteRequest body) {
            RaftGroup g = groups.get(body.groupId());
            if (g == null) {
                return noGroup(nodeId, body.groupId());
            }
            g.acceptVote(context, body);
            return null;
        }
    }

    /** APPEND_ENTRIES: entries and heartbeats from a leader. */
    static final class Append implements ReqProcessor<AppendEntriesRequest> {
        private final GroupRegistry groups;
        private final int nodeId;

        Append(GroupRegistry groups, int nodeId) {
            this.groups = groups;
            this.nodeId = nodeId;
        }

        @Override
        public PbCallback<AppendEntriesRequest> createDecoder() {
            return new AppendEntriesRequest.Decoder();
        }

        @Override
        public WritePacket process(ReqContext context, AppendEntriesRequest body) {
            RaftGroup g = groups.get(body.groupId());
            if (g == null) {
                return noGroup(nodeId, body.groupId());
            }
            g.acceptAppend(context, body);
            return null;
        }
    }

    /**
     * APPEND_ENTRIES_BATCH: the appends of several groups from one leader node. Each part goes to its
     * group as an APPEND_ENTRIES of its own would ({@link ReqContext#part}); the batch is answered
     * once every part has been, each part's answer (or error) in its place.
     */
    static final class AppendBatch implements ReqProcessor<List<AppendEntriesRequest>> {
        private final GroupRegistry groups;
        private final int nodeId;

        AppendBatch(GroupRegistry groups, int nodeId) {
            this.groups = groups;
            this.nodeId = nodeId;
        }

        @Override
        public PbCallback<List<AppendEntriesRequest>> createDecoder() {
            return AppendEntriesBatch.REQUEST_DECODER.create();
        }

        @Override
        public WritePacket process(ReqContext context, List<AppendEntriesRequest> parts) {
            int n = parts.size();
            if (n == 0) {
                return WritePacket.response(new AppendEntriesBatch.Parts<>(Collections.emptyList()));
            }
            PartAnswers answers = new PartAnswers(context, n);
            for (int i = 0; i < n; i++) {
                AppendEntriesRequest req = parts.get(i);
                ReqContext part = ReqContext.part(context, i, answers);
                RaftGroup g = groups.get(req.groupId());
                if (g == null) {
                    part.respond(noGroup(nodeId, req.groupId()));
                } else {
                    g.acceptAppend(part, req);
                }
            }
            return null;
        }
    }

    /** The answers to a batch's parts; the last part answered sends the batch's answer. Any thread. */
    private static final class PartAnswers implements ReqContext.PartAnswers {
        private final ReqContext batch;
        private final AppendEntriesBatch.PartAnswer[] answers;
        /** Parts not answered yet; its decrement publishes each answer to the thread that sends them all. */
        private final AtomicInteger unanswered;

        PartAnswers(ReqContext batch, int parts) {
            this.batch = batch;
            this.answers = new AppendEntriesBatch.PartAnswer[parts];
            this.unanswered = new AtomicInteger(parts);
        }

        @Override
        public void answered(int index, WritePacket answer) {
            Object body = answer.body();
            if (answer.responseCode() != ResponseCode.SUCCESS) {
                answers[index] = new AppendEntriesBatch.PartAnswer(answer.responseCode(), answer.bizCode(),
                        answer.message(), null);
            } else if (body instanceof AppendEntriesResponse) {
                answers[index] = new AppendEntriesBatch.PartAnswer(ResponseCode.SUCCESS, 0, null,
                        (AppendEntriesResponse) body);
            } else {
                answers[index] = new AppendEntriesBatch.PartAnswer(ResponseCode.SYS_ERROR, 0,
                        "part " + index + " of a batch was answered without an AppendEntriesResponse: " + body, null);
            }
            if (unanswered.decrementAndGet() == 0) {
                batch.respond(WritePacket.response(new AppendEntriesBatch.Parts<>(Arrays.asList(answers))));
            }
        }
    }

    /** INSTALL_SNAPSHOT: snapshot chunks from a leader. */
    static final class InstallSnapshot implements ReqProcessor<InstallSnapshotRequest> {
        private final GroupRegistry groups;
        private final int nodeId;

        InstallSnapshot(GroupRegistry groups, int nodeId) {
            this.groups = groups;
            this.nodeId = nodeId;
        }

        @Override
        public PbCallback<InstallSnapshotRequest> createDecoder() {
            return new InstallSnapshotRequest.Decoder();
        }

        @Override
        public WritePacket process(ReqContext context, InstallSnapshotRequest body) {
            RaftGroup g = groups.get(body.groupId());
            if (g == null) {
                return noGroup(nodeId, body.groupId());
            }
            g.acceptInstallSnapshot(context, body);
            return null;
        }
    }

    /** READ_INDEX: a follower of a group asks this node, its leader, for a confirmed read index. */
    static final class ReadIndex implements ReqProcessor<FieldMessage> {
        private final GroupRegistry groups;
        private final int nodeId;

        ReadIndex(GroupRegistry groups, int nodeId) {
            this.groups = groups;
            this.nodeId = nodeId;
        }

        @Override
        public PbCallback<FieldMessage> createDecoder() {
            return RaftGroup.READ_INDEX_REQUEST.create();
        }

        @Override
        public WritePacket process(ReqContext context, FieldMessage body) {
            RaftGroup g = groups.get(body.getInt(1));
            if (g == null) {
                return noGroup(nodeId, body.getInt(1));
            }
            g.acceptReadIndex(context, body.getInt(2));
            return null;
        }
    }

    /** TIMEOUT_NOW: this node's leader of a group hands the leadership over to it. */
    static final class TimeoutNow implements ReqProcessor<FieldMessage> {
        private final GroupRegistry groups;
        private final int nodeId;

        TimeoutNow(GroupRegistry groups, int nodeId) {
            this.groups = groups;
            this.nodeId = nodeId;
        }

        @Override
        public PbCallback<FieldMessage> createDecoder() {
            return RaftGroup.TIMEOUT_NOW_REQUEST.create();
        }

        @Override
        public WritePacket process(ReqContext context, FieldMessage body) {
            RaftGroup g = groups.get(body.getInt(1));
            if (g == null) {
                return noGroup(nodeId, body.getInt(1));
            }
            g.acceptTimeoutNow(context, body);
            return null;
        }
    }

    /** RAFT_STATUS: where a group stands on this node (how clients find the leader). */
    static final class Status implements ReqProcessor<RaftStatusRequest> {
        private final GroupRegistry groups;
        private final int nodeId;

        Status(GroupRegistry groups, int nodeId) {
            this.groups = groups;
            this.nodeId = nodeId;
        }

        @Override
        public PbCallback<RaftStatusRequest> createDecoder() {
            return new RaftStatusRequest.Decoder();
        }

        @Override
        public WritePacket process(ReqContext context, RaftStatusRequest body) {
            RaftGroup g = groups.get(body.groupId());
            if (g == null) {
                return WritePacket.response(new RaftStatusResponse(body.groupId(), nodeId, 0, 0, RaftRole.NONE, 0, 0, 0,
                        new int[0]));
            }
            return WritePacket.response(g.status());
        }
    }
}
