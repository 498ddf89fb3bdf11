package io.poyang.dtkv.cluster;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvException;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvWatchReq;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvWatch;
import io.poyang.dtkv.client.KvWatchListener;
import io.poyang.dtkv.client.WatchRegistrations;
import io.poyang.dtkv.server.KvConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * KvConfig.maxWatchesPerConnection through a real client: a refused registration reaches the
 * listener, and the client does not send the refused keys again (a resend would be refused again,
 * and one in a full re-sync would have the node refuse that whole, silencing every watch).
 */
class WatchCountLimitTest {

    @TempDir
    Path dir;

    /** Records what a watch hears. */
    private static final class Recorder implements KvWatchListener {
        final List<String> changes = new CopyOnWriteArrayList<>();
        final List<KvException> errors = new CopyOnWriteArrayList<>();

        @Override
        public void onChange(String watchKey, KvNode node) {
            changes.add(node.key() + "=" + (node.exists() ? node.valueAsString() : "-"));
        }

        @Override
        public void onError(KvException error) {
            errors.add(error);
        }
    }

    @Test
    void aWatchOverTheNodesLimitIsToldAndTheWatchesWithinItGoOn() throws Exception {
        KvConfig kv = new KvConfig();
        kv.maxWatchesPerConnection = 3;
        try (KvTestCluster c = new KvTestCluster(dir, 1, KvTestCluster.testConfig(), kv).start()) {
            KvClient client = c.client();
            List<KvWatchReq> sent = WatchRegistrations.record(client);
            Recorder within = new Recorder();
            KvWatch first = client.watch(within, "a", "b");
            KvTestCluster.waitFor("the current state of a and b", 10, () -> within.changes.size() == 2);
            Recorder over = new Recorder();
            KvWatch second = client.watch(over, "c", "d");   // 4 keys on one connection: over the limit of 3
            KvTestCluster.waitFor("the refusal to reach the listener", 10, () -> !over.errors.isEmpty());
            KvException e = over.errors.get(0);
            assertEquals(KvCode.TOO_MANY_WATCHES, e.kvCode());
            assertTrue(e.getMessage().contains("limit of 3"), e.getMessage());
            assertTrue(within.errors.isEmpty(), "the watch within the limit was told of an error: " + within.errors);
            client.put("c", "1");
            client.put("a", "1");
            KvTestCluster.waitFor("the change of a", 10, () -> within.changes.contains("a=1"));
            assertTrue(over.changes.isEmpty(), "the refused watch heard " + over.changes);
            // the client does not send the refused keys again (they would be refused again, and the
            // whole set with them). A resend tells no listener, so the sends are what is looked at;
            // nothing to wait for but time, a resend being spontaneous:
            Thread.sleep(5 * WatchRegistrations.RESEND_INTERVAL_MILLIS);   // the thing under test: five resend periods
            assertEquals(1, carrying(sent, "c", "d").size(), "the refused keys were sent again: " + sent);
            assertEquals(1, over.errors.size(), "refusals: " + over.errors);
            assertTrue(within.errors.isEmpty(), "the watch within the limit was told of an error: " + within.errors);
            second.close();
            first.close();
        }
    }

    /**
     * A refused registration must not be sent again with the client's others when they are all
     * registered again (here after a restart of the group on its only node, whose new state machine
     * has no watch): the node refuses a registration whole, and every watch would go silent.
     */
    @Test
    void theWatchesWithinTheLimitGoOnAfterALeaderChangeWhenAnotherWasRefused() throws Exception {
        KvConfig kv = new KvConfig();
        kv.maxWatchesPerConnection = 3;
        try (KvTestCluster c = new KvTestCluster(dir, 1, KvTestCluster.testConfig(), kv).start()) {
            KvClient client = c.client();
            List<KvWatchReq> sent = WatchRegistrations.record(client);
            Recorder within = new Recorder();
            client.watch(within, "a", "b");
            KvTestCluster.waitFor("the current state of a and b", 10, () -> within.changes.size() == 2);
            Recorder over = new Recorder();
            client.watch(over, "c", "d");   // 4 keys on one connection: over the limit of 3
            KvTestCluster.waitFor("the refusal to reach the listener", 10, () -> !over.errors.isEmpty());

            // the watches move: the client registers them all again with the (new) state machine
            c.cluster.server(1).restartGroup(1).get(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            c.leader();
            client.put("a", "1");
            KvTestCluster.waitFor("the change of a, or an error", () -> within.changes.contains("a=1")
                    || !within.errors.isEmpty());
            assertTrue(within.errors.isEmpty(), "the watch within the limit was refused after the restart: "
                    + within.errors);
            assertTrue(over.changes.isEmpty(), "the refused watch heard " + over.changes);
            assertEquals(1, carrying(sent, "c", "d").size(), "the refused keys were sent again: " + sent);
        }
    }

    /** The registrations in {@code sent} that ask to watch one of {@code keys} (adds and full re-syncs). */
    private static List<KvWatchReq> carrying(List<KvWatchReq> sent, String... keys) {
        List<KvWatchReq> found = new ArrayList<>();
        for (KvWatchReq r : sent) {
            if (!r.isRemove() && r.keys().stream().anyMatch(Arrays.asList(keys)::contains)) {
                found.add(r);
            }
        }
        return found;
    }
}
