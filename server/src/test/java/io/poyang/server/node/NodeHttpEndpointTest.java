package io.poyang.server.node;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The HTTP endpoint serves exactly {@code /metrics} and {@code /health} (404 for any other path), and
 * stays usable when clients misbehave: one that stops in the middle of its request does not hold up
 * {@code /health} for others, and is cut after the exchange limit.
 */
class NodeHttpEndpointTest {

    @TempDir
    Path tmp;
    private InProcessNodes cluster;
    private final List<Socket> stalled = new ArrayList<>();

    @AfterEach
    void cleanUp() throws IOException {
        for (Socket s : stalled) {
            s.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /** A client that sent the start of a request line and then nothing more. */
    private Socket stall(int port) throws IOException {
        Socket s = new Socket("127.0.0.1", port);
        stalled.add(s);
        s.getOutputStream().write("GET /health HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        return s;
    }

    /** GET /health with a short read timeout: its body, or a failure saying the endpoint hung. */
    private static String health(int port) throws IOException {
        HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + port + "/health").openConnection();
        c.setConnectTimeout(3_000);
        c.setReadTimeout(3_000);
        int status;
        try {
            status = c.getResponseCode();
        } catch (SocketTimeoutException e) {
            throw new AssertionError("/health did not answer within 3 s while another client is stalled", e);
        }
        assertTrue(status == 200 || status == 503, "status " + status);
        try (InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream()) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            in.transferTo(b);
            return b.toString(StandardCharsets.UTF_8);
        }
    }

    /** GET {@code pathAndQuery}: the status and the body (of an error status too). */
    private static String[] get(int port, String pathAndQuery) throws IOException {
        HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + port + pathAndQuery).openConnection();
        c.setConnectTimeout(3_000);
        c.setReadTimeout(10_000);
        int status = c.getResponseCode();
        try (InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream()) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            in.transferTo(b);
            return new String[]{String.valueOf(status), b.toString(StandardCharsets.UTF_8)};
        }
    }

    @Test
    void onlyTheExactPathsAreServedAndAnyOtherGets404NamingThem() throws Exception {
        cluster = new InProcessNodes(tmp, 1, Collections.singletonMap("metricsPort", "0"));
        int port = cluster.nodes().get(0).metricsPort();
        for (String wrong : new String[]{"/healthz", "/health/foo", "/health/", "/metricsx", "/metrics/x", "/",
                "/nothing"}) {
            String[] r = get(port, wrong);
            assertEquals("404", r[0], wrong + " answered " + r[0] + ": " + r[1]);
            assertEquals("not found; this endpoint serves /metrics and /health\n", r[1], wrong);
        }
        String[] health = get(port, "/health?verbose=1");
        assertTrue(health[0].equals("200") || health[0].equals("503"), "/health with a query: " + health[0]);
        assertTrue(health[1].contains("\"node\":1"), health[1]);
        String[] metrics = get(port, "/metrics?name=poyang_raft_term");
        assertEquals("200", metrics[0], metrics[1]);
        assertTrue(metrics[1].contains("# TYPE poyang_raft_term gauge"), metrics[1]);
    }

    @Test
    void aClientStalledMidRequestDoesNotHoldUpHealth() throws Exception {
        cluster = new InProcessNodes(tmp, 1, Collections.singletonMap("metricsPort", "0"));
        int port = cluster.nodes().get(0).metricsPort();
        stall(port);
        String body = health(port);
        assertTrue(body.contains("\"node\":1"), body);
    }

    @Test
    void anExchangeOverTheLimitIsCutAndItsThreadServesAgain() throws Exception {
        cluster = new InProcessNodes(tmp, 1, Collections.emptyMap());
        NodeHttpEndpoint http = new NodeHttpEndpoint(cluster.nodes().get(0), "127.0.0.1", 0, 300);
        http.start();
        try {
            int port = http.port();
            // more stalled clients than threads: without the limit every thread stays blocked for good
            List<Socket> clients = new ArrayList<>();
            for (int i = 0; i < NodeHttpEndpoint.EXCHANGE_THREADS + 1; i++) {
                clients.add(stall(port));
            }
            for (Socket s : clients) {
                s.setSoTimeout(4_000);   // the deadline of the wait for the server to close it
                try {
                    int b = s.getInputStream().read();
                    assertTrue(b == -1, "a stalled request was answered instead of cut: " + b);
                } catch (SocketTimeoutException e) {
                    fail("a stalled request was not cut within 4 s (limit 300 ms)");
                } catch (SocketException e) {
                    // reset by the server: cut too
                }
            }
            String body = health(port);
            assertTrue(body.contains("\"node\":1"), body);
        } finally {
            http.stop();
        }
    }
}
