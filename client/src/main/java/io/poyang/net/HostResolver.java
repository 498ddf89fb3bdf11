package io.poyang.net;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Turns a peer's host (a name, or an address literal) into the address to connect to. A client
 * asks it when a peer is added and again, off its I/O threads, each time a connection to the peer
 * fails or closes: a node whose name moved to another address (a replaced machine, a rescheduled
 * container) is reached at the new one without restarting anything, and a name that did not
 * resolve yet when the peer was added is tried again. The system resolver caches answers for
 * {@code networkaddress.cache.ttl} (30 s by default), so a move is seen within that.
 */
public interface HostResolver {

    /** The JDK's resolver ({@link InetAddress#getByName}). */
    HostResolver SYSTEM = InetAddress::getByName;

    /** The address of {@code host}; may block (it runs on a thread of its own, never an I/O thread). */
    InetAddress resolve(String host) throws UnknownHostException;
}
