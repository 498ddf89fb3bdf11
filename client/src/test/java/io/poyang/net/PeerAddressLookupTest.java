package io.poyang.net;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

/**
 * A peer given by host name follows the name: after a connection fails or closes, the name is
 * looked up again, off the I/O threads, and the next connection goes where it points now. A name
 * that does not resolve when the peer is added is tried again at each reconnect.
 */
class PeerAddressLookupTest {

    private static final String NAME = "node-a.poyang.test";

    private NioServer first;
    private NioServer second;
    private NioClient client;

    @AfterEach
    void stop() {
        stopQuietly(client, first, second);
    }

    /** Resolves only {@link #NAME}, to whatever the test sets; records the threads it ran on. */
    private static final class TestResolver implements HostResolver {
        final AtomicReference<InetAddress> nameIsAt = new AtomicReference<>();
        final List<String> threads = new CopyOnWriteArrayList<>();
        final List<String> hosts = new CopyOnWriteArrayList<>();

        @Override
        public InetAddress resolve(String host) throws UnknownHostException {
            threads.add(Thread.currentThread().getName());
            hosts.add(host);
            InetAddress a = nameIsAt.get();
            if (!NAME.equals(host) || a == null) {
                throw new UnknownHostException(host + ": no such name in this test");
            }
            return a;
        }
    }

    private static NioClient startClient(HostResolver resolver) {
        NioClientConfig cc = new NioClientConfig();
        cc.stopTimeoutMillis = 1000;
        cc.reconnectMinBackoffMillis = 20;
        cc.reconnectMaxBackoffMillis = 100;
        cc.hostResolver = resolver;
        NioClient c = new NioClient(cc);
        c.start();
        return c;
    }

    private static NioServer startServerAt(String ip, int port) {
        NioServerConfig sc = serverConfig();
        sc.host = ip;
        sc.port = port;
        return startEchoServer(sc);
    }

    @Test
    void aNameThatMovesToAnotherAddressIsFollowedAfterTheConnectionCloses() throws Exception {
        TestResolver resolver = new TestResolver();
        resolver.nameIsAt.set(InetAddress.getByName("127.0.0.1"));
        first = startServerAt("127.0.0.1", 0);
        int port = first.port();
        client = startClient(resolver);
        Peer peer = client.addPeer(NAME + ":" + port);
        waitUntil("the first connection", 5000, peer::isConnected);
        assertArrayEquals(new byte[]{1}, echoVia(peer, new byte[]{1}));

        // the node moves: same name and port, another address; the old one answers no more
        resolver.nameIsAt.set(InetAddress.getByName("127.0.0.2"));
        second = startServerAt("127.0.0.2", port);
        first.stop();
        try {
            waitUntil("a connection to the name's new address", 10_000,
                    () -> peer.isConnected() && peer.address().getAddress().getHostAddress().equals("127.0.0.2"));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + " (" + peer.address() + ", " + peer.status() + ", "
                    + peer.lastFailure() + ", lookups on " + resolver.threads + ")", e);
        }
        assertArrayEquals(new byte[]{2}, echoVia(peer, new byte[]{2}));
        assertEquals(1, second.traffic().requestsReceived(), "the echo went to the new address");
        assertEquals(NAME + ":" + port, peer.toString(), "the peer keeps its name");
        for (String t : resolver.threads.subList(1, resolver.threads.size())) {
            assertEquals("poyang-net-host-lookup", t, "a lookup after the first ran on " + t);
        }
    }

    @Test
    void aNameThatDoesNotResolveYetIsTriedAgainUntilItDoes() throws Exception {
        TestResolver resolver = new TestResolver();
        first = startServerAt("127.0.0.1", 0);
        client = startClient(resolver);
        Peer peer = client.addPeer(NAME + ":" + first.port());
        assertTrue(peer.address().isUnresolved());
        waitUntil("the failed lookup to be reported", 5000,
                () -> peer.lastFailure() != null && peer.lastFailure().startsWith("cannot resolve " + NAME));
        assertNotEquals(Peer.Status.CONNECTED, peer.status());
        Throwable t = causeOf(client.sendRequest(peer, echo(new byte[]{1}), BytesDecoder.FACTORY, 2000), 5000);
        assertInstanceOf(NetException.class, t, "a request to a peer without an address fails");

        resolver.nameIsAt.set(InetAddress.getByName("127.0.0.1"));   // the name is published
        waitUntil("a connection once the name resolves", 10_000, peer::isConnected);
        assertArrayEquals(new byte[]{3}, echoVia(peer, new byte[]{3}));
    }

    @Test
    void addingAPeerLooksNothingUpOnTheCallersThreadAndAnAddressLiteralNeverAtAll() throws Exception {
        // an admin command adding a node runs on a server's I/O thread: a slow name server must not stall it
        TestResolver resolver = new TestResolver();
        resolver.nameIsAt.set(InetAddress.getByName("127.0.0.1"));
        first = startServerAt("127.0.0.1", 0);
        client = startClient(resolver);
        Peer byName = client.addPeer(NAME + ":" + first.port());
        Peer byAddress = client.addPeer("127.0.0.1:" + first.port());
        waitUntil("both connections", 5000, () -> byName.isConnected() && byAddress.isConnected());
        assertFalse(resolver.threads.isEmpty(), "the name was looked up");
        for (String t : resolver.threads) {
            assertEquals("poyang-net-host-lookup", t, "a lookup ran on " + t);
        }
        assertFalse(resolver.hosts.contains("127.0.0.1"), "an address literal is looked up nowhere: " + resolver.hosts);
        assertEquals("127.0.0.1", byAddress.address().getAddress().getHostAddress());
        assertSame(byName, client.addPeer(NAME + ":" + first.port()), "the same host and port is the same peer");
    }

    @Test
    void aResolverThatAnswersNoAddressConnectsNowhere() throws Exception {
        // new InetSocketAddress(null, port) is the wildcard address, which a connect takes for this machine
        first = startServerAt("127.0.0.1", 0);
        client = startClient(host -> null);
        Peer peer = client.addPeer(NAME + ":" + first.port());
        waitUntil("the empty answer to be reported", 5000,
                () -> peer.lastFailure() != null && peer.lastFailure().contains("found no address"));
        assertNotEquals(Peer.Status.CONNECTED, peer.status());
        assertTrue(peer.address().isUnresolved(), "no address: " + peer.address());
        assertEquals(0, first.traffic().requestsReceived());
    }

    @Test
    void aResolverThatThrowsAnErrorIsAskedAgain() throws Exception {
        first = startServerAt("127.0.0.1", 0);
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        InetAddress local = InetAddress.getByName("127.0.0.1");
        client = startClient(host -> {
            if (calls.incrementAndGet() == 1) {
                throw new AssertionError("a broken resolver");
            }
            return local;
        });
        Peer peer = client.addPeer(NAME + ":" + first.port());
        waitUntil("a connection after the resolver recovered", 10_000, peer::isConnected);
        assertTrue(calls.get() >= 2, "asked again after the error");
    }

    private byte[] echoVia(Peer peer, byte[] data) throws Exception {
        return (byte[]) client.sendRequest(peer, echo(data), BytesDecoder.FACTORY, 5000).get();
    }
}
