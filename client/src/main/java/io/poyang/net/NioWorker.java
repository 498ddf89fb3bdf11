package io.poyang.net;

import io.poyang.buf.BufferSizeClasses;
import io.poyang.buf.ThreadBufferPool;
import io.poyang.codec.EncodeContext;
import io.poyang.codec.PbCallback;
import io.poyang.common.LongObjMap;
import io.poyang.common.MpscLinkedQueue;
import io.poyang.common.StoppedException;
import io.poyang.common.Timestamp;
import io.poyang.log.ImpossibleStates;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * One I/O thread: its selector, the connections it owns, the requests it has sent and not yet seen
 * answered, and a lock-free inbox through which other threads hand it work. Everything here except
 * {@link #offer} runs on the worker thread, so none of it locks or uses atomics per packet.
 *
 * <p>Each loop: select (or selectNow when work is queued), read every ready connection into one
 * large buffer and decode all its packets in place, run the inbox, then encode every connection's
 * queued packets into pooled direct buffers and write them with one gathered write. Deadlines
 * (pending requests, handshakes, idle and stalled connections) are checked every few tens of ms.
 */
final class NioWorker implements Runnable {

    private static final PoyangLog log = PoyangLogs.get(NioWorker.class);
    private static final AtomicIntegerFieldUpdater<NioWorker> SELECTING =
            AtomicIntegerFieldUpdater.newUpdater(NioWorker.class, "selecting");
    /** Reads per connection per loop at most, so one fast sender cannot starve the rest. */
    private static final int MAX_READS_PER_LOOP = 4;
    private static final long MAINTAIN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    final NioNode node;
    final NioConfig config;
    final Thread thread;
    final Timestamp ts = new Timestamp();
    private final Selector selector;
    private final MpscLinkedQueue<Object> inbox = new MpscLinkedQueue<>();
    /** 1 while the worker is in (or about to enter) a blocking select: producers must wake it. */
    private volatile int selecting;
    /** Set when the loop has ended: producers then fail what they offer themselves. */
    private volatile boolean exited;
    /** The loop ended with an error (a bug): its connections were closed and it takes no new ones. */
    private volatile boolean crashed;
    private final ThreadBufferPool bufferPool;
    private final ByteBuffer readBuffer;
    private final EncodeContext encodeContext = new EncodeContext();
    /** Requests sent and not answered, keyed by connection id and seq. */
    private final LongObjMap<WritePacket> pending = new LongObjMap<>(4096);
    private final ArrayList<NioConnection> connections = new ArrayList<>();
    private final ArrayList<Peer> peers = new ArrayList<>();
    private NioConnection dirtyHead;
    private int nextConnectionId = 1;
    private final long tickNanos;
    private long nextTickNanos;
    private long nextMaintainNanos;

    // server side flow control: counted here, on the worker thread only
    int inFlightRequests;
    long inFlightBytes;

    // traffic, for metrics: plain fields written by this worker only, read racily (NioNode.traffic)
    long bytesRead;
    long bytesWritten;
    long packetsIn;
    long requestsIn;
    long responsesIn;
    int connectionCount;

    private boolean stopping;
    private long stopDeadlineNanos;
    private boolean exitLoop;
    final CountDownLatch terminated = new CountDownLatch(1);

    // scratch for deadline scans (visitors must not modify the map they walk)
    private final ArrayList<WritePacket> scratch = new ArrayList<>();
    private long scanNowNanos;
    private NioConnection scanConnection;
    private final LongObjMap.Visitor<WritePacket> expiredVisitor = (k, p) -> {
        if (scanNowNanos - p.deadlineNanos >= 0) {
            scratch.add(p);
            return false;
        }
        return true;
    };
    private final LongObjMap.Visitor<WritePacket> ofConnectionVisitor = (k, p) -> {
        if (p.connection == scanConnection) {
            scratch.add(p);
            return false;
        }
        return true;
    };

    // statistics, worker thread only
    long droppedExpiredRequests;

    NioWorker(NioNode node, int index) throws IOException {
        this.node = node;
        this.config = node.config;
        this.selector = Selector.open();
        this.thread = new Thread(this, config.name + "-io-" + index);
        this.thread.setDaemon(false);
        this.bufferPool = new ThreadBufferPool(thread, ts, config.localPoolBytes, node.sharedPool,
                ThreadBufferPool.DEFAULT_IDLE_NANOS);
        this.readBuffer = ByteBuffer.allocateDirect(config.readBufferBytes);
        this.tickNanos = TimeUnit.MILLISECONDS.toNanos(config.tickMillis);
    }

    void start() {
        thread.start();
    }

    // ------------------------------------------------------------------ any thread

    /** Hands work to the worker: a packet to send, a response, a finished request or a task. */
    void offer(Object work) {
        inbox.offer(work);
        if (exited) {
            failAfterExit();
            return;
        }
        // Wake the selector only when it sleeps: Selector.wakeup is a system call.
        if (selecting == 1 && SELECTING.compareAndSet(this, 1, 0)) {
            selector.wakeup();
        }
    }

    /** Whether the loop has ended (stopped, or crashed): it takes no new connections. */
    boolean hasExited() {
        return exited;
    }

    /** Whether the loop ended with an error (see {@link NioNode#crashedWorkers()}). */
    boolean hasCrashed() {
        return crashed;
    }

    /** Runs {@code task} on the worker thread. */
    void execute(Runnable task) {
        offer(task);
    }

    // ------------------------------------------------------------------ the loop

    @Override
    public void run() {
        ts.refresh();
        nextTickNanos = ts.nanoTime() + tickNanos;
        nextMaintainNanos = ts.nanoTime() + MAINTAIN_INTERVAL_NANOS;
        try {
            while (!exitLoop) {
                select();
                ts.refresh();
                processSelectedKeys();
                drainInbox();
                flushDirty();
                if (ts.nanoTime() - nextTickNanos >= 0) {
                    tick();
                }
            }
        } catch (Throwable t) {
            crashed = true;
            ImpossibleStates.report("{} crashed; its connections are closed", thread.getName(), t);
        } finally {
            shutdown();
        }
    }

    private void select() throws IOException {
        if (!inbox.isEmpty() || dirtyHead != null) {
            selector.selectNow();
            return;
        }
        selecting = 1;
        // Re-check after publishing the flag: a producer that missed the flag left its work here.
        if (inbox.isEmpty()) {
            long waitNanos = Math.max(1, nextTickNanos - System.nanoTime());
            selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos)));
        } else {
            selector.selectNow();
        }
        selecting = 0;
    }

    private void processSelectedKeys() {
        Set<SelectionKey> keys = selector.selectedKeys();
        if (keys.isEmpty()) {
            return;
        }
        Iterator<SelectionKey> it = keys.iterator();
        while (it.hasNext()) {
            SelectionKey key = it.next();
            it.remove();
            NioConnection c = (NioConnection) key.attachment();
            int ready;
            try {
                ready = key.readyOps();
            } catch (CancelledKeyException e) {
                continue;
            }
            if ((ready & SelectionKey.OP_CONNECT) != 0) {
                finishConnect(c);
            }
            if ((ready & SelectionKey.OP_READ) != 0 && !c.isClosed()) {
                read(c);
            }
            if ((ready & SelectionKey.OP_WRITE) != 0 && !c.isClosed()) {
                markDirty(c);
            }
        }
    }

    private void drainInbox() {
        Object o;
        while ((o = inbox.relaxedPoll()) != null) {
            dispatch(o);
        }
    }

    private void dispatch(Object o) {
        if (o instanceof WritePacket) {
            WritePacket p = (WritePacket) o;
            if (p.context != null) {
                onResponseReady(p);
            } else {
                onOutgoing(p);
            }
        } else if (o instanceof ReqContext) {
            onContextFinished((ReqContext) o);
        } else {
            ((Runnable) o).run();
        }
    }

    // ------------------------------------------------------------------ reading

    private void read(NioConnection c) {
        ByteBuffer buf = readBuffer;
        for (int i = 0; i < MAX_READS_PER_LOOP; i++) {
            buf.clear();
            int n;
            try {
                n = c.channel.read(buf);
            } catch (IOException e) {
                close(c, "read failed: " + e.getMessage(), null);
                return;
            }
            if (n < 0) {
                close(c, c.reader.inFrame() ? "closed by the other side in the middle of a frame"
                        : "closed by the other side", null);
                return;
            }
            if (n == 0) {
                return;
            }
            c.lastReadNanos = ts.nanoTime();
            bytesRead += n;
            buf.flip();
            try {
                c.reader.decode(buf);
            } catch (OutOfMemoryError e) {
                // What this connection's frames hold cannot be had: it goes, the worker and the
                // other connections stay (the memory it held is freed with it).
                close(c, "out of memory decoding its frames: " + e.getMessage(), null);
                return;
            }
            if (c.isClosed() || c.readPaused || n < buf.capacity()) {
                return;
            }
        }
    }

    /** Picks the body decoder for the packet the reader is in; returns a PacketReader.BODY_* mode. */
    int chooseBodyDecoder(NioConnection c, PacketReader r) {
        PbCallback<?> decoder;
        if (r.type == PacketType.RESPONSE && r.seq != 0) {
            WritePacket req = pending.get(key(c, r.seq));
            r.request = req;
            if (req == null || r.responseCode != ResponseCode.SUCCESS) {
                return PacketReader.BODY_SKIP;
            }
            decoder = req.decoder.create();
        } else if ((r.type == PacketType.REQUEST || r.type == PacketType.ONE_WAY) && r.command != 0) {
            if (r.command == Commands.HANDSHAKE) {
                decoder = new Handshake.Decoder();
            } else if (!c.handshakeDone) {
                return PacketReader.BODY_SKIP;
            } else {
                ProcessorEntry e = node.processors.get(r.command);
                r.processor = e;
                if (e == null) {
                    return PacketReader.BODY_SKIP;
                }
                decoder = e.processor.createDecoder();
            }
        } else {
            return PacketReader.BODY_EARLY;
        }
        r.bodyDecoder = decoder;
        return decoder instanceof RawBodyCallback ? PacketReader.BODY_RAW : PacketReader.BODY_PB;
    }

    /** A whole packet was decoded. */
    void onPacket(NioConnection c, PacketReader r) {
        packetsIn++;
        if (!c.handshakeDone) {
            onPacketBeforeHandshake(c, r);
            return;
        }
        String changed = r.headerChangedAfterBody();
        if (changed != null) {
            onHeaderChangedAfterBody(c, r, changed);
            return;
        }
        switch (r.type) {
            case PacketType.RESPONSE:
                responsesIn++;
                onResponse(c, r);
                break;
            case PacketType.REQUEST:
            case PacketType.ONE_WAY:
                requestsIn++;
                onRequest(c, r);
                break;
            default:
                close(c, "packet of unknown type " + r.type, null);
                break;
        }
    }

    /**
     * A packet whose body was decoded by other header values than it ends with: a response fails
     * the request it names, a request is answered BAD_REQUEST (the frame was whole, so the
     * connection goes on); one that names neither closes the connection.
     */
    private void onHeaderChangedAfterBody(NioConnection c, PacketReader r, String changed) {
        WritePacket req = r.type == PacketType.RESPONSE ? pending.remove(key(c, r.seq)) : null;
        if (req != null) {
            completeRequest(req, null, new NetException("the response to " + req + " is malformed: " + changed));
        } else if (r.type == PacketType.REQUEST && r.seq != 0) {
            respondNow(c, r, ResponseCode.BAD_REQUEST, changed);
        } else {
            close(c, "malformed packet: " + changed, null);
        }
    }

    private void onPacketBeforeHandshake(NioConnection c, PacketReader r) {
        if (c.closeWhenWritten != null) {
            return;   // refused: only the refusal is left to write
        }
        if (c.peer == null) {
            if (r.type != PacketType.REQUEST || r.command != Commands.HANDSHAKE) {
                close(c, "the first packet was " + PacketType.name(r.type) + " of command " + r.command
                        + ", not a handshake", null);
                return;
            }
            Handshake hs;
            try {
                hs = (Handshake) r.finishBody(new Handshake.Decoder());
            } catch (RuntimeException e) {
                close(c, "unreadable handshake: " + e.getMessage(), null);
                return;
            }
            String why = hs.incompatibility();
            if (why != null) {
                close(c, "handshake refused: " + why, null);
                return;
            }
            String otherCluster = hs.otherCluster(node.config.clusterName);
            if (otherCluster != null) {
                String wrongCluster = "this is node " + node.config.nodeId + " of cluster '" + node.config.clusterName
                        + "', not a node of cluster '" + otherCluster + "'";
                WritePacket refusal = WritePacket.error(ResponseCode.WRONG_CLUSTER, node.config.nodeId, wrongCluster);
                refusal.command = Commands.HANDSHAKE;
                refusal.seq = r.seq;
                c.closeWhenWritten = "handshake refused: " + wrongCluster + " (the other side's address for a node of its"
                        + " cluster reaches this one)";
                enqueue(c, refusal);
                return;
            }
            String wrongNode = hs.misaddressedTo(node.config.nodeId);
            if (wrongNode != null) {
                // answered, so the connecting side logs why (a bare close would say only "closed")
                // the detail field carries this node's id, for the other side's log and health
                WritePacket refusal = WritePacket.error(ResponseCode.WRONG_NODE, node.config.nodeId, wrongNode);
                refusal.command = Commands.HANDSHAKE;
                refusal.seq = r.seq;
                c.closeWhenWritten = "handshake refused: " + wrongNode + " (the other side's address for node "
                        + hs.expectedNodeId + " reaches this one)";
                enqueue(c, refusal);
                return;
            }
            c.handshakeDone = true;
            c.remoteHandshake = hs;
            if (hs.maxFrameBytes > 0) {
                c.remoteMaxFrameBytes = hs.maxFrameBytes;
            }
            WritePacket resp = WritePacket.response(node.localHandshake);
            resp.command = Commands.HANDSHAKE;
            resp.seq = r.seq;
            enqueue(c, resp);
            node.fireConnected(c);
        } else if (r.type == PacketType.RESPONSE && r.seq == c.handshakeSeq) {
            onResponse(c, r);
        } else {
            close(c, "the server sent " + PacketType.name(r.type) + " before answering the handshake", null);
        }
    }

    private void onResponse(NioConnection c, PacketReader r) {
        WritePacket req = r.request != null ? r.request : pending.get(key(c, r.seq));
        if (req == null) {
            // Timed out (and failed) already, or a seq we never sent: nothing waits for it.
            return;
        }
        // The request the body was decoded for, by the seq it was sent with (a frame that repeats
        // its seq field with another value must not complete one request and remove another's entry).
        // One lookup on the hot path: the entry under the request's own seq is the request itself.
        pending.remove(key(c, req.seq));
        if (req.seq != r.seq) {
            completeRequest(req, null, new NetException("the response to " + req + " is malformed: its seq changed"
                    + " from " + req.seq + " to " + r.seq + " within the frame"));
            return;
        }
        if (r.responseCode != ResponseCode.SUCCESS) {
            completeRequest(req, null, new RemoteException(r.responseCode, r.bizCode, r.message));
            return;
        }
        Object body;
        try {
            body = r.finishBody(r.bodyDone ? null : req.decoder.create());
        } catch (RuntimeException e) {
            completeRequest(req, null, new NetException("the response to " + req + " could not be decoded: "
                    + e.getMessage(), e));
            return;
        }
        completeRequest(req, body, null);
    }

    private void onRequest(NioConnection c, PacketReader r) {
        boolean oneWay = r.type == PacketType.ONE_WAY;
        if (r.command == Commands.HANDSHAKE) {
            if (!oneWay) {
                respondNow(c, r, ResponseCode.BAD_REQUEST, "the handshake was already done");
            }
            return;
        }
        ProcessorEntry e = r.processor != null ? r.processor : node.processors.get(r.command);
        if (e == null) {
            if (!oneWay) {
                respondNow(c, r, ResponseCode.COMMAND_NOT_FOUND, "no processor for command " + r.command);
            }
            return;
        }
        if (stopping) {
            if (!oneWay) {
                respondNow(c, r, ResponseCode.STOPPING, node.describe() + " is stopping");
            }
            return;
        }
        if (r.timeoutNanos < 0) {
            // The sender says its deadline has already passed: doing the work would be wasted.
            droppedExpiredRequests++;
            return;
        }
        int frameBytes = r.frameLength();
        if (inFlightRequests >= config.maxInFlightRequests || inFlightBytes + frameBytes > config.maxInFlightBytes) {
            if (!oneWay) {
                respondNow(c, r, ResponseCode.FLOW_CONTROL, node.describe() + " has too many requests in flight ("
                        + inFlightRequests + " of max " + config.maxInFlightRequests + ", " + inFlightBytes
                        + " of max " + config.maxInFlightBytes + " bytes); retry later");
            }
            return;
        }
        Object body;
        try {
            body = r.finishBody(r.bodyDone ? null : e.processor.createDecoder());
        } catch (RuntimeException ex) {
            if (!oneWay) {
                respondNow(c, r, ResponseCode.BAD_REQUEST, PacketReader.describe(ex));
            }
            return;
        }
        // No timeout field (0) means no deadline; a huge one must not wrap around.
        long deadline = r.timeoutNanos > 0 && r.timeoutNanos < Long.MAX_VALUE / 4
                ? ts.nanoTime() + r.timeoutNanos : Long.MAX_VALUE;
        ReqContext ctx = new ReqContext(this, c, r.type, r.command, r.seq, deadline, frameBytes, r.extra);
        inFlightRequests++;
        inFlightBytes += frameBytes;
        if (e.executor == null) {
            runProcessor(e, ctx, body);
        } else {
            try {
                e.executor.execute(new ProcessTask(e, ctx, body));
            } catch (RuntimeException ex) {
                // rejected (full, shut down), or an executor that failed otherwise: answered, never
                // thrown into the read loop (which would take the worker and its connections)
                boolean rejected = ex instanceof RejectedExecutionException;
                if (!rejected) {
                    log.error("the executor of command {} failed to take {}", r.command, ctx, ex);
                }
                if (oneWay) {
                    onContextFinished(ctx);
                } else {
                    ctx.respond(WritePacket.error(rejected ? ResponseCode.FLOW_CONTROL : ResponseCode.SYS_ERROR,
                            "the executor of command " + r.command + " refused the request: " + ex));
                }
            }
        }
    }

    static void runProcessor(ProcessorEntry e, ReqContext ctx, Object body) {
        WritePacket resp;
        try {
            resp = e.processor.process(ctx, body);
        } catch (Throwable t) {
            log.warn("processor of command {} failed on {}", e.command, ctx, t);
            resp = ctx.isOneWay() ? null : WritePacket.error(ResponseCode.SYS_ERROR,
                    "processor of command " + e.command + " failed: " + t);
        }
        if (ctx.isOneWay()) {
            ctx.finishWithoutResponse();
        } else if (resp != null) {
            if (resp.type != PacketType.RESPONSE) {
                // a bug in the processor: its caller hears of it, and the I/O thread goes on
                log.error("processor of command {} returned {} for {}, not a response; answered SYS_ERROR", e.command,
                        resp, ctx);
                resp = WritePacket.error(ResponseCode.SYS_ERROR, "processor of command " + e.command
                        + " returned a packet that is not a response");
            }
            ctx.respond(resp);
        }
    }

    /** Runs a processor on its executor; drops the request if it expired while queued there. */
    private static final class ProcessTask implements Runnable {
        private final ProcessorEntry entry;
        private final ReqContext context;
        private final Object body;

        ProcessTask(ProcessorEntry entry, ReqContext context, Object body) {
            this.entry = entry;
            this.context = context;
            this.body = body;
        }

        @Override
        public void run() {
            if (context.isExpired()) {
                return;   // isExpired ended the request
            }
            runProcessor(entry, context, body);
        }
    }

    private void respondNow(NioConnection c, PacketReader r, int code, String message) {
        WritePacket resp = WritePacket.error(code, message);
        resp.command = r.command;
        resp.seq = r.seq;
        enqueue(c, resp);
    }

    void onCorruptPacket(NioConnection c, PacketReader r, RuntimeException e) {
        if (!c.handshakeDone) {
            close(c, "unreadable packet before the handshake: " + e.getMessage(), null);
            return;
        }
        if (r.type == PacketType.REQUEST && r.seq != 0) {
            respondNow(c, r, ResponseCode.BAD_REQUEST, PacketReader.describe(e));
        } else if (r.type == PacketType.RESPONSE && (r.seq != 0 || r.request != null)) {
            WritePacket req = r.request != null ? r.request : pending.get(key(c, r.seq));
            if (req != null) {
                pending.remove(key(c, req.seq));
                completeRequest(req, null, new NetException("the response to " + req + " could not be decoded: "
                        + e.getMessage(), e));
            }
        } else {
            // Nobody can be told (no request seq to answer): the other side speaks garbage.
            close(c, "unreadable packet: " + e.getMessage(), null);
        }
    }

    // ------------------------------------------------------------------ responses and finished requests

    void onResponseReady(WritePacket resp) {
        ReqContext ctx = resp.context;
        if (ctx.finished) {
            if (!ctx.expiredDropped) {
                log.warn("{} was answered twice; the second response is dropped", ctx);
            }
            resp.finish();
            return;
        }
        finishContext(ctx);
        NioConnection c = ctx.connection;
        if (ctx.type == PacketType.ONE_WAY || c.isClosed()) {
            resp.finish();
            return;
        }
        enqueue(c, resp);
    }

    void onContextFinished(ReqContext ctx) {
        if (ctx.finished) {
            return;
        }
        if (ctx.type == PacketType.REQUEST) {
            droppedExpiredRequests++;
        }
        finishContext(ctx);
    }

    private void finishContext(ReqContext ctx) {
        ctx.finished = true;
        inFlightRequests--;
        inFlightBytes -= ctx.frameBytes;
    }

    // ------------------------------------------------------------------ sending

    /** A request, one-way packet or push handed over by a caller (on this thread or via the inbox). */
    void onOutgoing(WritePacket p) {
        NioConnection c = p.connection;
        if (c == null) {
            Peer peer = p.peer;
            c = peer.connection;
            if (c == null || !c.handshakeDone) {
                Peer.Status s = peer.status;
                if (!stopping && (s == Peer.Status.CONNECTING || s == Peer.Status.HANDSHAKING)) {
                    peer.addWaiting(p);
                } else {
                    failPacket(p, new NetNotSentException("not connected to " + peer + " (" + s
                            + (peer.lastFailure != null ? ", last failure: " + peer.lastFailure : "") + ")"));
                }
                return;
            }
        }
        if (c.isClosed()) {
            failPacket(p, new NetNotSentException(c + " is closed: " + c.closeReason));
            return;
        }
        enqueue(c, p);
    }

    private void enqueue(NioConnection c, WritePacket p) {
        if (p.type == PacketType.REQUEST && p.context == null) {
            int seq = c.nextSeq();
            WritePacket earlier;
            // after 2^31 requests on one connection the seq wraps: one still pending (a long server-side
            // wait) keeps its seq, which put returned, and this one takes the next free seq instead
            while ((earlier = pending.put(key(c, seq), p)) != null) {
                pending.put(key(c, seq), earlier);
                seq = c.nextSeq();
            }
            p.seq = seq;
            p.connection = c;
        }
        c.lastSendNanos = ts.nanoTime();
        c.append(p);
        markDirty(c);
    }

    private void failPacket(WritePacket p, Throwable error) {
        if (p.type == PacketType.REQUEST && p.context == null) {
            completeRequest(p, null, error);
        } else {
            releaseFlow(p);
        }
        p.finish();
    }

    private void releaseFlow(WritePacket p) {
        if (p.flowBytes >= 0) {
            node.limiter.release(p.flowBytes);
            p.flowBytes = -1;
        }
    }

    /** Completes a request once; the caller has removed it from the pending map. */
    void completeRequest(WritePacket p, Object body, Throwable error) {
        if (p.completed) {
            return;
        }
        p.completed = true;
        releaseFlow(p);
        RpcCallback<Object> cb = p.callback;
        if (p.callbackOnIoThread) {
            invoke(cb, body, error);
        } else {
            try {
                node.callbackExecutor.execute(() -> invoke(cb, body, error));
            } catch (RejectedExecutionException e) {
                invoke(cb, body, error);
            }
        }
    }

    static void invoke(RpcCallback<Object> cb, Object body, Throwable error) {
        try {
            if (error == null) {
                cb.onSuccess(body);
            } else {
                cb.onFailure(error);
            }
        } catch (Throwable t) {
            log.warn("a request callback threw", t);
        }
    }

    private static long key(NioConnection c, int seq) {
        return ((long) c.id << 32) | (seq & 0xFFFFFFFFL);
    }

    // ------------------------------------------------------------------ writing

    private void markDirty(NioConnection c) {
        if (!c.dirty) {
            c.dirty = true;
            c.nextDirty = dirtyHead;
            dirtyHead = c;
        }
    }

    private void flushDirty() {
        NioConnection c = dirtyHead;
        dirtyHead = null;
        while (c != null) {
            NioConnection next = c.nextDirty;
            c.nextDirty = null;
            c.dirty = false;
            flush(c);
            c = next;
        }
    }

    private void flush(NioConnection c) {
        if (c.isClosed() || c.connecting) {
            return;
        }
        try {
            flushOrThrow(c);
        } catch (OutOfMemoryError e) {
            // no memory for this connection's out buffers (direct memory, most likely): it goes,
            // as read() drops a connection it cannot read for; the worker and the others stay
            close(c, "out of memory for its write buffers (" + c.outBytes + " bytes waited): " + e.getMessage(), null);
        }
    }

    private void flushOrThrow(NioConnection c) {
        boolean blocked = c.hasUnwritten() && !writeOut(c);
        if (!blocked) {
            int budget = config.maxWriteBatchBytes;
            while (c.queueHead != null && budget > 0 && !c.isClosed()) {
                budget -= encodeQueue(c, budget);
                if (c.hasUnwritten() && !writeOut(c)) {
                    blocked = true;
                    break;
                }
            }
        }
        if (c.isClosed()) {
            return;
        }
        if (c.closeWhenWritten != null && !blocked && c.queueHead == null && !c.hasUnwritten()) {
            close(c, c.closeWhenWritten, null);
            return;
        }
        if (blocked) {
            // The peer is slow: turn what is queued into bytes up to the backlog cap, so the cap
            // (and the read pause below) accounts for everything owed to this peer.
            while (c.queueHead != null && c.outBytes < config.maxWriteBacklogBytes && !c.isClosed()) {
                encodeQueue(c, (int) Math.min(Integer.MAX_VALUE, config.maxWriteBacklogBytes - c.outBytes));
            }
        } else if (c.queueHead != null) {
            markDirty(c); // the batch budget ran out: continue next loop
        }
        // Only the side that accepted a connection pauses reading it: there, reading requests makes
        // answers, and a peer that sends without reading them must wait. The side that connected
        // reads answers, which free room and make nothing to write; were it to pause too, a backlog
        // full of its own requests would stop it reading the answers that fill the other side's
        // backlog, the other side would stop reading those requests, and neither would move again.
        // Its requests are bounded by the pending limits instead.
        if (c.outBytes >= config.maxWriteBacklogBytes && c.peer == null) {
            c.readPaused = true;
        } else if (c.readPaused && c.outBytes <= config.maxWriteBacklogBytes / 2) {
            c.readPaused = false;
        }
        updateInterest(c);
    }

    /** The out buffer {@link #encodeQueue} goes on encoding into (see reopenLastOutBuffer), or null. */
    private ByteBuffer reopened;
    /** Where the unwritten bytes of {@link #reopened} begin, and where they ended when it was reopened. */
    private int reopenedUnwrittenFrom;
    private int reopenedHeldTo;

    /** Encodes queued packets into out buffers, up to about {@code budget} bytes; returns bytes encoded. */
    private int encodeQueue(NioConnection c, int budget) {
        int total = 0;
        reopened = null;   // left over only by an earlier call that ended in a close or an error
        // Go on in the last out buffer when it has room: a connection that cannot be written to
        // gets its answers one or a few per loop, and a fresh 64 KiB buffer for each would hold
        // thousands of times the bytes owed, past every backlog cap (which counts bytes).
        ByteBuffer buf = reopenLastOutBuffer(c);
        long now = ts.nanoTime();
        WritePacket p;
        // a request's callback may run here (it timed out while queued) and close the connection,
        // which releases its out buffers, buf among them: stop then, and leave buf alone
        while (total < budget && !c.isClosed() && (p = c.pollQueue()) != null) {
            if (p.type == PacketType.REQUEST && p.context == null) {
                if (p.completed) {
                    p.finish();
                    continue; // timed out while queued
                }
                long left = p.deadlineNanos - now;
                if (left <= 0) {
                    pending.remove(key(c, p.seq));
                    completeRequest(p, null, timeout(p, "before it could be sent", true));
                    p.finish();
                    continue;
                }
                p.timeoutNanos = left;
            } else if (p.type == PacketType.ONE_WAY && p.deadlineNanos != 0 && p.deadlineNanos - now <= 0) {
                failPacket(p, null);
                continue;
            }
            int size;
            try {
                size = p.prepareSize();
            } catch (RuntimeException e) {
                failUnencodable(c, p, e, true);
                continue;
            }
            if (size > c.remoteMaxFrameBytes) {
                String why = p + " is " + size + " bytes, over the " + c.remoteMaxFrameBytes
                        + "-byte frame limit of " + c;
                if (p.type == PacketType.REQUEST && p.context == null) {
                    pending.remove(key(c, p.seq));
                    completeRequest(p, null, new NetException(why));
                } else if (p.type == PacketType.RESPONSE) {
                    // The requester must hear something, not wait for its timeout (and retry into
                    // the same answer): an error in place of the response, which fits.
                    log.warn("answered with an error instead: {}", why);
                    releaseFlow(p);
                    answerWithError(c, p, "the response is " + size + " bytes, over this client's frame limit of "
                            + c.remoteMaxFrameBytes + " bytes; ask for less at a time, or raise the client's maxFrameBytes");
                } else {
                    log.warn("dropped: {}", why);
                    releaseFlow(p);
                }
                p.finish();
                continue;
            }
            if (buf == null || buf.remaining() < 4 + EncodeContext.MIN_BUFFER_BYTES) {
                buf = nextOutBuffer(c, buf, size + 4);
            }
            buf.putInt(size);
            EncodeContext ec = encodeContext.reset();
            try {
                while (!p.encode(ec, buf)) {
                    buf = nextOutBuffer(c, buf, size);
                }
            } catch (RuntimeException e) {
                // half a frame is in the out buffers: the byte stream to this peer is broken, so the
                // connection goes (its requests fail, the client reconnects), not the worker
                failUnencodable(c, p, e, false);
                close(c, "a packet could not be encoded", new NetException("could not encode " + p + " for " + c
                        + ": " + e, e));
                return total;
            }
            p.encoded = true;
            total += size + 4;
            c.encodedTotalBytes += size + 4;
            boolean awaitsWrite = p.freeRoomWhenWritten && p.type == PacketType.REQUEST && p.context == null;
            if (p.type == PacketType.ONE_WAY) {
                releaseFlow(p);
            } else if (awaitsWrite) {
                awaitWrite(c, p);
            }
            p.finish();
            if (awaitsWrite) {
                p.body = null;   // after onDone, which may still look at it
            }
        }
        if (buf != null && !c.isClosed()) {
            sealOutBuffer(c, buf);
        }
        reopened = null;
        return total;
    }

    /**
     * The last out buffer of {@code c}, its limit moved to its capacity and its position to the end
     * of the bytes it holds, when room for a frame header and some body is left in it; else null.
     * {@link #sealOutBuffer} gives it back its unwritten range. Safe: out buffers are touched by
     * this thread only, and only between writes.
     */
    private ByteBuffer reopenLastOutBuffer(NioConnection c) {
        if (!c.hasUnwritten()) {
            return null;
        }
        ByteBuffer b = c.out[c.outEnd - 1];
        if (b.capacity() - b.limit() < 4 + EncodeContext.MIN_BUFFER_BYTES) {
            return null;
        }
        reopened = b;
        reopenedUnwrittenFrom = b.position();
        reopenedHeldTo = b.limit();
        b.position(b.limit());
        b.limit(b.capacity());
        return b;
    }

    /**
     * A request sent with {@link CallOptions#freeingRoomWhenWritten()} was encoded: its room goes
     * back to the pending limit once the bytes up to the end of its frame are written
     * ({@link #freeWritten}); its body, no longer needed (what is owed is in the out buffers), is
     * dropped by the caller.
     */
    private void awaitWrite(NioConnection c, WritePacket p) {
        p.endOfFrameOffset = c.encodedTotalBytes;
        p.nextAwaitingWrite = null;
        if (c.awaitingWriteTail == null) {
            c.awaitingWriteHead = p;
        } else {
            c.awaitingWriteTail.nextAwaitingWrite = p;
        }
        c.awaitingWriteTail = p;
    }

    /** Frees the room of the requests awaiting their write whose frames are now fully written. */
    private void freeWritten(NioConnection c) {
        WritePacket p = c.awaitingWriteHead;
        while (p != null && p.endOfFrameOffset - c.writtenTotalBytes <= 0) {
            releaseFlow(p);   // a no-op when its answer (or its failure) came first
            WritePacket next = p.nextAwaitingWrite;
            p.nextAwaitingWrite = null;
            p = next;
        }
        c.awaitingWriteHead = p;
        if (p == null) {
            c.awaitingWriteTail = null;
        }
    }

    /**
     * A packet whose body threw while being sized or encoded (a bug in the body): it fails alone.
     * A response that failed while being sized left the byte stream intact, so the requester gets an
     * error in its place rather than waiting for its timeout; after half a frame the connection goes.
     */
    private void failUnencodable(NioConnection c, WritePacket p, RuntimeException e, boolean streamIntact) {
        log.error("could not encode {} for {}", p, c, e);
        if (p.type == PacketType.REQUEST && p.context == null) {
            pending.remove(key(c, p.seq));
            completeRequest(p, null, new NetException("could not encode " + p + ": " + e, e));
        } else {
            releaseFlow(p);
            if (streamIntact && p.type == PacketType.RESPONSE) {
                answerWithError(c, p, "the server could not encode its response (" + e
                        + "); the server's log has the details");
            }
        }
        p.finish();
    }

    /** Queues a SYS_ERROR in place of response {@code p}, for the same command and seq. */
    private void answerWithError(NioConnection c, WritePacket p, String message) {
        WritePacket err = WritePacket.error(ResponseCode.SYS_ERROR, message);
        err.command = p.command;
        err.seq = p.seq;
        enqueue(c, err);
    }

    private ByteBuffer nextOutBuffer(NioConnection c, ByteBuffer full, int sizeHint) {
        if (full != null) {
            sealOutBuffer(c, full);
        }
        if (!c.hasUnwritten()) {
            c.lastWriteProgressNanos = ts.nanoTime();
        }
        int size = Math.max(config.writeBufferBytes, Math.min(sizeHint, BufferSizeClasses.MAX_SIZE));
        ByteBuffer b = bufferPool.borrow(size);
        c.addOut(b);
        return b;
    }

    /** Ends the encoding into {@code b}: its encoded bytes become the unwritten range, counted in outBytes. */
    private void sealOutBuffer(NioConnection c, ByteBuffer b) {
        if (b == reopened) {
            int end = b.position();
            b.limit(end);
            b.position(reopenedUnwrittenFrom);
            c.outBytes += end - reopenedHeldTo;
            reopened = null;
            return;
        }
        b.flip();
        c.outBytes += b.remaining();
    }

    /** Writes the encoded buffers with one gathered write; true when all of them went out. */
    private boolean writeOut(NioConnection c) {
        long n;
        try {
            n = c.channel.write(c.out, c.outStart, c.outEnd - c.outStart);
        } catch (IOException e) {
            close(c, "write failed: " + e.getMessage(), null);
            return false;
        }
        if (n > 0) {
            c.outBytes -= n;
            bytesWritten += n;
            c.lastWriteProgressNanos = ts.nanoTime();
            c.writtenTotalBytes += n;
            if (c.awaitingWriteHead != null) {
                freeWritten(c);
            }
        }
        ByteBuffer[] out = c.out;
        while (c.outStart < c.outEnd && !out[c.outStart].hasRemaining()) {
            bufferPool.release(out[c.outStart]);
            out[c.outStart++] = null;
        }
        if (c.outStart == c.outEnd) {
            c.outStart = 0;
            c.outEnd = 0;
            return true;
        }
        return false;
    }

    private void updateInterest(NioConnection c) {
        if (c.isClosed() || c.connecting) {
            return;
        }
        int ops = (c.readPaused ? 0 : SelectionKey.OP_READ) | (c.hasUnwritten() ? SelectionKey.OP_WRITE : 0);
        if (ops != c.interestOps) {
            try {
                c.key.interestOps(ops);
                c.interestOps = ops;
            } catch (CancelledKeyException e) {
                close(c, "selection key cancelled", null);
            }
        }
    }

    // ------------------------------------------------------------------ connections

    /** Server side: adopts an accepted socket. */
    void register(SocketChannel ch) {
        if (stopping) {
            closeQuietly(ch);
            node.onAcceptedClosed();
            return;
        }
        NioConnection c = null;
        try {
            ch.configureBlocking(false);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            c = new NioConnection(this, ch, nextConnectionId++, null, ts.nanoTime(), config.maxFrameBytes);
            c.key = ch.register(selector, SelectionKey.OP_READ, c);
            c.interestOps = SelectionKey.OP_READ;
            connections.add(c);
            connectionCount = connections.size();
        } catch (IOException | RuntimeException e) {
            log.warn("could not adopt an accepted connection: {}", e.toString());
            closeQuietly(ch);
            node.onAcceptedClosed();
        }
    }

    /** Server side: hands an accepted socket to this worker (any thread); see {@link Adoption}. */
    void adopt(SocketChannel ch) {
        offer(new Adoption(ch));
    }

    /**
     * An accepted socket on its way to the worker. A named task, not a lambda, so that a worker that
     * has ended (stopped, or crashed) closes the socket instead of dropping the task: dropped, the
     * socket stayed open, its file descriptor leaked and its client waited for a handshake answer
     * that never came.
     */
    private final class Adoption implements Runnable {
        final SocketChannel channel;

        Adoption(SocketChannel channel) {
            this.channel = channel;
        }

        @Override
        public void run() {
            register(channel);
        }
    }

    /** Client side: takes charge of a peer and connects to it. */
    void addPeer(Peer peer) {
        peers.add(peer);
        if (peer.address.isUnresolved()) {
            lookUp(peer, true);   // connects once the lookup is answered
        } else {
            connect(peer);
        }
    }

    void removePeer(Peer peer) {
        peers.remove(peer);
        peer.status = Peer.Status.REMOVED;
        if (peer.connection != null) {
            close(peer.connection, "peer removed", null);
        }
        failWaiting(peer, new NetNotSentException("peer " + peer + " was removed"));
        node.onPeerStatusChanged();
    }

    private void connect(Peer peer) {
        if (peer.address.isUnresolved()) {
            // no address yet: wait out the back-off while the host is looked up again
            NioClientConfig cc = (NioClientConfig) config;
            peer.backoffMillis = peer.backoffMillis == 0 ? cc.reconnectMinBackoffMillis
                    : Math.min(peer.backoffMillis * 2, cc.reconnectMaxBackoffMillis);
            peer.nextConnectNanos = ts.nanoTime() + TimeUnit.MILLISECONDS.toNanos(peer.backoffMillis);
            peer.status = Peer.Status.NOT_CONNECTED;
            if (peer.lastFailure == null) {
                peer.lastFailure = "cannot resolve " + peer.host;
            }
            lookUpAgain(peer);
            failWaiting(peer, new NetNotSentException("could not connect to " + peer + ": " + peer.lastFailure));
            node.onPeerStatusChanged();
            return;
        }
        SocketChannel ch = null;
        try {
            ch = SocketChannel.open();
            ch.configureBlocking(false);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        } catch (IOException e) {
            closeQuietly(ch);
            peer.lastFailure = "could not open a socket: " + e;
            NioClientConfig cc = (NioClientConfig) config;
            peer.backoffMillis = Math.max(peer.backoffMillis, cc.reconnectMinBackoffMillis);
            peer.nextConnectNanos = ts.nanoTime() + TimeUnit.MILLISECONDS.toNanos(peer.backoffMillis);
            peer.status = Peer.Status.NOT_CONNECTED;
            lookUpAgain(peer);
            failWaiting(peer, new NetNotSentException("could not connect to " + peer + ": " + peer.lastFailure));
            node.onPeerStatusChanged();
            return;
        }
        NioConnection c = new NioConnection(this, ch, nextConnectionId++, peer, ts.nanoTime(), config.maxFrameBytes);
        c.connecting = true;
        c.connectDeadlineNanos = ts.nanoTime() + TimeUnit.MILLISECONDS.toNanos(((NioClientConfig) config).connectTimeoutMillis);
        peer.connection = c;
        peer.status = Peer.Status.CONNECTING;
        connections.add(c);
        connectionCount = connections.size();
        try {
            boolean done = ch.connect(peer.address);
            c.key = ch.register(selector, done ? 0 : SelectionKey.OP_CONNECT, c);
            if (done) {
                onConnected(c);
            }
        } catch (IOException | RuntimeException e) {
            close(c, "connect failed: " + e, null);
        }
        node.onPeerStatusChanged();
    }

    /**
     * Looks the peer's host up again, on the lookup thread, while the peer waits out its back-off:
     * the next connection goes wherever the name points by then. A failed lookup keeps the address
     * it has. One lookup per peer at a time; none for an address literal.
     */
    private void lookUpAgain(Peer peer) {
        lookUp(peer, false);
    }

    /** {@code connectWhenAnswered}: the peer's first lookup (it was added by name and has no address yet). */
    private void lookUp(Peer peer, boolean connectWhenAnswered) {
        if (peer.lookingUp || stopping || !peer.byName) {
            return;   // one at a time; and a stopping client connects nowhere again
        }
        peer.lookingUp = true;
        HostResolver resolver = ((NioClientConfig) config).hostResolver;
        PeerAddressLookups.submit(() -> {
            InetSocketAddress found = null;
            String failure = null;
            try {
                InetAddress a = resolver.resolve(peer.host);
                if (a != null) {
                    found = new InetSocketAddress(a, peer.port);
                } else {
                    failure = "the host resolver found no address";   // never the wildcard address
                }
            } catch (Throwable e) {
                // whatever the resolver throws (an Error of a custom one too), the answer must come
                // back: a peer whose lookup never answers is never looked up again
                failure = e.toString();
            }
            InetSocketAddress foundFinal = found;
            String failureFinal = failure;
            execute(() -> onLookedUp(peer, foundFinal, failureFinal, connectWhenAnswered));
        });
    }

    private void onLookedUp(Peer peer, InetSocketAddress found, String failure, boolean connectNow) {
        peer.lookingUp = false;
        if (found == null) {
            if (!failure.equals(peer.lookupFailure)) {
                log.warn("{}: cannot look {} up ({}); {}", node.describe(), peer.host, failure,
                        peer.address.isUnresolved() ? "it has no address yet, and is looked up again at each reconnect"
                                : "connecting to " + peer.address.getAddress().getHostAddress() + " meanwhile");
            }
            peer.lookupFailure = failure;
            if (peer.address.isUnresolved()) {
                peer.lastFailure = "cannot resolve " + peer.host + ": " + failure;
            }
        } else {
            if (peer.lookupFailure != null) {
                log.info("{}: {} resolves again, to {}", node.describe(), peer.host, found.getAddress().getHostAddress());
                peer.lookupFailure = null;
            }
            if (!found.equals(peer.address)) {
                InetSocketAddress was = peer.address;
                peer.address = found;
                if (!was.isUnresolved()) {
                    log.info("{}: {} now resolves to {} (was {}); connecting there", node.describe(), peer,
                            found.getAddress().getHostAddress(), was.getAddress().getHostAddress());
                }
            }
        }
        if (connectNow && !stopping && peer.status != Peer.Status.REMOVED && peer.connection == null) {
            connect(peer);   // without an address it waits out a back-off and looks the host up again
        }
    }

    private void finishConnect(NioConnection c) {
        try {
            if (c.channel.finishConnect()) {
                onConnected(c);
            }
        } catch (IOException e) {
            close(c, "connect failed: " + e.getMessage(), null);
        }
    }

    private void onConnected(NioConnection c) {
        c.connecting = false;
        c.interestOps = -1;
        Peer peer = c.peer;
        peer.status = Peer.Status.HANDSHAKING;
        NioClientConfig cc = (NioClientConfig) config;
        WritePacket hs = WritePacket.request(Commands.HANDSHAKE,
                peer.expectedNodeId == 0 ? node.localHandshake : node.localHandshake.expecting(peer.expectedNodeId));
        hs.connection = c;
        hs.decoder = Handshake.Decoder.FACTORY;
        hs.callbackOnIoThread = true;
        hs.flowBytes = -1;
        hs.deadlineNanos = ts.nanoTime() + TimeUnit.MILLISECONDS.toNanos(cc.handshakeTimeoutMillis);
        hs.callback = new RpcCallback<Object>() {
            @Override
            public void onSuccess(Object body) {
                onHandshakeAnswered(c, (Handshake) body);
            }

            @Override
            public void onFailure(Throwable error) {
                int code = error instanceof RemoteException ? ((RemoteException) error).responseCode() : 0;
                if (code == ResponseCode.WRONG_NODE) {
                    onWrongNode(c, nodeThere(((RemoteException) error).bizCode()));   // the detail: the id of the node there
                } else if (code == ResponseCode.WRONG_CLUSTER) {
                    onWrongNode(c, "a node of another cluster, which says: " + ((RemoteException) error).remoteMessage());
                } else {
                    close(c, "handshake failed: " + error.getMessage(), null);
                }
            }
        };
        enqueue(c, hs);
        c.handshakeSeq = hs.seq;
        updateInterest(c);
        node.onPeerStatusChanged();
    }

    private void onHandshakeAnswered(NioConnection c, Handshake hs) {
        if (c.isClosed()) {
            return;
        }
        String why = hs == null ? "empty handshake" : hs.incompatibility();
        if (why != null) {
            close(c, "server handshake refused: " + why, null);
            return;
        }
        Peer peer = c.peer;
        // a server of minor version 0 sends no node id (0) and is taken at its address
        if (peer.expectedNodeId != 0 && hs.nodeId != 0 && hs.nodeId != peer.expectedNodeId) {
            onWrongNode(c, nodeThere(hs.nodeId));
            return;
        }
        // a server that names no cluster (or of minor version below 2) is taken at its address
        String otherCluster = hs.otherCluster(config.clusterName);
        if (otherCluster != null) {
            onWrongNode(c, "node " + hs.nodeId + " of cluster '" + otherCluster + "', not of cluster '"
                    + config.clusterName + "'");
            return;
        }
        c.handshakeDone = true;
        c.remoteHandshake = hs;
        if (hs.maxFrameBytes > 0) {
            c.remoteMaxFrameBytes = hs.maxFrameBytes;
        }
        peer.remoteHandshake = hs;
        peer.backoffMillis = 0;
        peer.lastFailure = null;
        peer.wrongNode = null;
        peer.status = Peer.Status.CONNECTED;
        WritePacket p = peer.takeWaiting();
        while (p != null) {
            WritePacket next = p.next;
            p.next = null;
            onOutgoing(p);
            p = next;
        }
        node.fireConnected(c);
        node.onPeerStatusChanged();
    }

    /**
     * The peer's address reaches another node than the one it must be: the connection closes and,
     * as after any failure, the peer reconnects with back-off (the address may be corrected, or the
     * right node come back to it), while its requests fail as not connected. A warning when the
     * reason is new for the peer; every close is logged anyway.
     */
    private void onWrongNode(NioConnection c, String reached) {
        Peer peer = c.peer;
        String reason = "the address " + peer.address.getHostString() + ":" + peer.address.getPort()
                + (peer.expectedNodeId != 0 ? " of node " + peer.expectedNodeId : "") + " reaches " + reached;
        if (!reason.equals(peer.wrongNode)) {
            log.warn("{}: {}; nothing is sent there until the address is corrected", c, reason);
        }
        peer.wrongNode = reason;
        close(c, reason, null);
    }

    private static String nodeThere(int nodeId) {
        return nodeId > 0 ? "node " + nodeId : "another node";
    }

    /**
     * Closes a connection: fails its pending requests at once (with {@code error}, or a connection
     * error naming the reason), drops its queued packets and buffers and, on the client, schedules a
     * reconnect with back-off.
     */
    void close(NioConnection c, String reason, Throwable error) {
        if (c.isClosed()) {
            return;
        }
        c.markClosed(reason);
        if (stopping) {
            log.debug("{} closed: {}", c, reason);
        } else {
            log.info("{} closed: {}", c, reason);
        }
        if (c.key != null) {
            c.key.cancel();
        }
        closeQuietly(c.channel);
        connections.remove(c);
        connectionCount = connections.size();
        Peer peer = c.peer;
        if (peer == null) {
            node.onAcceptedClosed();
        }
        if (peer != null && peer.connection == c) {
            peer.connection = null;
            peer.lastFailure = reason;
            if (peer.status != Peer.Status.REMOVED) {
                peer.status = Peer.Status.NOT_CONNECTED;
                NioClientConfig cc = (NioClientConfig) config;
                peer.backoffMillis = peer.backoffMillis == 0 ? cc.reconnectMinBackoffMillis
                        : Math.min(peer.backoffMillis * 2, cc.reconnectMaxBackoffMillis);
                peer.nextConnectNanos = ts.nanoTime() + TimeUnit.MILLISECONDS.toNanos(peer.backoffMillis);
                lookUpAgain(peer);
            }
        }
        Throwable err = error != null ? error : new NetConnectionException(c + " closed: " + reason);
        // Packets still queued were never encoded, so never sent: they fail as not sent (a caller may
        // send them again), the requests already written or partly written as maybe delivered.
        // Taken out of the pending map first; every callback runs after the map is clean.
        ArrayList<WritePacket> unsent = null;
        WritePacket q;
        while ((q = c.pollQueue()) != null) {
            if (unsent == null) {
                unsent = new ArrayList<>();
            }
            unsent.add(q);
            if (q.type == PacketType.REQUEST && q.context == null) {
                pending.remove(key(c, q.seq));
            }
        }
        // Fail what waits on this connection before anything else can run and send to it again.
        if (!pending.isEmpty()) {
            scanConnection = c;
            pending.forEach(ofConnectionVisitor);
            scanConnection = null;
            failScratch(err);
        }
        // A given error (the client stopping, an encoding failure) says more than "not sent" and stays.
        Throwable unsentErr = error != null ? error
                : new NetNotSentException(c + " closed before the request was sent: " + reason);
        if (unsent != null) {
            for (WritePacket u : unsent) {
                failPacket(u, unsentErr);
            }
        }
        for (int i = c.outStart; i < c.outEnd; i++) {
            bufferPool.release(c.out[i]);
            c.out[i] = null;
        }
        c.outStart = 0;
        c.outEnd = 0;
        c.outBytes = 0;
        // Their room went back when their requests were failed above; only the links are left.
        for (WritePacket w = c.awaitingWriteHead; w != null; ) {
            WritePacket next = w.nextAwaitingWrite;
            releaseFlow(w);
            w.nextAwaitingWrite = null;
            w = next;
        }
        c.awaitingWriteHead = null;
        c.awaitingWriteTail = null;
        if (peer != null) {
            failWaiting(peer, unsentErr);
            node.onPeerStatusChanged();
        }
        if (c.handshakeDone) {
            node.fireClosed(c);
        }
    }

    /**
     * Requests waiting for their peer's connection (connecting, handshaking) whose deadline passed
     * fail now with a timeout, not when the connection is made or given up seconds later.
     */
    private void expireWaiting(Peer peer, long now) {
        List<WritePacket> expired = null;
        WritePacket prev = null;
        WritePacket p = peer.waitingHead;
        while (p != null) {
            WritePacket next = p.next;
            if (p.type == PacketType.REQUEST && p.context == null && p.deadlineNanos - now <= 0) {
                if (prev == null) {
                    peer.waitingHead = next;
                } else {
                    prev.next = next;
                }
                if (peer.waitingTail == p) {
                    peer.waitingTail = prev;
                }
                p.next = null;
                if (expired == null) {
                    expired = new ArrayList<>();
                }
                expired.add(p);
            } else {
                prev = p;
            }
            p = next;
        }
        if (expired != null) {
            // after the walk: a callback may send again, to this peer too
            for (WritePacket e : expired) {
                completeRequest(e, null, timeout(e, "while waiting for a connection", true));
                e.finish();
            }
        }
    }

    private void failWaiting(Peer peer, Throwable err) {
        WritePacket p = peer.takeWaiting();
        while (p != null) {
            WritePacket next = p.next;
            p.next = null;
            failPacket(p, err);
            p = next;
        }
    }

    private void failScratch(Throwable err) {
        ArrayList<WritePacket> list = scratch;
        if (list.isEmpty()) {
            return;
        }
        // Callbacks may send again and use the scratch list: work on a copy.
        WritePacket[] doomed = list.toArray(new WritePacket[0]);
        list.clear();
        for (WritePacket p : doomed) {
            completeRequest(p, null, err != null ? err
                    : p.encoded ? timeout(p, "waiting for the response", false)
                    : timeout(p, "in the write queue, before it could be sent", true));
            if (!p.encoded) {
                // It stays linked in its connection's write queue until the queue is walked, which a
                // connection that takes nothing does not do for its stall timeout: its body goes now,
                // or every timeout period would leave another window's worth of bodies behind.
                p.finish();
                p.body = null;
            }
        }
    }

    private NetTimeoutException timeout(WritePacket p, String where, boolean neverSent) {
        String to = p.connection != null ? String.valueOf(p.connection) : String.valueOf(p.peer);
        return new NetTimeoutException(p + " to " + to + " timed out " + where + (neverSent ? " (never sent)" : ""),
                neverSent);
    }

    private static void closeQuietly(SocketChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // nothing more to do
            }
        }
    }

    // ------------------------------------------------------------------ deadlines

    private void tick() {
        long now = ts.nanoTime();
        nextTickNanos = now + tickNanos;
        if (!pending.isEmpty()) {
            scanNowNanos = now;
            pending.forEach(expiredVisitor);
            failScratch(null);
        }
        for (int i = 0; i < peers.size(); i++) {
            if (peers.get(i).waitingHead != null) {
                expireWaiting(peers.get(i), now);
            }
        }
        for (int i = connections.size() - 1; i >= 0; i--) {
            if (i >= connections.size()) {
                continue; // a close above removed more than one
            }
            checkConnection(connections.get(i), now);
        }
        if (!stopping) {
            for (int i = 0; i < peers.size(); i++) {
                Peer peer = peers.get(i);
                if (peer.status == Peer.Status.NOT_CONNECTED && peer.connection == null && now - peer.nextConnectNanos >= 0) {
                    connect(peer);
                }
            }
        }
        if (now - nextMaintainNanos >= 0) {
            nextMaintainNanos = now + MAINTAIN_INTERVAL_NANOS;
            bufferPool.maintain();
        }
        if (stopping) {
            // A client does not wait for the pushes it is still handling (a watch listener that is
            // stuck held every close for the whole stop timeout): nobody needs their answers once
            // it has gone, and the server sends again what a closed connection did not acknowledge.
            boolean drained = (inFlightRequests == 0 || node instanceof NioClient) && pending.isEmpty()
                    && dirtyHead == null && allWritten();
            if (drained || now - stopDeadlineNanos >= 0) {
                exitLoop = true;
            }
        }
    }

    private boolean allWritten() {
        for (int i = 0; i < connections.size(); i++) {
            NioConnection c = connections.get(i);
            if (c.hasUnwritten() || c.queueHead != null) {
                return false;
            }
        }
        return true;
    }

    private void checkConnection(NioConnection c, long now) {
        if (c.connecting) {
            if (now - c.connectDeadlineNanos >= 0) {
                close(c, "connect timed out", null);
            }
            return;
        }
        // On the side that connected, bytes read count as progress too: the other side pauses its
        // reads on purpose while it owes this one a backlog, and sends it meanwhile.
        long progressNanos = c.peer != null && c.lastReadNanos - c.lastWriteProgressNanos > 0 ? c.lastReadNanos
                : c.lastWriteProgressNanos;
        if (c.hasUnwritten() && now - progressNanos > TimeUnit.MILLISECONDS.toNanos(config.writeStallTimeoutMillis)) {
            close(c, "the other side read nothing for " + config.writeStallTimeoutMillis + " ms while "
                    + c.outBytes + " bytes waited to be written", null);
            return;
        }
        if (c.peer == null) {
            NioServerConfig sc = (NioServerConfig) config;
            if (!c.handshakeDone && now - c.createdNanos > TimeUnit.MILLISECONDS.toNanos(sc.handshakeTimeoutMillis)) {
                close(c, "no handshake within " + sc.handshakeTimeoutMillis + " ms", null);
                return;
            }
            // A connection we stopped reading is not idle; the write-stall check above covers it.
            if (sc.idleTimeoutMillis > 0 && !c.readPaused && now - c.lastReadNanos > TimeUnit.MILLISECONDS.toNanos(sc.idleTimeoutMillis)) {
                close(c, "idle for " + sc.idleTimeoutMillis + " ms" + (c.reader.inFrame() ? " in the middle of a frame" : ""), null);
            }
        } else {
            long hb = ((NioClientConfig) config).heartbeatIntervalMillis;
            long hbNanos = TimeUnit.MILLISECONDS.toNanos(hb);
            // Sends alone prove nothing: a busy client keeps sending into a host that is gone, and
            // every request would wait out its timeout on a connection still called CONNECTED.
            if (hb > 0 && c.handshakeDone && !stopping && !c.heartbeatOut
                    && (now - c.lastSendNanos > hbNanos || now - c.lastReadNanos > hbNanos)) {
                sendHeartbeat(c, hb);
            }
        }
    }

    private void sendHeartbeat(NioConnection c, long intervalMillis) {
        long sentNanos = ts.nanoTime();
        c.heartbeatOut = true;
        WritePacket ping = WritePacket.request(Commands.PING, null);
        ping.connection = c;
        ping.decoder = IgnoreBodyDecoder.factory();
        ping.callbackOnIoThread = true;
        ping.flowBytes = -1;
        ping.deadlineNanos = ts.nanoTime() + TimeUnit.MILLISECONDS.toNanos(intervalMillis);
        ping.callback = new RpcCallback<Object>() {
            @Override
            public void onSuccess(Object body) {
                c.heartbeatOut = false;
            }

            @Override
            public void onFailure(Throwable error) {
                c.heartbeatOut = false;
                // bytes read since the ping went out: the other side lives, and the answer waits
                // behind others on a slow link
                if (error instanceof NetTimeoutException && c.lastReadNanos - sentNanos < 0) {
                    close(c, "nothing read within " + intervalMillis + " ms of a heartbeat", null);
                }
            }
        };
        enqueue(c, ping);
    }

    // ------------------------------------------------------------------ stop

    /** Stops taking new requests; exits once nothing is in flight or at the deadline. */
    void requestStop(long deadlineNanos) {
        execute(() -> {
            stopping = true;
            stopDeadlineNanos = deadlineNanos;
            nextTickNanos = ts.nanoTime(); // evaluate at once
            failWhatWaitsForUnreadyConnections();
        });
    }

    /**
     * Stopping: nothing connects again, so what waits for a connection that is not ready (still
     * connecting, or its handshake unanswered) can only wait out its timeout. It fails now instead:
     * a peer that accepted the connection and never answered held every stop for the whole stop
     * timeout. Requests on ready connections still get until the deadline to finish.
     */
    private void failWhatWaitsForUnreadyConnections() {
        StoppedException stopped = null;
        for (int i = connections.size() - 1; i >= 0; i--) {
            NioConnection c = connections.get(i);
            if (c.peer != null && (c.connecting || !c.handshakeDone)) {
                if (stopped == null) {
                    stopped = new StoppedException(node.describe() + " stopped before its connection to " + c.peer
                            + " was ready");
                }
                close(c, "stopping before the connection was ready", stopped);
            }
        }
        for (int i = 0; i < peers.size(); i++) {
            Peer peer = peers.get(i);
            if (peer.connection == null) {
                if (stopped == null) {
                    stopped = new StoppedException(node.describe() + " stopped while not connected to " + peer);
                }
                failWaiting(peer, stopped);
            }
        }
    }

    private void shutdown() {
        StoppedException stopped = new StoppedException(node.describe() + " stopped");
        try {
            for (int i = connections.size() - 1; i >= 0; i--) {
                if (i < connections.size()) {
                    close(connections.get(i), "stopped", stopped);
                }
            }
            for (Peer peer : peers) {
                peer.status = Peer.Status.REMOVED;
                failWaiting(peer, stopped);
            }
            if (!pending.isEmpty()) {
                scanNowNanos = Long.MAX_VALUE;
                pending.forEach((k, p) -> {
                    scratch.add(p);
                    return false;
                });
                failScratch(stopped);
            }
            try {
                selector.close();
            } catch (IOException ignored) {
                // nothing more to do
            }
        } finally {
            exited = true;
            failAfterExit();
            terminated.countDown();
        }
    }

    /** After the loop ended: fail whatever is still offered (callers raced with stop). */
    private synchronized void failAfterExit() {
        StoppedException stopped = null;
        Object o;
        while ((o = inbox.poll()) != null) {
            if (stopped == null) {
                stopped = new StoppedException(node.describe() + " stopped");
            }
            if (o instanceof WritePacket) {
                WritePacket p = (WritePacket) o;
                if (p.context == null) {
                    failPacket(p, stopped);
                } else {
                    p.finish();
                }
            } else if (o instanceof Adoption) {
                closeQuietly(((Adoption) o).channel);
                node.onAcceptedClosed();
            }
            // finished requests and control tasks have nothing left to do once the worker is gone
        }
    }

    // For tests: worker-owned counters read racily from the test thread, which polls them.

    int pendingConnectionsForTest() {
        return connections.size();
    }

    int inFlightRequestsForTest() {
        return inFlightRequests;
    }

    long droppedExpiredForTest() {
        return droppedExpiredRequests;
    }

    /** The capacity of the buffers the connections' unwritten bytes are held in. */
    long heldOutBufferBytesForTest() {
        long n = 0;
        for (int i = 0; i < connections.size(); i++) {
            NioConnection c = connections.get(i);
            for (int j = c.outStart; j < c.outEnd; j++) {
                n += c.out[j].capacity();
            }
        }
        return n;
    }

    long unwrittenBytesForTest() {
        long n = 0;
        for (int i = 0; i < connections.size(); i++) {
            n += connections.get(i).outBytes;
        }
        return n;
    }

    boolean awaitTermination(long timeoutNanos) throws InterruptedException {
        return terminated.await(timeoutNanos, TimeUnit.NANOSECONDS);
    }
}
