package io.poyang.server.node;

/**
 * A node cannot start: a port is in use, the data directory is locked by another process or belongs
 * to another node id or a newer Poyang, the log is corrupted below its commit index. The message
 * says which, where, and what to do; nothing on disk was changed to get here.
 */
public class NodeStartException extends RuntimeException {

    public NodeStartException(String message) {
        super(message);
    }

    public NodeStartException(String message, Throwable cause) {
        super(message, cause);
    }
}
