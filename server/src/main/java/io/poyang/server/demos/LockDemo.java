package io.poyang.server.demos;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvLock;

import java.io.PrintStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** A distributed lock: grant, a second client queued and granted by push, fencing tokens. */
final class LockDemo implements Demo {

    @Override
    public String name() {
        return "lock";
    }

    @Override
    public String description() {
        return "tryLock with lease and wait, a queued waiter granted by push, fencing tokens";
    }

    @Override
    public void run(KvClient kv, DemoContext ctx, PrintStream out) throws Exception {
        KvLock mine = kv.lock("demo-lock");
        boolean got = mine.tryLock(10_000, 0);
        out.println("client A tryLock: " + got + ", fencing token " + mine.fencingToken());
        KvClient b = ctx.newClient();
        KvLock theirs = b.lock("demo-lock");
        out.println("client B tryLock without waiting: " + theirs.tryLock(10_000, 0));
        CompletableFuture<Boolean> waiting = theirs.tryLockAsync(10_000, 5_000);
        out.println("client B waits in the queue; A renews its lease and unlocks");
        mine.updateLease(10_000);
        mine.unlock();
        boolean granted = waiting.get(10, TimeUnit.SECONDS);
        out.println("client B granted by push: " + granted + ", fencing token " + theirs.fencingToken()
                + " (higher than A's)");
        theirs.unlock();
    }
}
