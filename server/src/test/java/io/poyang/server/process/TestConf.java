package io.poyang.server.process;

import io.poyang.server.config.PropertiesFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;

/**
 * Copies of the sample configurations in {@code server/conf/} for tests: the same files with the
 * ports and data directories rewritten (free ports, a temp directory), everything else as shipped.
 */
final class TestConf {

    /** server/conf, found from the module directory surefire runs in (or the repository root). */
    static Path samples() {
        for (Path p : new Path[]{Paths.get("conf"), Paths.get("server", "conf")}) {
            if (Files.isDirectory(p.resolve("three-nodes"))) {
                return p.toAbsolutePath();
            }
        }
        throw new IllegalStateException("cannot find server/conf from " + Paths.get("").toAbsolutePath());
    }

    /** The ports of one node: replication, service, HTTP. */
    static final class Ports {
        final int replication;
        final int service;
        final int metrics;

        Ports(int replication, int service, int metrics) {
            this.replication = replication;
            this.service = service;
            this.metrics = metrics;
        }
    }

    /**
     * Writes {@code dest/config.properties} and {@code dest/servers.properties} from the sample
     * {@code sampleDir}, with this node's ports, its data in {@code dataDir}, and every node of
     * {@code servers} at its replication port.
     */
    static Path write(Path sampleDir, Path dest, Ports ports, Path dataDir, Map<Integer, Ports> servers,
                      Map<String, String> extraSettings) throws IOException {
        Files.createDirectories(dest);
        PropertiesFile c = PropertiesFile.read(sampleDir.resolve("config.properties"));
        PropertiesFile cfg = PropertiesFile.empty(dest.resolve("config.properties"));
        for (String k : c.keys()) {
            cfg.set(k, c.get(k));
        }
        cfg.set("replicationPort", String.valueOf(ports.replication));
        cfg.set("servicePort", String.valueOf(ports.service));
        cfg.set("metricsPort", String.valueOf(ports.metrics));
        cfg.set("dataDir", dataDir.toString());
        extraSettings.forEach(cfg::set);
        cfg.writeAtomically();
        PropertiesFile s = PropertiesFile.read(sampleDir.resolve("servers.properties"));
        PropertiesFile srv = PropertiesFile.empty(dest.resolve("servers.properties"));
        for (String k : s.keys()) {
            srv.set(k, s.get(k));
        }
        servers.forEach((id, p) -> srv.set("node." + id, "127.0.0.1:" + p.replication));
        srv.writeAtomically();
        return dest;
    }
}
