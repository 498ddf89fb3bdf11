package io.poyang.server.demos;

import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvWatch;

import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** A directory watch: the current state first, then every change pushed in order. */
final class WatchDemo implements Demo {

    @Override
    public String name() {
        return "watch";
    }

    @Override
    public String description() {
        return "watch a directory: its current content, then changes pushed by the server";
    }

    @Override
    public void run(KvClient kv, DemoContext ctx, PrintStream out) throws Exception {
        kv.mkdir("demo");
        kv.mkdir("demo.watched");
        kv.put("demo.watched.color", "red");
        CountDownLatch removed = new CountDownLatch(1);
        KvWatch w = kv.watch((watchKey, node) -> {
            out.println("watch " + watchKey + ": " + describe(node));
            if (node.key().equals("demo.watched.size") && !node.exists()) {
                removed.countDown();
            }
        }, "demo.watched");
        KvClient writer = ctx.newClient();
        writer.put("demo.watched.color", "green");
        writer.put("demo.watched.size", "XL");
        writer.remove("demo.watched.size");
        if (!removed.await(10, TimeUnit.SECONDS)) {
            out.println("the watch did not see the last change within 10 s");
        }
        w.close();
    }

    private static String describe(KvNode n) {
        if (!n.exists()) {
            return n.key() + " removed";
        }
        return n.isDir() ? n.key() + " (directory)" : n.key() + " = " + n.valueAsString();
    }
}
