package io.poyang.net;

import io.poyang.buf.SharedBufferPool;
import io.poyang.codec.PbCallback;
import io.poyang.common.IntObjMap;
import io.poyang.common.LifeCycle;
import io.poyang.common.StoppedException;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;

/**
 * What {@link NioServer} and {@link NioClient} share: the I/O workers, the processors registered
 * per command (a client has them too, for server pushes), the bound on pending outgoing requests
 * and the send path. Both sides can send requests and one-way messages and answer them.
 */
public abstract class NioNode extends LifeCycle {

    private static final PoyangLog log = PoyangLogs.get(NioNode.class);

    final NioConfig config;
    final IntObjMap<ProcessorEntry> processors = new IntObjMap<>();
    final PendingLimiter limiter;
    final SharedBufferPool sharedPool;
    final Executor callbackExecutor;
    final UUID uuid = UUID.randomUUID();
    final Handshake localHandshake;
    NioWorker[] workers;
    private volatile ConnectionListener connectionListener;
    private final Object statusMonitor = new Object();

    NioNode(NioConfig config) {
        config.validate();
        this.config = config;
        this.limiter = new PendingLimiter(config.name, config.maxPendingRequests, config.maxPendingBytes);
        this.sharedPool = new SharedBufferPool(true, config.sharedPoolBytes);
        this.callbackExecutor = config.callbackExecutor != null ? config.callbackExecutor : ForkJoinPool.commonPool();
        this.localHandshake = new Handshake(Handshake.MAGIC, Handshake.MAJOR_VERSION, Handshake.MINOR_VERSION,
                uuid.getMostSignificantBits(), uuid.getLeastSignificantBits(), config.maxFrameBytes,
                config.maxInFlightRequests, config.maxInFlightBytes, config.nodeId, 0, config.clusterName);
        processors.put(Commands.PING, new ProcessorEntry(Commands.PING, new PingProcessor(), null));
    }

    /** Registers a processor that runs on the I/O thread: it must be quick and never block. */
    public void register(int command, ReqProcessor<?> processor) {
        register(command, processor, null);
    }

    /**
     * Registers a processor for {@code command}, run on {@code executor} (null: the I/O thread).
     * Register before start.
     */
    public synchronized void register(int command, ReqProcessor<?> processor, Executor executor) {
        if (status() != Status.NEW) {
            throw new IllegalStateException(describe() + ": register processors before start (command " + command + ")");
        }
        if (command <= 0 || command == Commands.HANDSHAKE) {
            throw new IllegalArgumentException("command " + command + " cannot have a processor (0 and negative "
                    + "numbers are invalid, 1 is the handshake)");
        }
        if (processor == null) {
            throw new NullPointerException("processor");
        }
        processors.put(command, new ProcessorEntry(command, processor, executor));
    }

    /**
     * Sets who is told when connections complete their handshake and close (see
     * {@link ConnectionListener}); null for nobody. Set before start.
     */
    public synchronized void setConnectionListener(ConnectionListener listener) {
        if (status() != Status.NEW) {
            throw new IllegalStateException(describe() + ": set the connection listener before start");
        }
        this.connectionListener = listener;
    }

    /** An accepted socket was closed (server side; a hook for {@link NioServer}'s connection count). */
    void onAcceptedClosed() {
    }

    void fireConnected(NioConnection c) {
        ConnectionListener l = connectionListener;
        if (l != null) {
            try {
                l.onConnected(c);
            } catch (Throwable e) {
                log.warn("{}: a connection listener failed on {}", describe(), c, e);
            }
        }
    }

    void fireClosed(NioConnection c) {
        ConnectionListener l = connectionListener;
        if (l != null) {
            try {
                l.onClosed(c);
            } catch (Throwable e) {
                log.warn("{}: a connection listener failed on {}", describe(), c, e);
            }
        }
    }

    /** The id this node sends in its handshakes. */
    public UUID uuid() {
        return uuid;
    }

