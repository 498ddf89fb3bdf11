package io.poyang.server.demos;

import io.poyang.dtkv.KvException;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.client.KvClient;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** batchPut, batchGet and batchRemove: one raft entry each, all or nothing. */
final class BatchDemo implements Demo {

    @Override
    public String name() {
        return "batch";
    }

    @Override
    public String description() {
        return "batchPut / batchGet / batchRemove, all or nothing in one raft entry";
    }

    @Override
    public void run(KvClient kv, DemoContext ctx, PrintStream out) {
        kv.mkdir("demo");
        kv.mkdir("demo.batch");
        List<String> keys = Arrays.asList("demo.batch.a", "demo.batch.b", "demo.batch.c");
        List<byte[]> values = new ArrayList<>();
        for (String k : keys) {
            values.add(("value of " + k).getBytes(StandardCharsets.UTF_8));
        }
        long index = kv.batchPut(keys, values);
        out.println("batchPut of 3 keys: one entry, raft index " + index);
        for (KvNode n : kv.batchGet(Arrays.asList("demo.batch.a", "demo.batch.c", "demo.batch.none"))) {
            out.println("batchGet: " + n.key() + (n.exists() ? " = " + n.valueAsString() : " (absent)"));
        }
        try {
            kv.batchPut(Arrays.asList("demo.batch.d", "demo.nodir.e"), Arrays.asList(new byte[]{1}, new byte[]{2}));
        } catch (KvException e) {
            out.println("batchPut with a bad 2nd key failed: " + e.kvCode() + " at position " + e.failedPosition()
                    + "; demo.batch.d exists? " + kv.get("demo.batch.d").exists());
        }
        kv.batchRemove(Arrays.asList("demo.batch.a", "demo.batch.b", "demo.batch.c", "demo.batch"));
        out.println("batchRemove of the keys and then their directory: demo.batch exists? " + kv.get("demo.batch").exists());
    }
}
