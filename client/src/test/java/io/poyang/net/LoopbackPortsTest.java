package io.poyang.net;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.*;

class LoopbackPortsTest {

    @TempDir
    Path tmp;

    @Test
    void picksDifferentFreePortsBelowTheEphemeralRange() throws Exception {
        int low = LoopbackPorts.ephemeralLow(Paths.get("/proc/sys/net/ipv4/ip_local_port_range"));
        int[] ports = LoopbackPorts.pick(12);
        Set<Integer> distinct = new HashSet<>();
        for (int p : ports) {
            assertTrue(distinct.add(p), "picked twice: " + p);
            if (low - LoopbackPorts.LOWEST >= 1_000) {
                assertTrue(p >= LoopbackPorts.LOWEST && p < low, p + " is outside " + LoopbackPorts.LOWEST + "-" + (low - 1));
            }
            // released on return: the caller can bind it
            try (ServerSocket s = new ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
                assertEquals(p, s.getLocalPort());
            }
        }
    }

    @Test
    void aPortSomebodyListensOnIsNotPicked() throws Exception {
        int[] first = LoopbackPorts.pick(1);
        try (ServerSocket taken = new ServerSocket(first[0], 1, InetAddress.getLoopbackAddress())) {
            for (int round = 0; round < 50; round++) {
                for (int p : LoopbackPorts.pick(20)) {
                    assertNotEquals(taken.getLocalPort(), p);
                }
            }
        }
    }

    @Test
    void theEphemeralRangeIsReadFromTheKernelFileOrAssumedFrom32768() throws Exception {
        Path f = tmp.resolve("range");
        Files.write(f, "40000\t60999\n".getBytes(StandardCharsets.US_ASCII));
        assertEquals(40000, LoopbackPorts.ephemeralLow(f));
        Files.write(f, "garbage".getBytes(StandardCharsets.US_ASCII));
        assertEquals(32768, LoopbackPorts.ephemeralLow(f));
        assertEquals(32768, LoopbackPorts.ephemeralLow(tmp.resolve("missing")));
    }

    @Test
    void aCountBelowOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> LoopbackPorts.pick(0));
    }
}
