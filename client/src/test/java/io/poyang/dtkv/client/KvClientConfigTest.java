package io.poyang.dtkv.client;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KvClientConfigTest {

    @Test
    void serversTakeIdsOrNumberTheAddressesInOrder() {
        Map<Integer, String> expected = new LinkedHashMap<>();
        expected.put(1, "h1:9432");
        expected.put(2, "h2:9432");
        assertEquals(expected, new KvClientConfig().servers("h1:9432, h2:9432,").raft.nodes);

        expected.clear();
        expected.put(2, "h2:9432");
        expected.put(4, "h4:9432");
        assertEquals(expected, new KvClientConfig().servers("2=h2:9432,4 = h4:9432").raft.nodes);

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new KvClientConfig().servers("two=h2:9432"));
        assertTrue(e.getMessage().contains("id=host:port or host:port, got 'two=h2:9432'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new KvClientConfig().servers("0=h:1"));
    }

    @Test
    void aSilentServerIsNoticedWithinAboutTwoSecondsByDefaultAndTheIntervalIsBounded() {
        assertEquals(1_000, new KvClientConfig().raft.net.heartbeatIntervalMillis,
                "the network layer's 10 s would notice a silent leader after the writes' 5 s deadline");
        assertEquals(250, new KvClientConfig().heartbeatIntervalMillis(250).raft.net.heartbeatIntervalMillis);
        for (long bad : new long[] {0, -1, 99, 30_001}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new KvClientConfig().heartbeatIntervalMillis(bad));
            assertTrue(e.getMessage().contains("between 100 and 30000 ms") && e.getMessage().endsWith(": " + bad),
                    e.getMessage());
        }
    }

    /** The raw field of the network config bypasses the setter: its value is checked when the client is made. */
    @Test
    void aRawHeartbeatIntervalOutsideTheBoundsIsRefusedWhenTheClientIsMade() {
        for (long bad : new long[] {0, -1, 99, 30_001}) {
            KvClientConfig config = new KvClientConfig().servers("127.0.0.1:1");
            config.raft.net.heartbeatIntervalMillis = bad;
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new KvClient(config),
                    "a raw heartbeatIntervalMillis of " + bad);
            assertTrue(e.getMessage().startsWith("KvClientConfig.raft.net.heartbeatIntervalMillis is " + bad + " ms")
                    && e.getMessage().contains("between 100 and 30000 ms")
                    && e.getMessage().contains("KvClientConfig.heartbeatIntervalMillis(ms)"), e.getMessage());
        }
        for (long good : new long[] {100, 30_000}) {
            KvClientConfig config = new KvClientConfig().servers("127.0.0.1:1");
            config.raft.net.heartbeatIntervalMillis = good;
            new KvClient(config).close();
        }
    }

    @Test
    void aWriteAttemptDefaultsToThreeSecondsAtMostTheDeadlineAndIsBounded() {
        assertEquals(3_000, new KvClientConfig().effectiveWriteAttemptMillis());
        assertEquals(2_000, new KvClientConfig().timeoutMillis(2_000).effectiveWriteAttemptMillis(),
                "the default attempt never outlasts the deadline");
        assertEquals(1_500, new KvClientConfig().writeAttemptMillis(1_500).effectiveWriteAttemptMillis());
        assertEquals(5_000, new KvClientConfig().writeAttemptMillis(5_000).effectiveWriteAttemptMillis(),
                "as long as the deadline: one attempt, never sent again after no answer");
        for (long bad : new long[] {-1, 1, 99}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new KvClientConfig().writeAttemptMillis(bad));
            assertTrue(e.getMessage().contains("at least 100 ms") && e.getMessage().endsWith(": " + bad), e.getMessage());
        }
        KvClientConfig over = new KvClientConfig().writeAttemptMillis(4_000).timeoutMillis(3_000).servers("127.0.0.1:1");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new KvClient(over));
        assertTrue(e.getMessage().contains("writeAttemptMillis is 4000 ms")
                && e.getMessage().contains("timeoutMillis (3000 ms)") && e.getMessage().contains("set 0 for the default"),
                e.getMessage());
    }

    @Test
    void aReadAttemptDefaultsToThreeSecondsAtMostTheDeadlineAndIsBounded() {
        assertEquals(3_000, new KvClientConfig().effectiveReadAttemptMillis());
        assertEquals(2_000, new KvClientConfig().timeoutMillis(2_000).effectiveReadAttemptMillis(),
                "the default attempt never outlasts the deadline");
        assertEquals(1_500, new KvClientConfig().readAttemptMillis(1_500).effectiveReadAttemptMillis());
        for (long bad : new long[] {-1, 1, 99}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new KvClientConfig().readAttemptMillis(bad));
            assertTrue(e.getMessage().startsWith("readAttemptMillis must be 0") && e.getMessage().contains("at least 100 ms")
                    && e.getMessage().endsWith(": " + bad), e.getMessage());
        }
        KvClientConfig over = new KvClientConfig().readAttemptMillis(4_000).timeoutMillis(3_000).servers("127.0.0.1:1");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new KvClient(over));
        assertTrue(e.getMessage().contains("readAttemptMillis is 4000 ms") && e.getMessage().contains("the read's deadline")
                && e.getMessage().contains("timeoutMillis (3000 ms)") && e.getMessage().contains("set 0 for the default"),
                e.getMessage());
    }
}
