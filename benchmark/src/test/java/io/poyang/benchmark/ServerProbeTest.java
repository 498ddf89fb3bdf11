package io.poyang.benchmark;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

class ServerProbeTest {

    /** A loopback port nothing listens on: a connection to it is refused at once. */
    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static String loopback(int port) {
        return "127.0.0.1:" + port;
    }

    @Test
    void listeningServersPass() throws Exception {
        try (ServerSocket a = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
             ServerSocket b = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            List<String> servers = Arrays.asList(loopback(a.getLocalPort()), loopback(b.getLocalPort()));
            assertArrayEquals(new String[2], ServerProbe.problems(servers, 1_000));
            ServerProbe.requireReachable(servers, 1_000);
        }
    }

    @Test
    void entriesWithNodeIdsAreProbedAtTheirAddresses() throws Exception {
        try (ServerSocket a = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            List<String> servers = Arrays.asList("7=" + loopback(a.getLocalPort()), "9=" + loopback(closedPort()));
            String[] problems = ServerProbe.problems(servers, 1_000);
            assertEquals(null, problems[0]);
            assertTrue(problems[1] != null, "the closed port of node 9 was not reported");
        }
    }

    @Test
    void onlyTheUnreachableAddressesAreNamedWithWhyAndWhatToCheck() throws Exception {
        try (ServerSocket live = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            String up = loopback(live.getLocalPort());
            String down = loopback(closedPort());
            String unknown = "no-such-host.invalid:9432";
            RunFailedException e = assertThrows(RunFailedException.class,
                    () -> ServerProbe.requireReachable(Arrays.asList(down, up, unknown), 1_000));
            String m = e.getMessage();
            assertTrue(m.startsWith("cannot reach " + down + " (connection refused), " + unknown + " (unknown host): check"), m);
            assertFalse(m.contains(up), "the reachable one is not named: " + m);
            assertTrue(m.contains("service port"), "what to check: " + m);
            assertFalse(m.contains("\n"), "one line: " + m);
        }
    }

    /**
     * A server whose accept queue is full drops new connection attempts without an answer, like a
     * firewalled or powered-off host: the probe gives up when its budget runs out, not later.
     */
    @Test
    void anAddressThatDoesNotAnswerIsGivenUpWhenTheBudgetRunsOut() throws Exception {
        List<Socket> queued = new ArrayList<>();
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), silent.getLocalPort());
            // fill its accept queue (nothing accepts): the next connect gets no answer
            boolean full = false;
            for (int i = 0; i < 50 && !full; i++) {
                Socket s = new Socket();
                queued.add(s);
                try {
                    s.connect(address, 200);
                } catch (SocketTimeoutException e) {
                    full = true;
                }
            }
            org.junit.jupiter.api.Assumptions.assumeTrue(full, "this kernel answered every connection attempt");
            long start = System.nanoTime();
            String[] problems = ServerProbe.problems(Collections.singletonList(loopback(silent.getLocalPort())), 300);
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals("no answer within 300 ms", problems[0]);
            assertTrue(tookMillis >= 250 && tookMillis < 2_000, "took " + tookMillis + " ms");
        } finally {
            for (Socket s : queued) {
                s.close();
            }
        }
    }

    /** Before, the client's 10 s connect wait ran out first, and its log lines said so one by one. */
    @Test
    void benchAgainstAnUnreachableServerFailsWithinTwoSecondsInOneLine() throws Exception {
        String down = loopback(closedPort());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        long start = System.nanoTime();
        int code = BenchCommand.run(new String[]{"--servers", down, "--duration", "1s", "--warmup", "0"},
                new PrintStream(out, true), new PrintStream(err, true));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        String e = new String(err.toByteArray(), StandardCharsets.UTF_8);
        assertEquals(1, code, e);
        assertTrue(tookMillis < 2_000, "took " + tookMillis + " ms");
        String[] lines = e.trim().split("\n");
        assertEquals(1, lines.length, e);
        assertTrue(lines[0].startsWith("poyang bench: the run failed: cannot reach " + down + " (connection refused): check"), e);
    }
}
