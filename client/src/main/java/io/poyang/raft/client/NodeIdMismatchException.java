package io.poyang.raft.client;

import io.poyang.common.PoyangException;

/**
 * A node answered from an address that the client's server list gives another node id: the list
 * is wrong (most often addresses listed without ids, "host:port,host:port", which numbers them 1,
 * 2, 3 … in order, for a cluster whose ids are not exactly that). Redirects and node commands
 * would go to the wrong machine, so the call fails instead. Nothing was applied by it.
 */
public class NodeIdMismatchException extends PoyangException {

    private final int listedId;
    private final int answeredId;

    public NodeIdMismatchException(int listedId, int answeredId, String address) {
        super("the node at " + address + " says it is node " + answeredId + ", but this client's server list gives"
                + " that address id " + listedId + ": list the servers with their ids (" + answeredId + "=" + address
                + ",...); addresses without ids are numbered 1, 2, 3 ... in the order given");
        this.listedId = listedId;
        this.answeredId = answeredId;
    }

    /** The id the client's list gives the address. */
    public int listedId() {
        return listedId;
    }

    /** The id the node at the address has. */
    public int answeredId() {
        return answeredId;
    }
}
