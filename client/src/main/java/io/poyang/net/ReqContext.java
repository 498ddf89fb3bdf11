package io.poyang.net;

/**
 * One incoming request or one-way message being processed: who sent it, its deadline, and the way
 * to answer. {@link #respond} may be called from any thread, once; the response then goes out
 * through the connection's I/O worker. A processor that hands the request to another stage (a
 * raft group, say) keeps this object and answers when the work is done.
 */
public final class ReqContext {

    /**
     * Collects the answers to the parts of a request that carries several requests (see
     * {@link #part}). Called once per part, from whichever thread answers it.
     */
    public interface PartAnswers {
        /** Part {@code index} was answered with {@code answer} (a response packet, maybe an error). */
        void answered(int index, WritePacket answer);
    }

    final NioWorker worker;
    final NioConnection connection;
    final int type;
    final int command;
    final int seq;
    final long deadlineNanos;
    final int frameBytes;
    final byte[] extra;
    /** Set by the worker when the response (or the end of a one-way message) was seen. */
    boolean finished;
    /** {@link #isExpired()} said so and ended the request: a response sent afterwards is dropped quietly. */
    volatile boolean expiredDropped;

    ReqContext(NioWorker worker, NioConnection connection, int type, int command, int seq, long deadlineNanos,
               int frameBytes, byte[] extra) {
        this.worker = worker;
        this.connection = connection;
        this.type = type;
        this.command = command;
        this.seq = seq;
        this.deadlineNanos = deadlineNanos;
        this.frameBytes = frameBytes;
        this.extra = extra;
        this.partAnswers = null;
        this.partIndex = -1;
        this.partDone = null;
    }

    /** Set on the parts of a batched request only: where each part's answer goes instead of the wire. */
    private final PartAnswers partAnswers;
    private final int partIndex;
    /** A part was answered (or dropped as expired): a second answer is ignored. Parts only. */
    private final java.util.concurrent.atomic.AtomicBoolean partDone;

    private ReqContext(ReqContext batch, int partIndex, PartAnswers partAnswers) {
        this.worker = batch.worker;
        this.connection = batch.connection;
        this.type = batch.type;
        this.command = batch.command;
        this.seq = batch.seq;
        this.deadlineNanos = batch.deadlineNanos;
        this.frameBytes = 0;   // the batch's frame is what the worker's in-flight limit counts
        this.extra = batch.extra;
        this.partIndex = partIndex;
        this.partAnswers = partAnswers;
        this.partDone = new java.util.concurrent.atomic.AtomicBoolean();
    }

    /**
     * A part of {@code batch}, a request that carries several requests (raft's AppendEntries of
     * several groups to one node, say): handed to whatever processes that part as if it were a
     * request of its own. Its answer goes to {@code answers} (with {@code index}) instead of the
     * wire; the batch's processor answers the batch once every part has been. A part shares the
     * batch's deadline and connection. A part that expires ({@link #isExpired()}) or is ended
     * without an answer is answered {@link ResponseCode#TIMEOUT}, so the batch is never left
     * waiting for it. Each part is answered once; later answers are ignored.
     */
    public static ReqContext part(ReqContext batch, int index, PartAnswers answers) {
        if (batch.partAnswers != null) {
            throw new IllegalArgumentException("a part of a batch cannot carry parts itself: " + batch);
        }
        return new ReqContext(batch, index, answers);
    }

    public int command() {
        return command;
    }

    public int seq() {
        return seq;
    }

    public boolean isOneWay() {
        return type == PacketType.ONE_WAY;
    }

    /** Field 8 of the request, or null. */
    public byte[] extra() {
        return extra;
    }

    /** The connection the request came on; server pushes to this client go through it. */
    public NioConnection connection() {
        return connection;
    }

    /** The caller's deadline on System.nanoTime's scale (Long.MAX_VALUE when it sent none). */
    public long deadlineNanos() {
        return deadlineNanos;
    }

    /**
     * True when the caller has given up; such work should be dropped, not done. The request is then
     * over, so a processor may simply return: its room in the worker's in-flight limit is freed here
     * (a processor outside this package has no other way to end a request without answering, and
     * each one left open would count against the limit until the server stops), and a response
     * sent for it afterwards is dropped.
     */
    public boolean isExpired() {
        if (deadlineNanos == Long.MAX_VALUE || System.nanoTime() - deadlineNanos < 0) {
            return false;
        }
        if (partAnswers != null) {
            answerPart(WritePacket.error(ResponseCode.TIMEOUT, "the request's deadline passed before it was processed"));
            return true;
        }
        if (!expiredDropped) {
            expiredDropped = true;
            finishWithoutResponse();
        }
        return true;
    }

    /** Sends the response; any thread, once per request. Ignored for one-way messages. */
    public void respond(WritePacket response) {
        if (response.type != PacketType.RESPONSE) {
            throw new IllegalArgumentException("respond needs a response packet, got " + response);
        }
        if (partAnswers != null) {
            answerPart(response);
            return;
        }
        response.command = command;
        response.seq = seq;
        response.context = this;
        if (Thread.currentThread() == worker.thread) {
            worker.onResponseReady(response);
        } else {
            worker.offer(response);
        }
    }

    /** Sends an error response with a {@link ResponseCode} and a message for the caller. */
    public void respondError(int responseCode, String message) {
        respond(WritePacket.error(responseCode, message));
    }

    /** Ends a request without answering (it expired, or it was one-way), freeing its flow-control room. */
    void finishWithoutResponse() {
        if (partAnswers != null) {
            answerPart(WritePacket.error(ResponseCode.TIMEOUT, "the request was dropped without an answer"));
            return;
        }
        if (Thread.currentThread() == worker.thread) {
            worker.onContextFinished(this);
        } else {
            worker.offer(this);
        }
    }

    private void answerPart(WritePacket answer) {
        if (partDone.compareAndSet(false, true)) {
            partAnswers.answered(partIndex, answer);
        }
    }

    @Override
    public String toString() {
        return PacketType.name(type) + "(command=" + command + ", seq=" + seq + (partAnswers != null ? ", part "
                + partIndex : "") + ") from " + connection;
    }
}
