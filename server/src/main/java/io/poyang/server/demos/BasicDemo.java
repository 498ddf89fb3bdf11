package io.poyang.server.demos;

import io.poyang.dtkv.KvException;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvReadKind;
import io.poyang.dtkv.client.KvClient;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Directories, put, get (with each read kind), list, remove, and what an error looks like. */
final class BasicDemo implements Demo {

    @Override
    public String name() {
        return "basic";
    }

    @Override
    public String description() {
        return "mkdir, put, get (and the other read kinds), list, remove, and an error code";
    }

    @Override
    public void run(KvClient kv, DemoContext ctx, PrintStream out) {
        kv.mkdir("demo");
        kv.mkdir("demo.app");
        long index = kv.put("demo.app.url", "jdbc:postgresql://db:5432/app".getBytes(StandardCharsets.UTF_8));
        out.println("put demo.app.url at raft index " + index);
        kv.put("demo.app.pool", "20");
        KvNode url = kv.get("demo.app.url");
        out.println("get demo.app.url = " + url.valueAsString() + " (created at " + url.createIndex() + ")");
        for (KvReadKind kind : new KvReadKind[]{KvReadKind.READ_INDEX, KvReadKind.FOLLOWER_READ}) {
            // every read is linearizable; the kind says how (lease read is the default)
            out.println("get with " + kind + " = " + kv.withReadKind(kind).getString("demo.app.url"));
        }
        for (KvNode n : kv.list("demo.app")) {
            out.println("list demo.app: " + n.key() + " = " + n.valueAsString());
        }
        out.println("get demo.app.missing exists? " + kv.get("demo.app.missing").exists());
        try {
            kv.put("demo.nodir.key", "x");
        } catch (KvException e) {
            out.println("put demo.nodir.key failed: " + e.kvCode() + " (" + e.getMessage() + ")");
        }
        kv.remove("demo.app.pool");
        out.println("removed demo.app.pool; exists? " + kv.get("demo.app.pool").exists());
    }
}