    /**
     * Traffic since start, summed over the I/O workers (their own counters, read racily): for
     * metrics. Zeros before start.
     */
    public NetTraffic traffic() {
        NioWorker[] ws = workers;
        long read = 0;
        long written = 0;
        long packets = 0;
        long requests = 0;
        long responses = 0;
        int connections = 0;
        if (ws != null) {
            for (NioWorker w : ws) {
                read += w.bytesRead;
                written += w.bytesWritten;
                packets += w.packetsIn;
                requests += w.requestsIn;
                responses += w.responsesIn;
                connections += w.connectionCount;
            }
        }
        return new NetTraffic(read, written, packets, requests, responses, connections);
    }

    /**
     * I/O workers whose loop ended with an error (a bug, logged as an IMPOSSIBLE STATE): their
     * connections were closed and they take no new ones. For health checks and metrics; a node
     * with one should be restarted.
     */
    public int crashedWorkers() {
        NioWorker[] ws = workers;
        int n = 0;
        if (ws != null) {
            for (NioWorker w : ws) {
                if (w.hasCrashed()) {
                    n++;
                }
            }
        }
        return n;
    }

    /** I/O workers this node runs (its {@code ioThreads}); 0 before start. */
    public int workerCount() {
        NioWorker[] ws = workers;
        return ws == null ? 0 : ws.length;
    }

    /** Requests this node has sent and not yet seen completed. */
    public int pendingRequests() {
        return limiter.pendingRequests();
    }

    void startWorkers() throws IOException {
        warmUpSocketIo();
        NioWorker[] ws = new NioWorker[config.ioThreads];
        for (int i = 0; i < ws.length; i++) {
            ws[i] = new NioWorker(this, i);
        }
        workers = ws;
        for (NioWorker w : ws) {
            w.start();
        }
    }

    /** Set once a loopback connection has been written to and closed in this JVM (see {@link #warmUpSocketIo}). */
    private static volatile boolean socketIoWarmedUp;

    /**
     * Writes to and closes one loopback connection, once per JVM, while file descriptors are to be
     * had. The JDK initializes part of its socket code lazily, on the first write or close of a
     * socket, and that initialization opens a file descriptor of its own (JDK 17 on Linux: a socket
     * pair for its pre-close trick). A server whose first write came when connections had used up
     * every descriptor got an ExceptionInInitializerError there: its I/O worker died, every later
     * write failed with NoClassDefFoundError, and it stayed broken until restarted. Best effort: a
     * failure is only logged, and the worker still starts.
     */
    static void warmUpSocketIo() {
        if (socketIoWarmedUp) {
            return;
        }
        synchronized (NioNode.class) {
            if (socketIoWarmedUp) {
                return;
            }
            try (ServerSocketChannel listener = ServerSocketChannel.open()) {
                listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
                try (SocketChannel out = SocketChannel.open(listener.getLocalAddress());
                     SocketChannel in = listener.accept()) {
                    // a gathering write and a read, as the workers do them (not blocking: it is only
                    // the code path that matters, not whether the byte has arrived yet)
                    out.write(new ByteBuffer[]{ByteBuffer.allocateDirect(1)});
                    in.configureBlocking(false);
                    in.read(ByteBuffer.allocateDirect(1));
                }
                socketIoWarmedUp = true;
            } catch (IOException | RuntimeException e) {
                log.warn("could not warm up the JDK's socket code on a loopback connection ({}); should this process"
                        + " run out of file descriptors before its first write, its I/O workers may fail", e.toString());
            }
        }
    }

