package io.poyang.raft.core;

import java.lang.reflect.Field;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Reads, for tests, what a leader holds in memory for its followers: the tail cache and each
 * replicator's unanswered requests. Every figure is read on the group's dispatcher (one step), so
 * it belongs to one moment; the replicator's counters are private, hence the reflection.
 */
public final class ReplicationMemoryProbe {

    private ReplicationMemoryProbe() {
    }

    /** {tail cache items, tail cache bytes} of {@code g}. */
    public static long[] tailCache(RaftGroup g) {
        return join(g.callInGroup(() -> new long[]{g.tailCache.size(), g.tailCache.bytes()}));
    }

    /**
     * {in-flight items, in-flight bytes, requests in flight} of the leader's replicator to
     * {@code peerId}, or null when {@code g} has none (not leading).
     */
    public static long[] inflight(RaftGroup g, int peerId) {
        return join(g.callInGroup(() -> {
            Replicator r = g.replicatorOf(peerId);
            if (r == null) {
                return null;
            }
            int items = (Integer) read(r, "inflightItems");
            long bytes = (Long) read(r, "inflightBytes");
            int requests = ((java.util.ArrayDeque<?>) read(r, "inflight")).size();
            return new long[]{items, bytes, requests};
        }));
    }

    /** Reads a (private) field of {@code o}, looking in its class and the superclasses. */
    public static Object read(Object o, String name) {
        for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(o);
            } catch (NoSuchFieldException e) {
                // look in the superclass
            } catch (IllegalAccessException e) {
                throw new IllegalStateException("cannot read " + name + " of " + o.getClass(), e);
            }
        }
        throw new IllegalArgumentException(o.getClass() + " has no field " + name);
    }

    private static <T> T join(CompletableFuture<T> f) {
        try {
            return f.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("could not read the group's figures", e);
        }
    }
}
