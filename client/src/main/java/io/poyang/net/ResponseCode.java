package io.poyang.net;

/** Field 4 of a response packet (docs/proto/packet.proto, enum ResponseCode). */
public final class ResponseCode {

    public static final int SUCCESS = 0;
    /** A bound on requests or bytes in flight is full: retry later or slow down. */
    public static final int FLOW_CONTROL = 1;
    /** The request's deadline passed before it was processed. */
    public static final int TIMEOUT = 2;
    /** No processor is registered for the command. */
    public static final int COMMAND_NOT_FOUND = 3;
    /** The body could not be decoded. */
    public static final int BAD_REQUEST = 4;
    /** An unexpected error on the remote side. */
    public static final int SYS_ERROR = 5;
    /** The remote side is shutting down. */
    public static final int STOPPING = 6;
    /** A business failure: field 5 holds the command's own code. */
    public static final int BIZ_ERROR = 7;
    /** Raft: this node is not the leader of the group; field 5 holds the leader's node id (0: unknown). */
    public static final int NOT_LEADER = 8;
    /**
     * The handshake named a node id other than the server's: the address the client has for that
     * node reaches another one. The server closes the connection after this answer.
     */
    public static final int WRONG_NODE = 9;
    /**
     * The handshake named another cluster than the server's (both name one): the address the client
     * has reaches a node of another cluster. Field 5 holds the server's node id; the message names
     * both clusters. The server closes the connection after this answer.
     */
    public static final int WRONG_CLUSTER = 10;

    private ResponseCode() {
    }

    public static String name(int code) {
        switch (code) {
            case SUCCESS:
                return "SUCCESS";
            case FLOW_CONTROL:
                return "FLOW_CONTROL";
            case TIMEOUT:
                return "TIMEOUT";
            case COMMAND_NOT_FOUND:
                return "COMMAND_NOT_FOUND";
            case BAD_REQUEST:
                return "BAD_REQUEST";
            case SYS_ERROR:
                return "SYS_ERROR";
            case STOPPING:
                return "STOPPING";
            case BIZ_ERROR:
                return "BIZ_ERROR";
            case NOT_LEADER:
                return "NOT_LEADER";
            case WRONG_NODE:
                return "WRONG_NODE";
            case WRONG_CLUSTER:
                return "WRONG_CLUSTER";
            default:
                return "CODE_" + code;
        }
    }
}
