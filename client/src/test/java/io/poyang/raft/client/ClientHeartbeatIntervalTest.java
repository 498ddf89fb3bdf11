package io.poyang.raft.client;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A RaftClient's and an AdminClient's heartbeat interval has the bounds a KvClient's has
 * (KvClientConfigTest): through the config's setter, and through the raw {@code net} field, which
 * is checked when the client is made. Neither client is started: nothing here needs a connection.
 */
class ClientHeartbeatIntervalTest {

    private static final long[] OUT_OF_BOUNDS = {0, -1, 99, 30_001};

    private static void assertSetterRefuses(long bad, Runnable setter) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, setter::run, "an interval of " + bad);
        assertTrue(e.getMessage().contains("between 100 and 30000 ms") && e.getMessage().endsWith(": " + bad),
                e.getMessage());
    }

    private static void assertRawRefused(long bad, String config, Runnable makeClient) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, makeClient::run,
                "a raw heartbeatIntervalMillis of " + bad);
        assertTrue(e.getMessage().startsWith(config + ".net.heartbeatIntervalMillis is " + bad + " ms")
                && e.getMessage().contains("between 100 and 30000 ms")
                && e.getMessage().contains(config + ".heartbeatIntervalMillis(ms)"), e.getMessage());
    }

    @Test
    void aRaftClientsIntervalIsBoundedThroughTheSetter() {
        assertEquals(1_000, new RaftClientConfig().net.heartbeatIntervalMillis);
        assertEquals(250, new RaftClientConfig().heartbeatIntervalMillis(250).net.heartbeatIntervalMillis);
        for (long bad : OUT_OF_BOUNDS) {
            assertSetterRefuses(bad, () -> new RaftClientConfig().heartbeatIntervalMillis(bad));
        }
    }

    @Test
    void aRaftClientsRawIntervalOutsideTheBoundsIsRefusedWhenTheClientIsMade() {
        for (long bad : OUT_OF_BOUNDS) {
            RaftClientConfig config = new RaftClientConfig().node(1, "127.0.0.1:1");
            config.net.heartbeatIntervalMillis = bad;
            assertRawRefused(bad, "RaftClientConfig", () -> new RaftClient(config).stop());
        }
        for (long good : new long[] {ClientHeartbeatInterval.MIN_MILLIS, ClientHeartbeatInterval.MAX_MILLIS}) {
            RaftClientConfig config = new RaftClientConfig().node(1, "127.0.0.1:1");
            config.net.heartbeatIntervalMillis = good;
            new RaftClient(config).stop();
        }
    }

    @Test
    void anAdminClientsIntervalIsBoundedThroughTheSetter() {
        assertEquals(1_000, new AdminClientConfig().net.heartbeatIntervalMillis);
        assertEquals(250, new AdminClientConfig().heartbeatIntervalMillis(250).net.heartbeatIntervalMillis);
        for (long bad : OUT_OF_BOUNDS) {
            assertSetterRefuses(bad, () -> new AdminClientConfig().heartbeatIntervalMillis(bad));
        }
    }

    @Test
    void anAdminClientsRawIntervalOutsideTheBoundsIsRefusedWhenTheClientIsMade() {
        for (long bad : OUT_OF_BOUNDS) {
            AdminClientConfig config = new AdminClientConfig().node(1, "127.0.0.1:1");
            config.net.heartbeatIntervalMillis = bad;
            assertRawRefused(bad, "AdminClientConfig", () -> new AdminClient(config).close());
        }
        for (long good : new long[] {ClientHeartbeatInterval.MIN_MILLIS, ClientHeartbeatInterval.MAX_MILLIS}) {
            AdminClientConfig config = new AdminClientConfig().node(1, "127.0.0.1:1");
            config.net.heartbeatIntervalMillis = good;
            new AdminClient(config).close();
        }
    }
}
