package io.poyang.net;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Turns a peer's host name into the address to connect to. A client asks it on its lookup thread
 * (never an I/O thread, nor the thread adding the peer) when a peer given by name is added, and
 * again each time a connection to the peer fails or closes: a node whose name moved to another
 * address (a replaced machine, a rescheduled container) is reached at the new one without
 * restarting anything, and a name that did not resolve yet when the peer was added is tried again.
 * A host given as an IP address is never looked up. The system resolver caches answers for
 * {@code networkaddress.cache.ttl} (30 s by default), so a move is seen within that.
 */
public interface HostResolver {

    /** The JDK's resolver ({@link InetAddress#getByName}). */
    HostResolver SYSTEM = InetAddress::getByName;

    /**
     * The address of {@code host}; may block (it runs on the lookup thread). Null counts as a failed
     * lookup (the peer keeps the address it has).
     */
    InetAddress resolve(String host) throws UnknownHostException;
}
