package io.poyang.server.demos;

import io.poyang.dtkv.KvException;
import io.poyang.dtkv.client.KvClient;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Temp values and a temp directory that expire with their TTL; another client may not touch them. */
final class TtlDemo implements Demo {

    @Override
    public String name() {
        return "ttl";
    }

    @Override
    public String description() {
        return "putTemp / makeTempDir / updateTtl: nodes that expire, owned by their client";
    }

    @Override
    public void run(KvClient kv, DemoContext ctx, PrintStream out) throws Exception {
        kv.mkdir("demo");
        kv.putTemp("demo.heartbeat", "alive".getBytes(StandardCharsets.UTF_8), 1_000);
        kv.makeTempDir("demo.members", 1_500);
        kv.put("demo.members.node-a", "10.0.0.1");
        out.println("putTemp demo.heartbeat (TTL 1000 ms), makeTempDir demo.members (TTL 1500 ms) with a member");
        KvClient other = ctx.newClient();
        try {
            other.put("demo.heartbeat", "mine now");
        } catch (KvException e) {
            out.println("another client writing demo.heartbeat: " + e.kvCode());
        }
        kv.updateTtl("demo.members", 3_000);
        out.println("updateTtl demo.members to 3000 ms");
        long start = System.nanoTime();
        boolean heartbeatGone = false;
        while (System.nanoTime() - start < 10_000_000_000L) {
            if (!heartbeatGone && !kv.get("demo.heartbeat").exists()) {
                heartbeatGone = true;
                out.println("demo.heartbeat expired; demo.members still there? " + kv.get("demo.members").exists());
            }
            if (heartbeatGone && !kv.get("demo.members").exists()) {
                out.println("demo.members expired with everything under it; demo.members.node-a exists? "
                        + kv.get("demo.members.node-a").exists());
                return;
            }
            Thread.sleep(50);   // a demo polling for the reader's benefit; the expiry itself is the leader's
        }
        out.println("the temp nodes did not expire within 10 s");
    }
}
