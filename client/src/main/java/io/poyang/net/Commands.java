package io.poyang.net;

/**
 * Command numbers (field 2 of a packet). Each area owns a range so modules can add commands
 * without colliding: 1-99 net, 100-199 raft replication, 200-299 raft admin, 300-399 DtKV.
 */
public final class Commands {

    /** The first packet of every connection; body: Handshake. Handled by the net layer itself. */
    public static final int HANDSHAKE = 1;
    /** Liveness probe with an empty body; answered by every NioServer and NioClient. */
    public static final int PING = 2;
    /** Returns its body unchanged; registered with {@link EchoProcessor} (tests and the rpc benchmark). */
    public static final int ECHO = 3;

    public static final int NET_FIRST = 1;
    public static final int NET_LAST = 99;
    public static final int RAFT_REPLICATION_FIRST = 100;
    public static final int RAFT_REPLICATION_LAST = 199;
    public static final int RAFT_ADMIN_FIRST = 200;
    public static final int RAFT_ADMIN_LAST = 299;
    public static final int DTKV_FIRST = 300;
    public static final int DTKV_LAST = 399;

    private Commands() {
    }
}
