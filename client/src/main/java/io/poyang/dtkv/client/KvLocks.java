package io.poyang.dtkv.client;

import io.poyang.codec.PbCallback;
import io.poyang.dtkv.KvLockEvent;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.WritePacket;

import java.util.ArrayList;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;

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

    /**
     * A connection of the client came back (I/O thread: only hands over). A grant pushed while it
     * was down is lost for good (pushes are not sent again), so every waiting tryLock asks whether
     * it holds ({@link KvLock#onReconnected()}).
     */
    void onConnected() {
        try {
            shared.timer.execute(() -> {
                for (KvLock l : locks.values()) {
                    l.onReconnected();
                }
            });
        } catch (RejectedExecutionException e) {
            // the client stops
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
                    shared.eventExecutor.execute(() -> l.onEvent(e));
                }
                return WritePacket.response(null);
            }
        };
    }
}
