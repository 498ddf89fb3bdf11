package io.poyang.benchmark;

import io.poyang.net.LoopbackPorts;
import org.junit.jupiter.api.Test;

import java.util.Collections;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LeaderPlacementTest {

    /** A transfer that cannot be made fails the run, naming the group, not with a stack trace. */
    @Test
    void aTransferThatFailsNamesTheGroup() throws Exception {
        // nothing listens there: no node answers, so no leader is found before the timeout
        String nobody = "127.0.0.1:" + LoopbackPorts.pick(1)[0];
        RunFailedException e = assertThrows(RunFailedException.class, () -> LeaderPlacement.moveAll(
                Collections.singletonMap(1, nobody), 2, 1, 300));
        assertTrue(e.getMessage().startsWith("--leaders 1: could not move the leader of group 1 to node 1"), e.getMessage());
    }
}
