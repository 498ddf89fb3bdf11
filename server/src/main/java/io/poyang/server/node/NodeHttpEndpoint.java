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
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The node's plain-HTTP port (JDK {@code com.sun.net.httpserver}, {@value #EXCHANGE_THREADS} daemon
 * threads): {@code GET /metrics} in Prometheus text format ({@link NodeMetrics}) and
 * {@code GET /health}, a small JSON document with status 200 when every group on the node runs and
 * knows its leader, 503 otherwise (stopping, an I/O thread crashed, a group failed or leaderless) —
 * for load balancers and scripts. Only these two paths are served, exactly (a query string is ignored): any other path,
 * {@code /healthz} or {@code /health/x} too, is answered 404 with a body naming the two.
 *
 * <p>The JDK server hands a connection to an exchange thread as soon as its first bytes arrive, and
 * that thread then blocks reading the rest of the request with no time limit. So a client that
 * stops mid-request (a crashed scraper, a half-open connection, a port scanner) would hold a thread
 * for good, and with one thread every later {@code /health} would hang. Hence several threads, and
 * an exchange that takes longer than {@code exchangeLimitMillis} is cut: its thread is interrupted,
 * which closes the connection it is blocked on.
 */
final class NodeHttpEndpoint {

    private static final PoyangLog log = PoyangLogs.get(NodeHttpEndpoint.class);
    /** Exchanges served at once: a few stalled clients leave threads for the health checks. */
    static final int EXCHANGE_THREADS = 4;
    /**
     * How long one exchange (reading the request, answering it) may take. A scrape waits at most
     * about 2 s for the groups, and answers are a few KiB: a well-behaved client is far below this.
     */
    static final long EXCHANGE_LIMIT_MILLIS = 10_000;
    static final String METRICS_PATH = "/metrics";
    static final String HEALTH_PATH = "/health";

    private final PoyangNode node;
    private final String host;
    private final int requestedPort;
    private final long exchangeLimitMillis;
    private final NodeMetrics metrics;
    private HttpServer server;
    private ExecutorService executor;
    private ScheduledExecutorService exchangeTimer;

    NodeHttpEndpoint(PoyangNode node, String host, int port) {
        this(node, host, port, EXCHANGE_LIMIT_MILLIS);
    }

    NodeHttpEndpoint(PoyangNode node, String host, int port, long exchangeLimitMillis) {
        this.node = node;
        this.host = host;
        this.requestedPort = port;
        this.exchangeLimitMillis = exchangeLimitMillis;
        this.metrics = new NodeMetrics(node.config().nodeId, node.raftServer());
    }

    void start() {
        // Threads first: an HttpServer that is created but never started keeps its port bound even
        // after stop() (only its dispatcher thread closes it), so nothing that can fail comes between
        // binding the port and starting the server. stop() ends these threads when the bind fails.
        AtomicInteger threads = new AtomicInteger();
        executor = Executors.newFixedThreadPool(EXCHANGE_THREADS, r -> {
            Thread t = new Thread(r, "poyang-" + node.config().nodeId + "-http-" + threads.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
        exchangeTimer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "poyang-" + node.config().nodeId + "-http-timer");
            t.setDaemon(true);
            return t;
        });
        metrics.start();
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
        server.setExecutor(exchange -> executor.execute(() -> runLimited(exchange)));
        // one context for every path: the JDK matches contexts by prefix ("/health" would also serve
        // "/healthz" and "/health/x"), and a scraper or probe pointed at a mistyped path must get a 404
        server.createContext("/", this::route);
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
        if (exchangeTimer != null) {
            exchangeTimer.shutdownNow();
        }
    }

    /**
     * Runs one exchange, interrupting its thread if it takes longer than the limit: a thread blocked
     * reading or writing the connection (a socket channel) then gets it closed under it and the
     * exchange ends. The interrupt is only ever delivered while this exchange runs, never to the
     * next one on the same thread.
     */
    private void runLimited(Runnable exchange) {
        Thread self = Thread.currentThread();
        AtomicBoolean running = new AtomicBoolean(true);
        ScheduledFuture<?> cut;
        try {
            cut = exchangeTimer.schedule(() -> {
                synchronized (running) {
                    if (running.get()) {
                        log.warn("node {}: an HTTP exchange took longer than {} ms (a client that stopped"
                                + " sending or reading?); closing its connection", node.config().nodeId,
                                exchangeLimitMillis);
                        self.interrupt();
                    }
                }
            }, exchangeLimitMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            cut = null;   // stopping: the server closes every connection anyway
        }
        try {
            exchange.run();
        } finally {
            if (cut != null) {
                cut.cancel(false);
            }
            synchronized (running) {
                running.set(false);
                Thread.interrupted();   // an interrupt meant for this exchange must not reach the next
            }
        }
    }

    NodeMetrics metrics() {
        return metrics;
    }

    /** Serves {@value #METRICS_PATH} and {@value #HEALTH_PATH} exactly (a query string is ignored); 404 for any other path. */
    private void route(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        if (METRICS_PATH.equals(path)) {
            metrics(ex);
        } else if (HEALTH_PATH.equals(path)) {
            health(ex);
        } else {
            send(ex, 404, "text/plain; charset=utf-8", "not found; this endpoint serves " + METRICS_PATH + " and "
                    + HEALTH_PATH + "\n");
        }
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
        String problem = node.isStopped() ? "the node is stopping" : node.raftServer().ioProblem();
        if (problem == null) {
            // a configuration mistake that does not heal by itself, whether or not the groups run
            for (Map.Entry<Integer, String> e : node.raftServer().misaddressedNodes().entrySet()) {
                problem = "node " + e.getKey() + ": " + e.getValue() + "; give it its right address with"
                        + " ./poyang admin add-node " + e.getKey() + " <host:port>";
                break;
            }
        }
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