    /** Lets the workers finish what is in flight until the stop timeout, then closes everything. */
    void stopWorkers() throws InterruptedException {
        NioWorker[] ws = workers;
        if (ws == null) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.stopTimeoutMillis);
        for (NioWorker w : ws) {
            w.requestStop(deadline);
        }
        for (NioWorker w : ws) {
            if (Thread.currentThread() == w.thread) {
                continue; // stop() called from a callback on this worker: it exits when the callback returns
            }
            // the deadline plus a margin for closing connections and failing what is left
            long wait = deadline - System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            if (!w.awaitTermination(Math.max(wait, 1))) {
                log.warn("{} did not stop in time", w.thread.getName());
            }
        }
    }

    final <T> void send(NioWorker worker, Peer peer, NioConnection connection, WritePacket packet,
                        DecoderFactory<T> decoder, long timeoutMillis, CallOptions options, RpcCallback<T> callback) {
        if (packet.type != PacketType.REQUEST) {
            throw new IllegalArgumentException("sendRequest needs a request packet, got " + packet);
        }
        if (decoder == null || callback == null || options == null) {
            throw new NullPointerException("decoder, options and callback are required");
        }
        checkAccepting(timeoutMillis);
        packet.decoder = decoder;
        @SuppressWarnings("unchecked")
        RpcCallback<Object> cb = (RpcCallback<Object>) callback;
        packet.callback = cb;
        packet.callbackOnIoThread = options.callbackOnIoThread;
        packet.freeRoomWhenWritten = options.freeRoomWhenWritten;
        handOver(worker, peer, connection, packet, timeoutMillis, options.blockWhenFull);
    }

    final void sendOneWay(NioWorker worker, Peer peer, NioConnection connection, WritePacket packet,
                          long timeoutMillis, boolean blockWhenFull) {
        if (packet.type != PacketType.ONE_WAY) {
            throw new IllegalArgumentException("sendOneWay needs a one-way packet, got " + packet);
        }
        checkAccepting(timeoutMillis);
        handOver(worker, peer, connection, packet, timeoutMillis, blockWhenFull);
    }

    private void checkAccepting(long timeoutMillis) {
        if (!isRunning()) {
            throw new StoppedException(describe() + " is " + status() + "; it sends nothing more");
        }
        if (timeoutMillis <= 0) {
            throw new IllegalArgumentException("timeoutMillis must be positive: " + timeoutMillis);
        }
    }

    private boolean isOwnIoThread() {
        NioWorker[] ws = workers;
        if (ws != null) {
            for (NioWorker w : ws) {
                if (Thread.currentThread() == w.thread) {
                    return true;
                }
            }
        }
        return false;
    }

    private void handOver(NioWorker worker, Peer peer, NioConnection connection, WritePacket packet,
                          long timeoutMillis, boolean blockWhenFull) {
        if (packet.deadlineNanos != 0 || packet.next != null) {
            throw new IllegalStateException(packet + " was already sent; make a new packet for each send");
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        // An estimate: the header is small next to any body that matters for the byte bound.
        int size = (packet.body == null ? 0 : packet.body.encodedSize()) + 32;
        // One of this node's I/O threads must not wait for room: only they read the answers that
        // free it, so with one worker the wait could only end at the deadline, the worker frozen.
        boolean onIoThread = blockWhenFull && isOwnIoThread();
        limiter.acquire(size, blockWhenFull && !onIoThread, deadline, onIoThread);
        packet.flowBytes = size;
        packet.deadlineNanos = deadline;
        packet.peer = peer;
        packet.connection = connection;
        if (Thread.currentThread() == worker.thread) {
            worker.onOutgoing(packet);
        } else {
            worker.offer(packet);
        }
    }

    void onPeerStatusChanged() {
        synchronized (statusMonitor) {
            statusMonitor.notifyAll();
        }
    }

    /** Waits on status changes (peers connecting, ...) up to {@code nanos}. */
    void awaitStatusChange(long nanos) throws InterruptedException {
        synchronized (statusMonitor) {
            TimeUnit.NANOSECONDS.timedWait(statusMonitor, Math.max(1, Math.min(nanos, TimeUnit.MILLISECONDS.toNanos(50))));
        }
    }

    @Override
    protected String describe() {
        return config.name;
    }

    /** Answers {@link Commands#PING} with an empty response, on the I/O thread. */
    private static final class PingProcessor implements ReqProcessor<Object> {
        @Override
        public PbCallback<Object> createDecoder() {
            return IgnoreBodyDecoder.<Object>factory().create();
        }

        @Override
        public WritePacket process(ReqContext context, Object body) {
            return WritePacket.response(null);
        }
    }
}
