package io.poyang.dtkv.client;

import io.poyang.codec.PbCallback;
import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvLockEvent;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.WritePacket;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Lock-event pushes for the client-package tests: one handed to a client as if a node had pushed it
 * (through the client's push processor), and a client whose GRANTED pushes can be lost.
 */
final class LockPushes {

    private LockPushes() {
    }

    /** A GRANTED push of {@code token} for lock {@code name} of group 1 to {@code client}. */
    static KvLockEvent granted(KvClient client, String name, long token) {
        return new KvLockEvent(1, name, KvLockEvent.GRANTED, token, System.currentTimeMillis() + 30_000,
                client.clientId().getMostSignificantBits(), client.clientId().getLeastSignificantBits());
    }

    /** Hands {@code e} to {@code client} the way a push arrives, and waits until its event executor ran it. */
    static void push(KvClient client, KvLockEvent e) throws Exception {
        client.shared.locks.processor().process(null, e);
        eventsRun(client);
    }

    /** Waits until {@code client}'s event executor ran every event queued before this call. */
    static void eventsRun(KvClient client) throws Exception {
        CompletableFuture<Void> marker = new CompletableFuture<>();
        client.shared.eventExecutor.execute(() -> marker.complete(null));
        marker.get(10, TimeUnit.SECONDS);
    }

    /**
     * Installs, on a client not started yet, a lock-event processor that loses GRANTED pushes while
     * {@link LossyGrants#losing} is set (recording them in {@link LossyGrants#lost}), as a
     * connection blip would, and passes every other push on to the client's own processor.
     */
    static LossyGrants loseGrants(KvClient client) {
        LossyGrants g = new LossyGrants();
        ReqProcessor<KvLockEvent> real = client.shared.locks.processor();
        client.raftClient().network().register(KvCommands.KV_LOCK_EVENT, new ReqProcessor<KvLockEvent>() {
            @Override
            public PbCallback<KvLockEvent> createDecoder() {
                return real.createDecoder();
            }

            @Override
            public WritePacket process(ReqContext context, KvLockEvent e) {
                if (g.losing && e.type() == KvLockEvent.GRANTED) {
                    g.lost.add(e);
                    return WritePacket.response(null);
                }
                return real.process(context, e);
            }
        });
        return g;
    }

    static final class LossyGrants {
        volatile boolean losing = true;
        final List<KvLockEvent> lost = new CopyOnWriteArrayList<>();
    }
}
