package io.poyang.raft.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MultiGroupTest {

    @TempDir
    Path dir;

    @Test
    void twentyGroupsOnThreeNodesShareTwoDispatchersPerNodeAndEachStaysConsistent() {
        int[] groups = new int[20];
        for (int i = 0; i < groups.length; i++) {
            groups[i] = i + 1;
        }
        try (RaftCluster c = new RaftCluster(dir, 3, groups).start()) {
            List<LoadGenerator> loads = new ArrayList<>();
            for (int g : groups) {
                c.waitForLeader(g);
                loads.add(new LoadGenerator(c, g, 20, g * 10_000_000L));
            }
            for (LoadGenerator l : loads) {
                l.awaitAcknowledged(1_000);
            }
            for (LoadGenerator l : loads) {
                l.close();
            }
            Set<String> dispatchers = new HashSet<>();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith("raft-1-dispatcher-")) {
                    dispatchers.add(t.getName());
                }
            }
            assertEquals(2, dispatchers.size(), "node 1 runs its 20 groups on its 2 dispatchers");
            for (int i = 0; i < groups.length; i++) {
                long[] values = c.checkIdentical(groups[i]);
                Set<Long> applied = new HashSet<>();
                for (long v : values) {
                    applied.add(v);
                    assertTrue(v / 10_000_000L == groups[i], "group " + groups[i] + " holds value " + v + " of another");
                }
                for (long v : loads.get(i).acknowledged) {
                    assertTrue(applied.contains(v), "group " + groups[i] + " lost acknowledged value " + v);
                }
            }
        }
    }
}
