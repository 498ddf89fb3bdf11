package io.poyang.dtkv.client;

import io.poyang.codec.PbCallback;
import io.poyang.dtkv.KvLockEvent;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.WritePacket;

import java.util.ArrayList;
import java.util.concurrent.ConcurrentHashMap;

/** The client's locks by group and name, and the lock-event pushes routed to them. */
final class KvLocks {

    private final KvClient.Shared shared;
    private final ConcurrentHashMap<String, KvLock> locks = new ConcurrentHashMap<>();

    KvLocks(KvClient.Shared shared) {
        this.shared = shared;
    }

    private static String id(int groupId, String name) {
        return groupId + "/" + name;
    }

    KvLock lock(KvClient client, String name) {
        return locks.computeIfAbsent(id(client.groupId, name), k -> new KvLock(client, name));
    }

    /** At stop, while the connections are still open: see {@link KvLock#releaseOnStop()}. */
    void releaseAll() {
        for (KvLock l : new ArrayList<>(locks.values())) {
            l.releaseOnStop();
        }
    }

    void closeAll() {
        for (KvLock l : new ArrayList<>(locks.values())) {
            l.onClientClosed();
        }
    }

    ReqProcessor<KvLockEvent> processor() {
        return new ReqProcessor<KvLockEvent>() {
            @Override
            public PbCallback<KvLockEvent> createDecoder() {
                return new KvLockEvent.Decoder();
            }

            @Override
            public WritePacket process(ReqContext context, KvLockEvent e) {
                KvLock l = locks.get(id(e.groupId(), e.key()));
                if (l != null) {
                    // A grant's lease counts from here: the event executor may run it much later,
                    // behind a slow watch listener, when the server's lease may be over.
                    long arrivedNanos = System.nanoTime();
                    shared.eventExecutor.execute(() -> l.onEvent(e, arrivedNanos));
                }
                return WritePacket.response(null);
            }
        };
    }
}
