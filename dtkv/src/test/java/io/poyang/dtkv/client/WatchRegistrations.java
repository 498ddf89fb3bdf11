package io.poyang.dtkv.client;

import io.poyang.dtkv.KvWatchReq;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * For cluster tests: the watch registrations a client sends (adds, removes, full re-syncs), as it
 * hands them to its raft client. A registration sent again in the background tells no listener, so
 * this is how a test sees that a key the leader refused is not sent again.
 */
public final class WatchRegistrations {

    /**
     * How soon the client sends its registrations again after one failed (its re-sync retry): a test
     * that nothing is sent again waits several of these.
     */
    public static final long RESEND_INTERVAL_MILLIS = KvWatches.RESYNC_RETRY_MILLIS;

    private WatchRegistrations() {
    }

    /** A list that gets every registration {@code kv} sends from now on, in the order sent. */
    public static List<KvWatchReq> record(KvClient kv) {
        List<KvWatchReq> sent = new CopyOnWriteArrayList<>();
        kv.shared.watches.hearSendsForTests(sent::add);
        return sent;
    }
}
