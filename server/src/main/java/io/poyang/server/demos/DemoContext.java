package io.poyang.server.demos;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;

import java.util.ArrayList;
import java.util.List;

/** What a demo may need beyond its client: more clients of the same cluster (other "processes"). */
final class DemoContext {

    private final String servers;
    private final List<KvClient> extra = new ArrayList<>();

    DemoContext(String servers) {
        this.servers = servers;
    }

    /** Another client of the cluster (another process, as far as the servers can tell); closed at the end. */
    KvClient newClient() {
        KvClient c = new KvClient(new KvClientConfig().servers(servers));
        c.start();
        extra.add(c);
        return c;
    }

    void close() {
        for (KvClient c : extra) {
            c.close();
        }
    }
}
