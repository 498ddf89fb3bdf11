package io.poyang.net;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free TCP ports on loopback for nodes that must know their ports before they bind them (a
 * cluster's configuration names every node's address up front).
 *
 * <p>Why not simply let the OS pick ({@code new ServerSocket(0)})? The OS picks such a port from its
 * ephemeral range, the same range it takes the local ports of outgoing connections from. Between
 * the pick and the node's bind, the nodes already started connect to each other and to the port
 * that is not yet listening, and one of those connections can get exactly the picked port as its
 * local port: the node then fails to start with "address already in use". A port outside the
 * ephemeral range is never given to an outgoing connection, so only another program binding it
 * explicitly could take it. The range is read from Linux's
 * {@code /proc/sys/net/ipv4/ip_local_port_range}; elsewhere the ports are taken below 32768, under
 * the ephemeral ranges of Linux, the BSDs, macOS and Windows.
 */
public final class LoopbackPorts {

    /** Lowest port handed out: above the well-known and most registered service ports. */
    static final int LOWEST = 10_000;
    /** The fewest ports below the ephemeral range worth searching; with fewer, the OS picks. */
    private static final int MIN_RANGE = 1_000;
    private static final Path LINUX_RANGE = Paths.get("/proc/sys/net/ipv4/ip_local_port_range");

    private LoopbackPorts() {
    }

    /**
     * {@code count} different ports that nothing listens on now, outside the ephemeral range when
     * there is room for it. All are held bound together while picking, so they differ; they are
     * released on return, for the caller to bind.
     *
     * @throws IOException when not enough free ports were found
     */
    public static int[] pick(int count) throws IOException {
        if (count < 1) {
            throw new IllegalArgumentException("count must be at least 1: " + count);
        }
        int below = ephemeralLow(LINUX_RANGE);
        List<ServerSocket> held = new ArrayList<>(count);
        int[] ports = new int[count];
        try {
            if (below - LOWEST < MIN_RANGE) {
                // no room below the ephemeral range (an unusual system setting): the OS's picks will do
                for (int i = 0; i < count; i++) {
                    ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                    held.add(s);
                    ports[i] = s.getLocalPort();
                }
                return ports;
            }
            int span = below - LOWEST;
            int start = ThreadLocalRandom.current().nextInt(span);
            int found = 0;
            for (int tried = 0; tried < span && found < count; tried++) {
                int port = LOWEST + (start + tried) % span;
                ServerSocket s = tryBind(port);
                if (s != null) {
                    held.add(s);
                    ports[found++] = port;
                }
            }
            if (found < count) {
                throw new IOException("found only " + found + " free loopback ports of the " + count + " needed in "
                        + LOWEST + "-" + (below - 1));
            }
            return ports;
        } finally {
            for (ServerSocket s : held) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // closing a socket that only listened cannot lose anything
                }
            }
        }
    }

    /** The first port of the ephemeral range in {@code rangeFile} ("low high"), or 32768 when unreadable. */
    static int ephemeralLow(Path rangeFile) {
        try {
            String[] parts = new String(Files.readAllBytes(rangeFile), StandardCharsets.US_ASCII).trim().split("\\s+");
            int low = Integer.parseInt(parts[0]);
            return low > 0 && low <= 65535 ? low : 32768;
        } catch (IOException | RuntimeException e) {
            return 32768;
        }
    }

    private static ServerSocket tryBind(int port) {
        try {
            return new ServerSocket(port, 1, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            return null;  // in use (or not allowed): try the next one
        }
    }
}
