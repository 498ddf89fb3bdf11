package io.poyang.benchmark.rpc;

import io.poyang.benchmark.BenchOptions;
import io.poyang.benchmark.CleanupSteps;
import io.poyang.benchmark.FailureCause;
import io.poyang.benchmark.OpCallback;
import io.poyang.benchmark.Outcome;
import io.poyang.benchmark.Scenario;
import io.poyang.benchmark.UsageException;
import io.poyang.net.BytesBody;
import io.poyang.net.BytesDecoder;
import io.poyang.net.CallOptions;
import io.poyang.net.Commands;
import io.poyang.net.EchoProcessor;
import io.poyang.net.NetTimeoutException;
import io.poyang.net.NioClient;
import io.poyang.net.NioClientConfig;
import io.poyang.net.NioServer;
import io.poyang.net.NioServerConfig;
import io.poyang.net.Peer;
import io.poyang.net.RpcCallback;
import io.poyang.net.WritePacket;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * {@code --op rpc}: an NioServer and NioClients in this process over loopback; each client has one
 * connection and sends ECHO requests carrying --value-size bytes, which the server answers on its
 * I/O thread. Asynchronous callbacks run on the client's I/O thread, which also sends the next
 * request, so a busy client never wakes a selector.
 */
public final class RpcScenario implements Scenario {

    /** Each echo gives up after this long. */
    static final long TIMEOUT_MILLIS = 5_000;

    private NioServer server;
    private NioClient[] clients;
    private Peer[] peers;
    private BytesBody body;
    private int valueSize;

    @Override
    public void setUp(BenchOptions o) throws Exception {
        if (!o.servers.isEmpty()) {
            throw new UsageException("--op rpc runs its own echo server in this process; --servers is for the put/get ops");
        }
        valueSize = o.valueSize;
        byte[] bytes = new byte[o.valueSize];
        new Random(1).nextBytes(bytes);
        body = new BytesBody(bytes);

        NioServerConfig sc = new NioServerConfig();
        sc.name = "BenchServer";
        sc.host = "127.0.0.1";
        sc.port = 0;
        server = new NioServer(sc);
        server.register(Commands.ECHO, new EchoProcessor());
        server.start();

        int n = o.sync ? Math.min(o.clients, o.threads) : o.clients;
        clients = new NioClient[n];
        peers = new Peer[n];
        for (int i = 0; i < n; i++) {
            NioClientConfig cc = new NioClientConfig();
            cc.name = "BenchClient" + i;
            cc.servers.add("127.0.0.1:" + server.port());
            cc.maxPendingRequests = Math.max(cc.maxPendingRequests, o.maxPending + 1000);
            clients[i] = new NioClient(cc);
            clients[i].start();
            clients[i].waitForConnected(5_000);
            peers[i] = clients[i].peers().get(0);
        }
    }

    @Override
    public int clients() {
        return clients.length;
    }

    @Override
    public void issue(int client, OpCallback callback) {
        clients[client].sendRequest(peers[client], WritePacket.request(Commands.ECHO, body), BytesDecoder.FACTORY,
                TIMEOUT_MILLIS, CallOptions.IO_THREAD_CALLBACK, new EchoCallback(callback, valueSize));
    }

    @Override
    public void call(int thread) throws Exception {
        int c = thread % clients.length;
        byte[] back = clients[c].sendRequest(peers[c], WritePacket.request(Commands.ECHO, body), BytesDecoder.FACTORY,
                TIMEOUT_MILLIS).get(TIMEOUT_MILLIS + 1000, TimeUnit.MILLISECONDS);
        if (back.length != valueSize) {
            throw new IllegalStateException("echo returned " + back.length + " bytes, sent " + valueSize);
        }
    }

    /** Adapts the net callback to the driver's; checks the echo came back whole. */
    private static final class EchoCallback implements RpcCallback<byte[]> {
        private final OpCallback callback;
        private final int expectedBytes;

        EchoCallback(OpCallback callback, int expectedBytes) {
            this.callback = callback;
            this.expectedBytes = expectedBytes;
        }

        @Override
        public void onSuccess(byte[] echoed) {
            if (echoed.length == expectedBytes) {
                callback.succeeded();
            } else {
                callback.failed(Outcome.FAILED, "echo of the wrong length");
            }
        }

        @Override
        public void onFailure(Throwable error) {
            callback.failed(error instanceof NetTimeoutException ? Outcome.TIMEOUT : Outcome.FAILED, FailureCause.of(error));
        }
    }

    @Override
    public Map<String, Object> extras(double measuredSeconds) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("server_io_threads", new NioServerConfig().ioThreads);
        m.put("java", System.getProperty("java.version"));
        return m;
    }

    /** Every step runs even when one before it failed: a client that fails to stop must not leave the server running. */
    @Override
    public void close() throws Exception {
        CleanupSteps steps = new CleanupSteps();
        if (clients != null) {
            for (NioClient c : clients) {
                if (c != null) {
                    steps.run(c::stop);
                }
            }
        }
        if (server != null) {
            steps.run(server::stop);
        }
        steps.finish();
    }
}
