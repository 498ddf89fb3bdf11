package io.poyang.server.node;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.raft.core.RaftGroup;
import io.poyang.server.Json;
import io.poyang.server.metrics.NodeMetrics;
import io.poyang.server.metrics.PrometheusText;

import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The node's plain-HTTP port (JDK {@code com.sun.net.httpserver}, one daemon thread):
 * {@code GET /metrics} in Prometheus text format ({@link NodeMetrics}) and {@code GET /health}, a
 * small JSON document with status 200 when every group on the node runs and knows its leader, 503
 * otherwise (stopping, a group failed or leaderless) — for load balancers and scripts.
 */
final class NodeHttpEndpoint {

    private static final PoyangLog log = PoyangLogs.get(NodeHttpEndpoint.class);

    private final PoyangNode node;
    private final String host;
    private final int requestedPort;
    private final NodeMetrics metrics;
    private HttpServer server;
    private ExecutorService executor;

    NodeHttpEndpoint(PoyangNode node, String host, int port) {
        this.node = node;
        this.host = host;
        this.requestedPort = port;
        this.metrics = new NodeMetrics(node.config().nodeId, node.raftServer());
    }

    void start() {
        try {
            server = HttpServer.create(new InetSocketAddress(host, requestedPort), 16);
        } catch (BindException e) {
            throw new NodeStartException("port " + requestedPort + " on " + host + " is already in use (metricsPort): "
                    + e.getMessage() + ". Stop the process listening there or choose another metricsPort (-1 turns the"
                    + " HTTP endpoint off)", e);
        } catch (IOException e) {
            throw new NodeStartException("cannot open the HTTP port " + host + ":" + requestedPort + " (metricsPort): "
                    + e, e);
        }
        executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "poyang-" + node.config().nodeId + "-http");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        metrics.start();
        server.createContext("/metrics", this::metrics);
        server.createContext("/health", this::health);
        server.start();
    }

    int port() {
        return server.getAddress().getPort();
    }

    void stop() {
        metrics.stop();
        if (server != null) {
            server.stop(0);
        }
        if (executor != null) {
            executor.shutdown();
        }
    }

    NodeMetrics metrics() {
        return metrics;
    }

    private void metrics(HttpExchange ex) throws IOException {
        try {
            if (!allowGet(ex)) {
                return;
            }
            PrometheusText text = new PrometheusText();
            metrics.write(text);
            send(ex, 200, PrometheusText.CONTENT_TYPE, text.toString());
        } catch (RuntimeException e) {
            log.warn("node {}: /metrics failed", node.config().nodeId, e);
            send(ex, 500, "text/plain; charset=utf-8", "metrics failed: " + e + "\n");
        }
    }

    private void health(HttpExchange ex) throws IOException {
        if (!allowGet(ex)) {
            return;
        }
        StringBuilder groups = new StringBuilder();
        String problem = node.isStopped() ? "the node is stopping" : null;
        List<RaftGroup> all = node.raftServer().groups();
        for (RaftGroup g : all) {
            String state = "ok";
            if (g.failure() != null) {
                state = "failed: " + g.failure();
            } else if (g.leaderId() == 0) {
                state = "no leader";
            }
            if (!state.equals("ok") && problem == null) {
                problem = "group " + g.groupId() + ": " + state;
            }
            if (groups.length() > 0) {
                groups.append(',');
            }
            groups.append("{\"id\":").append(g.groupId())
                    .append(",\"role\":\"").append(g.role()).append('"')
                    .append(",\"term\":").append(g.term())
                    .append(",\"leader\":").append(g.leaderId())
                    .append(",\"commitIndex\":").append(g.commitIndex())
                    .append(",\"appliedIndex\":").append(g.lastApplied())
                    .append(",\"state\":\"").append(Json.escape(state)).append("\"}");
        }
        String body = "{\"status\":\"" + (problem == null ? "ok" : "unhealthy") + "\""
                + (problem == null ? "" : ",\"reason\":\"" + Json.escape(problem) + "\"")
                + ",\"node\":" + node.config().nodeId + ",\"groups\":[" + groups + "]}\n";
        send(ex, problem == null ? 200 : 503, "application/json", body);
    }

    private static boolean allowGet(HttpExchange ex) throws IOException {
        String m = ex.getRequestMethod();
        if (m.equals("GET") || m.equals("HEAD")) {
            return true;
        }
        ex.getResponseHeaders().set("Allow", "GET, HEAD");
        send(ex, 405, "text/plain; charset=utf-8", "use GET\n");
        return false;
    }

    private static void send(HttpExchange ex, int status, String contentType, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", contentType);
        boolean head = ex.getRequestMethod().equals("HEAD");
        ex.sendResponseHeaders(status, head ? -1 : b.length);
        try (OutputStream os = ex.getResponseBody()) {
            if (!head) {
                os.write(b);
            }
        }
    }
}
