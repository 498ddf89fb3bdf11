package io.poyang.dtkv.client;

import io.poyang.codec.PbCallback;
import io.poyang.dtkv.KvLockEvent;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.WritePacket;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;

/**
 * The client's locks by group and name, and the lock-event pushes routed to them.
 *
 * <p>The map refers to a lock weakly unless the lock is in use ({@link Entry#inUse}: held, or a
 * tryLock on its way or waiting), so a client that locks many names ({@code "order." + id}) keeps
 * only the locks in use and those the application (or an {@link ElectionLock}) still refers to.
 * {@link #lock} returns the same object for a name as long as it exists, so there is never more than
 * one object per name; once the garbage collector took one, nobody can call it again, and the next
 * {@link #lock} makes a new one.
 *
 * <p>A new object knows nothing of the grants the old one had ({@code highestToken}), and it need
 * not: a push for a name with no object is dropped (the lookup never makes one), a GRANTED push to
 * an object with no tryLock of its own takes nothing, and a waiting tryLock holds only once the
 * leader answers its check GRANTED ({@link KvLock}); an old grant pushed late costs one check at most.
 */
final class KvLocks {

    /**
     * A lock in the map: weak, so that an unused lock the application dropped goes, and strong through
     * {@link #inUse} while it is in use. Its lock keeps it (a final field set by its constructor).
     */
    static final class Entry extends WeakReference<KvLock> {
        final String id;
        /**
         * The lock itself while in use, else null; set by the lock under its monitor. Only the garbage
         * collector reads it (as a strong reference), so it needs no more than that.
         */
        KvLock inUse;

        Entry(KvLock lock, String id, ReferenceQueue<KvLock> queue) {
            super(lock, queue);
            this.id = id;
        }
    }

    private final KvClient.Shared shared;
    private final ConcurrentHashMap<String, Entry> locks = new ConcurrentHashMap<>();
    /** The entries whose lock the garbage collector took: removed at the next {@link #lock}. */
    private final ReferenceQueue<KvLock> collected = new ReferenceQueue<>();

    KvLocks(KvClient.Shared shared) {
        this.shared = shared;
    }

    private static String id(int groupId, String name) {
        return groupId + "/" + name;
    }

    KvLock lock(KvClient client, String name) {
        removeCollected();
        String id = id(client.groupId, name);
        KvLock l = get(id);
        if (l != null) {
            return l;
        }
        KvLock[] result = new KvLock[1];
        locks.compute(id, (k, old) -> {
            KvLock existing = old == null ? null : old.get();
            if (existing != null) {
                result[0] = existing;   // made by another thread meanwhile
                return old;
            }
            result[0] = new KvLock(client, name, id, collected);
            return result[0].entry;
        });
        return result[0];
    }

    /** The lock of {@code id} if there is one; never makes one (a push must not bring back a dropped lock). */
    private KvLock get(String id) {
        Entry e = locks.get(id);
        return e == null ? null : e.get();
    }

    private void removeCollected() {
        Entry e;
        while ((e = (Entry) collected.poll()) != null) {
            locks.remove(e.id, e);   // unless a new lock of the name replaced it already
        }
    }

    /** The locks this client keeps track of (in use, or still referred to), for tests. */
    int trackedCount() {
        removeCollected();
        return locks.size();
    }

    private List<KvLock> all() {
        List<KvLock> all = new ArrayList<>();
        for (Entry e : locks.values()) {
            KvLock l = e.get();
            if (l != null) {
                all.add(l);
            }
        }
        return all;
    }

    /** At stop, while the connections are still open: see {@link KvLock#releaseOnStop()}. */
    void releaseAll() {
        for (KvLock l : all()) {
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
                for (KvLock l : all()) {
                    l.onReconnected();
                }
            });
        } catch (RejectedExecutionException e) {
            // the client stops
        }
    }

    void closeAll() {
        for (KvLock l : all()) {
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
                KvLock l = get(id(e.groupId(), e.key()));
                if (l != null) {
                    shared.eventExecutor.execute(() -> l.onEvent(e));
                }
                return WritePacket.response(null);
            }
        };
    }
}
