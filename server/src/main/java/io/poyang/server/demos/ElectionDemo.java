package io.poyang.server.demos;

import io.poyang.dtkv.client.ElectionLock;
import io.poyang.dtkv.client.KvClient;

import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Two candidates and an auto-renewing election lock: one leads; when it steps down the other takes over. */
final class ElectionDemo implements Demo {

    @Override
    public String name() {
        return "election";
    }

    @Override
    public String description() {
        return "leader election with an auto-renewing lock and acquired/lost callbacks";
    }

    @Override
    public void run(KvClient kv, DemoContext ctx, PrintStream out) throws Exception {
        CountDownLatch aLeads = new CountDownLatch(1);
        CountDownLatch bLeads = new CountDownLatch(1);
        ElectionLock a = kv.electionLock("demo-election", 1_000, listener("candidate A", out, aLeads));
        a.start();
        if (!aLeads.await(10, TimeUnit.SECONDS)) {
            out.println("candidate A was not elected within 10 s");
            return;
        }
        ElectionLock b = ctx.newClient().electionLock("demo-election", 1_000, listener("candidate B", out, bLeads));
        b.start();
        Thread.sleep(1_500);   // A keeps renewing its lease: B must not lead meanwhile
        out.println("after 1.5 s, A still leads: " + a.isLeader() + ", B leads: " + b.isLeader());
        out.println("A steps down");
        a.close();
        if (!bLeads.await(10, TimeUnit.SECONDS)) {
            out.println("candidate B was not elected within 10 s");
        }
        b.close();
    }

    private static ElectionLock.Listener listener(String who, PrintStream out, CountDownLatch elected) {
        return new ElectionLock.Listener() {
            @Override
            public void onAcquired(long fencingToken) {
                out.println(who + " is the leader (fencing token " + fencingToken + ")");
                elected.countDown();
            }

            @Override
            public void onLost() {
                out.println(who + " lost the leadership");
            }
        };
    }
}
