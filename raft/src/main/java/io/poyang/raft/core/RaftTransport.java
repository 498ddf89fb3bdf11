package io.poyang.raft.core;

import io.poyang.codec.Encodable;
import io.poyang.net.DecoderFactory;
import io.poyang.net.RpcCallback;

/**
 * How a group talks to the other nodes of its group: the server's one replication connection per
 * peer node, shared by all groups (with the fault injector of the tests in between).
 */
public interface RaftTransport {

    /**
     * Sends a request to node {@code nodeId}. The callback runs exactly once, on an I/O thread (it
     * must be quick and must not block), also when the request cannot even be sent.
     */
    <T> void send(int nodeId, int command, Encodable body, DecoderFactory<T> decoder, long timeoutMillis,
                  RpcCallback<T> callback);
}
