package io.poyang.raft.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Random;


/**
 * Writes go on while the network loses and delays messages and nodes are cut off and come back,
 * in a seeded random order; at the end every node holds the same values, each at most once, and
 * every acknowledged write is among them.
 */
class FaultyNetworkTest {

    @TempDir
    Path dir;

    @Test
    void lostDelayedAndPartitionedMessagesLoseNoAcknowledgedWrite() {
        long seed = Long.getLong("poyang.faultSeed", System.nanoTime());
        Random rnd = new Random(seed);
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1},
                rc -> rc.replicationTimeoutMillis(600)).start()) {
            c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 50, 1_000_000);
            load.awaitAcknowledged(500);
            for (int round = 0; round < 8; round++) {
                int a = 1 + rnd.nextInt(3);
                int b = a % 3 + 1;
                int leader = c.waitForLeader(1);
                if (round % 4 == 3) {
                    a = leader;   // now and then the leader itself is cut off
                }
                switch (round % 4 == 3 ? 2 : rnd.nextInt(3)) {
                    case 0:
                        c.faults.dropRate(0.1);
                        break;
                    case 1:
                        c.faults.delay(a, b, 5 + rnd.nextInt(30)).delay(b, a, 5 + rnd.nextInt(30));
                        break;
                    default:
                        c.faults.isolate(a);
                        break;
                }
                long before = load.acknowledgedCount();
                // progress despite the fault (a cut-off leader is replaced), or after healing
                try {
                    RaftCluster.waitFor("writes during fault round " + round + " (seed " + seed + ")", 10,
                            () -> load.acknowledgedCount() >= before + 3_000);
                } finally {
                    c.faults.heal();
                }
            }
            load.awaitAcknowledged(load.acknowledgedCount() + 200);
            load.close();
            long[] values = c.checkIdentical(1);
            load.checkApplied(values, " (seed " + seed + ")");
        }
    }
}
