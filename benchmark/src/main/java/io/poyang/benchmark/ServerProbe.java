package io.poyang.benchmark;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Checks, before a run against {@code --servers}, that each listed address accepts a TCP
 * connection, all at once and within a short budget. Without it a wrong port or a stopped node
 * showed only after the client's 10 s connect wait; a refused connection is known at once and a
 * silent address costs the budget. The connections are closed as soon as they are made: nothing
 * is sent.
 */
public final class ServerProbe {

    /** How long the probe waits, in all, for addresses that neither accept nor refuse. */
    public static final long BUDGET_MILLIS = 1_500;

    private ServerProbe() {
    }

    /**
     * Throws {@link RunFailedException} naming every address of {@code servers} ("host:port", as
     * --servers checked them) that could not be reached within {@code budgetMillis}, and why, with
     * what to check.
     */
    public static void requireReachable(List<String> servers, long budgetMillis) throws RunFailedException {
        String[] problems = problems(servers, budgetMillis);
        StringBuilder unreachable = new StringBuilder();
        for (int i = 0; i < problems.length; i++) {
            if (problems[i] != null) {
                unreachable.append(unreachable.length() == 0 ? "" : ", ").append(servers.get(i))
                        .append(" (").append(problems[i]).append(')');
            }
        }
        if (unreachable.length() > 0) {
            throw new RunFailedException("cannot reach " + unreachable + ": check that the nodes are running and that"
                    + " --servers lists their service ports (the 'service' address in each node's ready line), not their"
                    + " replication or metrics ports");
        }
    }

    /** Why each address could not be reached, by position in {@code servers}; null for those that could. */
    static String[] problems(List<String> servers, long budgetMillis) {
        String[] problems = new String[servers.size()];
        List<SocketChannel> channels = new ArrayList<>();
        try (Selector selector = Selector.open()) {
            int waiting = 0;
            for (int i = 0; i < servers.size(); i++) {
                try {
                    // resolves the host name here, blocking: a slow DNS can exceed the budget
                    InetSocketAddress address = address(servers.get(i));
                    if (address.isUnresolved()) {
                        problems[i] = "unknown host";
                        continue;
                    }
                    SocketChannel channel = SocketChannel.open();
                    channels.add(channel);
                    channel.configureBlocking(false);
                    if (!channel.connect(address)) {
                        channel.register(selector, SelectionKey.OP_CONNECT, i);
                        waiting++;
                    }
                } catch (IOException | RuntimeException e) {
                    problems[i] = describe(e);
                }
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(budgetMillis);
            while (waiting > 0) {
                long leftMillis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (leftMillis <= 0) {
                    break;
                }
                selector.select(leftMillis);
                for (SelectionKey key : selector.selectedKeys()) {
                    int i = (Integer) key.attachment();
                    try {
                        ((SocketChannel) key.channel()).finishConnect();
                    } catch (IOException e) {
                        problems[i] = describe(e);
                    }
                    key.cancel();
                    waiting--;
                }
                selector.selectedKeys().clear();
            }
            for (SelectionKey key : selector.keys()) {
                if (key.isValid()) {
                    problems[(Integer) key.attachment()] = "no answer within " + budgetMillis + " ms";
                }
            }
        } catch (IOException e) {
            // no selector: the probe cannot tell; the client's own connect wait still will
            return new String[servers.size()];
        } finally {
            for (SocketChannel c : channels) {
                try {
                    c.close();
                } catch (IOException e) {
                    // a probe's socket: nothing was sent on it
                }
            }
        }
        return problems;
    }

    /** "host:port", "[v6]:port": the address, resolved when the host name can be. */
    /** The address part of a --servers entry, "id=host:port" or "host:port". */
    static String hostPortOf(String entry) {
        int eq = entry.indexOf('=');
        return eq < 0 ? entry : entry.substring(eq + 1).trim();
    }

    private static InetSocketAddress address(String entry) {
        String hostPort = hostPortOf(entry);
        int colon = hostPort.lastIndexOf(':');
        String host = hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return new InetSocketAddress(host, Integer.parseInt(hostPort.substring(colon + 1)));
    }

    private static String describe(Exception e) {
        String m = e.getMessage();
        // "Connection refused" reads as part of the sentence it goes in
        return m == null || m.isEmpty() ? e.getClass().getSimpleName() : Character.toLowerCase(m.charAt(0)) + m.substring(1);
    }
}
