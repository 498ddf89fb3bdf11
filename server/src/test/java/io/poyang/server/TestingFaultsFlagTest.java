package io.poyang.server;

import io.poyang.net.LoopbackPorts;
import io.poyang.net.NioClient;
import io.poyang.net.NioClientConfig;
import io.poyang.net.Peer;
import io.poyang.net.RemoteException;
import io.poyang.net.ResponseCode;
import io.poyang.net.WritePacket;
import io.poyang.raft.server.TestingFaultsRequest;
import io.poyang.raft.server.TestingFaultsService;
import io.poyang.server.config.PropertiesFile;
import io.poyang.server.node.PoyangNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ./poyang server --testing-faults} (the chaos runner's partition switch): with the flag the node answers
 * TESTING_FAULTS on its service port; without it the command does not exist.
 */
class TestingFaultsFlagTest {

    @TempDir
    Path tmp;

    private PoyangNode load(String name, boolean flag) throws Exception {
        Path conf = tmp.resolve(name);
        Files.createDirectories(conf);
        int replicationPort = LoopbackPorts.pick(1)[0];
        PropertiesFile p = PropertiesFile.empty(conf.resolve("config.properties"));
        p.set("nodeId", "1");
        p.set("replicationPort", Integer.toString(replicationPort));
        p.set("servicePort", "0");
        p.set("metricsPort", "-1");
        p.set("dataDir", tmp.resolve(name + "-data").toString());
        p.writeAtomically();
        PropertiesFile s = PropertiesFile.empty(conf.resolve("servers.properties"));
        s.set("node.1", "127.0.0.1:" + replicationPort);
        s.set("group.1.members", "1");
        s.writeAtomically();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int[] code = {0};
        PoyangNode node = flag
                ? ServerCommand.load(new String[] {"--conf", conf.toString(), "--testing-faults"}, new PrintStream(out),
                new PrintStream(out), code)
                : ServerCommand.load(new String[] {"--conf", conf.toString()}, new PrintStream(out), new PrintStream(out),
                code);
        assertNotNull(node, out.toString());
        return node;
    }

    private static TestingFaultsRequest send(NioClient client, Peer peer, int... blocked) throws Exception {
        return client.sendRequest(peer, WritePacket.request(TestingFaultsService.TESTING_FAULTS,
                new TestingFaultsRequest(blocked)), TestingFaultsRequest.Decoder::new, 10_000).get(30, TimeUnit.SECONDS);
    }

    @Test
    void theFlagEnablesTheCommandAndWithoutItTheCommandDoesNotExist() throws Exception {
        PoyangNode with = load("with", true);
        PoyangNode without = load("without", false);
        with.start();
        without.start();
        NioClient client = new NioClient(new NioClientConfig());
        client.start();
        try {
            Peer a = client.addPeer("127.0.0.1:" + with.servicePort());
            assertArrayEquals(new int[] {2, 3}, send(client, a, 2, 3).blockedNodeIds());
            assertEquals(0, send(client, a).blockedNodeIds().length, "an empty list heals");
            Peer b = client.addPeer("127.0.0.1:" + without.servicePort());
            ExecutionException e = assertThrows(ExecutionException.class, () -> send(client, b, 2));
            assertTrue(e.getCause() instanceof RemoteException, e.getCause().toString());
            assertEquals(ResponseCode.COMMAND_NOT_FOUND, ((RemoteException) e.getCause()).responseCode());
        } finally {
            client.stop();
            with.stop();
            without.stop();
        }
    }
}
