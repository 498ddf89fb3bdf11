package io.poyang.net;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.fail;

/** Starting servers and clients on loopback, and waiting for conditions with deadlines. */
final class NetTestSupport {

    private NetTestSupport() {
    }

    static NioServerConfig serverConfig() {
        NioServerConfig c = new NioServerConfig();
        c.host = "127.0.0.1";
        c.port = 0;
        c.ioThreads = 1;
        c.stopTimeoutMillis = 1000;
        return c;
    }

    static NioServer startEchoServer(NioServerConfig c) {
        NioServer s = new NioServer(c);
        s.register(Commands.ECHO, new EchoProcessor());
        s.start();
        return s;
    }

    static NioClientConfig clientConfig(NioServer... servers) {
        NioClientConfig c = new NioClientConfig();
        for (NioServer s : servers) {
            c.servers.add("127.0.0.1:" + s.port());
        }
        c.stopTimeoutMillis = 1000;
        return c;
    }

    static NioClient startClient(NioClientConfig c) throws InterruptedException {
        NioClient client = new NioClient(c);
        client.start();
        client.waitForConnected(5000);
        return client;
    }

    static void stopQuietly(io.poyang.common.LifeCycle... things) {
        for (io.poyang.common.LifeCycle t : things) {
            if (t != null) {
                t.stop();
            }
        }
    }

    /** Polls {@code condition} until it holds; fails with {@code what} after the timeout. */
    static void waitUntil(String what, long timeoutMillis, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out after " + timeoutMillis + " ms waiting for: " + what);
            }
            Thread.sleep(2); // polling interval of a deadline-bound wait, not a synchronisation sleep
        }
    }

    static WritePacket echo(byte[] data) {
        return WritePacket.request(Commands.ECHO, new BytesBody(data));
    }
}
