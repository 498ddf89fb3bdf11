package io.poyang.server.process;

import io.poyang.net.LoopbackPorts;
import io.poyang.server.metrics.PrometheusTextParser;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Node processes of one test cluster, from the three-node sample configuration on free ports. */
final class Cluster implements AutoCloseable {

    final Path dir;
    final Map<Integer, TestConf.Ports> ports = new LinkedHashMap<>();
    final Map<Integer, Path> confs = new LinkedHashMap<>();
    final Map<Integer, NodeProcess> nodes = new LinkedHashMap<>();

    /** Writes the configurations of nodes 1..n (the sample's node1..node3 files; later ids reuse node3's). */
    Cluster(Path dir, int n, Map<String, String> extraSettings) throws Exception {
        this.dir = dir;
        int[] p = LoopbackPorts.pick(3 * n);
        for (int i = 1; i <= n; i++) {
            ports.put(i, new TestConf.Ports(p[3 * i - 3], p[3 * i - 2], p[3 * i - 1]));
        }
        for (int i = 1; i <= n; i++) {
            Path sample = TestConf.samples().resolve("three-nodes").resolve("node" + Math.min(i, 3));
            Map<String, String> extra = new LinkedHashMap<>(extraSettings);
            extra.put("nodeId", String.valueOf(i));
            confs.put(i, TestConf.write(sample, dir.resolve("conf-" + i), ports.get(i), dir.resolve("data-" + i),
                    ports, extra));
        }
    }

    /** Removes node {@code nodeId}'s line from node {@code confNode}'s servers.properties (before it starts). */
    void forget(int confNode, int nodeId) throws Exception {
        io.poyang.server.config.PropertiesFile f = io.poyang.server.config.PropertiesFile.read(
                confs.get(confNode).resolve("servers.properties"));
        f.remove("node." + nodeId);
        f.writeAtomically();
    }

    /** "1=127.0.0.1:port,..." of the replication (admin) ports of {@code ids}. */
    String admin(int... ids) {
        StringBuilder sb = new StringBuilder();
        for (int id : ids) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(id).append("=127.0.0.1:").append(ports.get(id).replication);
        }
        return sb.toString();
    }

    /** A settings file of node {@code id}'s configuration, read now. */
    io.poyang.server.config.PropertiesFile serversFile(int id) {
        return io.poyang.server.config.PropertiesFile.read(confs.get(id).resolve("servers.properties"));
    }

    NodeProcess start(int id) throws Exception {
        NodeProcess p = new NodeProcess(id, confs.get(id), dir).start();
        nodes.put(id, p);
        return p;
    }

    void awaitReady(int id) throws Exception {
        nodes.get(id).awaitReady(120_000);
    }

    /** "1=127.0.0.1:port,2=..." of the service ports of {@code ids}. */
    String servers(int... ids) {
        StringBuilder sb = new StringBuilder();
        for (int id : ids) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(id).append("=127.0.0.1:").append(ports.get(id).service);
        }
        return sb.toString();
    }

    /** A KvClient configuration with every node's service address under its id. */
    io.poyang.dtkv.client.KvClientConfig clientConfig(long timeoutMillis) {
        io.poyang.dtkv.client.KvClientConfig cfg = new io.poyang.dtkv.client.KvClientConfig().timeoutMillis(timeoutMillis);
        ports.forEach((id, p) -> cfg.node(id, "127.0.0.1:" + p.service));
        return cfg;
    }

    /** /health of a node (its body; status may be 200 or 503). */
    String health(int id) throws Exception {
        return Http.get(ports.get(id).metrics, "/health").body;
    }

    /** The value of metric {@code name} of group {@code group} on node {@code id} (its /metrics). */
    double groupMetric(int id, String name, int group) throws Exception {
        return PrometheusTextParser.parse(Http.get(ports.get(id).metrics, "/metrics").body)
                .value(name, "group", String.valueOf(group));
    }

    /** The leader of group 1 that every running node of {@code ids} agrees on, waiting for one. */
    int awaitLeader(long timeoutMillis, int... ids) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        String last = "";
        while (System.nanoTime() - deadline < 0) {
            long leader = -1;
            boolean agreed = true;
            StringBuilder seen = new StringBuilder();
            for (int id : ids) {
                String h;
                try {
                    h = health(id);
                } catch (Exception e) {
                    agreed = false;
                    break;
                }
                seen.append(h);
                long l = Http.groupField(h, 1, "leader");
                if (l == 0 || (leader != -1 && l != leader)) {
                    agreed = false;
                }
                leader = l;
            }
            last = seen.toString();
            if (agreed && leader > 0) {
                return (int) leader;
            }
            Thread.sleep(50);   // poll interval of a deadline-bound wait, not a synchronisation
        }
        throw new AssertionError("no agreed leader within " + timeoutMillis + " ms: " + last);
    }

    /** The end of every node's stderr, for a failure message. */
    String diagnostics() {
        StringBuilder sb = new StringBuilder();
        for (NodeProcess p : nodes.values()) {
            sb.append("\n----- node ").append(p.nodeId).append(" (alive ").append(p.isAlive()).append(") stderr:\n")
                    .append(p.stderrTail());
        }
        return sb.toString();
    }

    /** Runs a test body; a failure carries every node's stderr. */
    void run(ThrowingRunnable body) throws Exception {
        try {
            body.run();
        } catch (AssertionError | Exception e) {
            throw new AssertionError(e.getMessage() + diagnostics(), e);
        }
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Override
    public void close() throws Exception {
        for (NodeProcess p : nodes.values()) {
            p.close();
        }
    }
}
