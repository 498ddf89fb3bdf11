package io.poyang.server.demos;

import io.poyang.dtkv.KvException;
import io.poyang.dtkv.client.KvClient;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** compareAndSet: create-if-absent, then a counter incremented by compare-and-set retries. */
final class CasDemo implements Demo {

    @Override
    public String name() {
        return "cas";
    }

    @Override
    public String description() {
        return "compareAndSet: create only if absent, a counter with optimistic retries";
    }

    @Override
    public void run(KvClient kv, DemoContext ctx, PrintStream out) {
        kv.mkdir("demo");
        try {
            kv.remove("demo.counter");   // start afresh when run again against the same cluster
        } catch (KvException e) {
            // NOT_FOUND: the first run
        }
        boolean created = kv.compareAndSet("demo.counter", null, b("0"));
        out.println("create demo.counter if absent: " + created);
        out.println("create it again if absent: " + kv.compareAndSet("demo.counter", null, b("0")));
        int retries = 0;
        for (int i = 0; i < 5; i++) {
            while (true) {
                String current = kv.getString("demo.counter");
                String next = Integer.toString(Integer.parseInt(current) + 1);
                if (kv.compareAndSet("demo.counter", b(current), b(next))) {
                    break;
                }
                retries++;
            }
        }
        out.println("after 5 increments by compareAndSet: demo.counter = " + kv.getString("demo.counter")
                + " (" + retries + " retries)");
        out.println("compareAndSet with a stale expected value: " + kv.compareAndSet("demo.counter", b("1"), b("100")));
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
