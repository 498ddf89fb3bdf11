package io.poyang.server.node;

import io.poyang.net.LoopbackPorts;
import io.poyang.server.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A start that fails after the data directory was taken leaves nothing behind — no lock on the
 * directory, no thread, no open port — so an embedding can retry it in the same JVM, on the same
 * {@link PoyangNode}, and that node then runs and stops like any other.
 */
class FailedStartTest {

    private static final long THREADS_END_TIMEOUT_MILLIS = 30_000;

    @TempDir
    Path tmp;

    @Test
    void aStartRefusedForAPortInUseCanBeRetriedAndReleasesTheDirectoryAndThreads() throws Exception {
        Set<Thread> before = nonDaemonThreads();
        int servicePort = LoopbackPorts.pick(1)[0];
        Path data = tmp.resolve("data");
        PoyangNode node = InProcessNodes.singleNode(tmp.resolve("config.properties"), data,
                Collections.singletonMap("servicePort", String.valueOf(servicePort)));
        try (ServerSocket taken = new ServerSocket(servicePort, 1, InetAddress.getLoopbackAddress())) {
            NodeStartException e = assertThrows(NodeStartException.class, node::start);
            assertTrue(e.getMessage().contains("servicePort"), e.getMessage());
        }
        assertDirectoryFree(data);

        InProcessNodes.runAndStop(node);
        assertDirectoryFree(data);
        awaitNoThreadLeftSince(before);
    }

    @Test
    void aGroupThatCannotStartStopsEverythingStartedBeforeItAndTheStartCanBeRetried() throws Exception {
        Set<Thread> before = nonDaemonThreads();
        int servicePort = LoopbackPorts.pick(1)[0];
        Path data = Files.createDirectories(tmp.resolve("data"));
        // a file where group 1's directory goes: the raft server is up (threads, both ports) when the group fails
        Path groupDir = Files.write(data.resolve("group-1"), new byte[]{1});
        PoyangNode node = InProcessNodes.singleNode(tmp.resolve("config.properties"), data,
                Collections.singletonMap("servicePort", String.valueOf(servicePort)));
        NodeStartException e = assertThrows(NodeStartException.class, node::start);
        assertTrue(e.getMessage().startsWith("group 1 cannot start"), e.getMessage());
        assertDirectoryFree(data);
        awaitNoThreadLeftSince(before);
        try (ServerSocket reopened = new ServerSocket(servicePort, 1, InetAddress.getLoopbackAddress())) {
            assertTrue(reopened.isBound(), "the service port was closed");
        }

        Files.delete(groupDir);
        InProcessNodes.runAndStop(node);
        assertDirectoryFree(data);
        awaitNoThreadLeftSince(before);
    }

    /** Nobody in this JVM holds the directory: it can be taken (and is given back). */
    private static void assertDirectoryFree(Path data) {
        try {
            DataDir.open(data, 1).close();
        } catch (NodeStartException e) {
            throw new AssertionError("the data directory is still held: " + e.getMessage(), e);
        }
    }

    private static Set<Thread> nonDaemonThreads() {
        Set<Thread> live = new HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && !t.isDaemon()) {
                live.add(t);
            }
        }
        return live;
    }

    /** Waits until every non-daemon thread started since {@code before} has ended (executors end theirs asynchronously). */
    private static void awaitNoThreadLeftSince(Set<Thread> before) throws Exception {
        try {
            Await.until("the node's non-daemon threads to end", THREADS_END_TIMEOUT_MILLIS,
                    () -> newThreads(before).isEmpty());
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; still running: " + newThreads(before), e);
        }
    }

    private static List<String> newThreads(Set<Thread> before) {
        return nonDaemonThreads().stream().filter(t -> !before.contains(t)).map(Thread::getName).sorted()
                .collect(Collectors.toList());
    }
}
