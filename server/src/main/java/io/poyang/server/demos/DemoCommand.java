package io.poyang.server.demos;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.dtkv.server.LocalKvCluster;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code ./poyang demo NAME [--servers host:port,...]}: runs a DtKV example program. Without
 * {@code --servers} it starts a single-node DtKV server in this process (a temp directory, removed
 * at exit), so it works on a fresh checkout; with it, it talks to a running cluster.
 */
public final class DemoCommand {

    static final List<Demo> DEMOS = Arrays.asList(new BasicDemo(), new BatchDemo(), new CasDemo(), new TtlDemo(),
            new WatchDemo(), new LockDemo(), new ElectionDemo());

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        String name = null;
        String servers = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                usage(out);
                return 0;
            } else if (a.equals("--servers") && i + 1 < args.length) {
                servers = args[++i];
            } else if (a.startsWith("--servers=")) {
                servers = a.substring("--servers=".length());
            } else if (!a.startsWith("-") && name == null) {
                name = a;
            } else {
                err.println("demo: unknown option '" + a + "'");
                usage(err);
                return 2;
            }
        }
        Map<String, Demo> byName = new LinkedHashMap<>();
        for (Demo d : DEMOS) {
            byName.put(d.name(), d);
        }
        if (name == null || !byName.containsKey(name)) {
            err.println(name == null ? "demo: name a demo" : "demo: no demo named '" + name + "'");
            usage(err);
            return 2;
        }
        LocalKvCluster local = null;
        try {
            if (servers == null) {
                local = LocalKvCluster.singleNode().start();
                if (local.waitForLeader(1, 30_000) == 0) {
                    err.println("demo: the local DtKV server did not become ready within 30 s");
                    return 1;
                }
                servers = local.serviceAddresses();
                out.println("(started a local single-node DtKV server on " + servers + ")");
            }
            DemoContext ctx = new DemoContext(servers);
            try (KvClient kv = new KvClient(new KvClientConfig().servers(servers))) {
                kv.start();
                byName.get(name).run(kv, ctx, out);
            } finally {
                ctx.close();
            }
            return 0;
        } catch (Exception e) {
            err.println("demo " + name + " failed: " + e);
            return 1;
        } finally {
            if (local != null) {
                local.close();
            }
        }
    }

    private static void usage(PrintStream out) {
        out.println("usage: poyang demo NAME [--servers host:port,...]");
        out.println();
        out.println("Runs a DtKV example program (docs/dtkv.md explains each). Without --servers it starts a");
        out.println("single-node DtKV server in this process (data in a temp directory, removed at exit).");
        out.println();
        out.println("demos:");
        for (Demo d : DEMOS) {
            out.printf("  %-10s %s%n", d.name(), d.description());
        }
    }
}
