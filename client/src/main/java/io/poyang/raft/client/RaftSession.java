package io.poyang.raft.client;

import io.poyang.codec.Encodable;
import io.poyang.net.DecoderFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An exactly-once session of a {@link RaftClient} ({@link RaftClient#newSession()}): a random id
 * and a counter that numbers its writes 1, 2, 3 … Each write is applied at most once even when it
 * is sent several times; the client resends it after no answer or a lost connection until its
 * deadline. To retry a write after it failed with {@link RaftOutcomeUnknownException}, send it again
 * with {@link #retry} and the same seq ({@link #lastSeq()} right after the write, or keep it). The
 * servers remember a session's last {@code sessionWindow} writes (64 by default) for
 * {@code sessionExpiryMillis} (1 h) after its last write. Thread-safe.
 */
public final class RaftSession {

    private final RaftClient client;
    private final long id;
    private final AtomicLong seq = new AtomicLong();

    RaftSession(RaftClient client, long id) {
        this.client = client;
        this.id = id;
    }

    public long id() {
        return id;
    }

    /** The seq of the latest write started in this session (0 before the first). */
    public long lastSeq() {
        return seq.get();
    }

    /** Writes {@code body} under the next seq (see {@link RaftClient#write(int, int, Encodable, DecoderFactory, long, long, long)}). */
    public <T> CompletableFuture<T> write(int groupId, int bizType, Encodable body, DecoderFactory<T> resultDecoder,
                                          long timeoutMillis) {
        return client.write(groupId, bizType, body, resultDecoder, timeoutMillis, id, seq.incrementAndGet());
    }

    /** Sends the write numbered {@code seq} again (the same body): applied once, the first result returned. */
    public <T> CompletableFuture<T> retry(long seq, int groupId, int bizType, Encodable body,
                                          DecoderFactory<T> resultDecoder, long timeoutMillis) {
        if (seq <= 0 || seq > this.seq.get()) {
            throw new IllegalArgumentException("seq " + seq + " was not written in session " + id + " (its writes are 1.."
                    + this.seq.get() + ")");
        }
        return client.write(groupId, bizType, body, resultDecoder, timeoutMillis, id, seq);
    }

    @Override
    public String toString() {
        return "RaftSession(" + id + ", last seq " + seq.get() + ")";
    }
}
