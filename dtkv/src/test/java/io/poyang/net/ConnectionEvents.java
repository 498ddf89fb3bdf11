package io.poyang.net;

/** For tests in other packages: tells a node's connection listener a connection came back, as its I/O thread would. */
public final class ConnectionEvents {

    private ConnectionEvents() {
    }

    /** Calls the node's listener's {@code onConnected} (with no connection: the clients' listeners do not look at it). */
    public static void fireReconnected(NioNode node) {
        node.fireConnected(null);
    }
}
