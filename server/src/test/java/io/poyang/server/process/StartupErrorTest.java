package io.poyang.server.process;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.net.LoopbackPorts;
import io.poyang.server.ServerCommand;
import io.poyang.server.config.NodeConfig;
import io.poyang.server.config.ServersConfig;
import io.poyang.server.node.PoyangNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each way a node refuses to start, through {@code ServerCommand.run} (what {@code ./poyang server}
 * runs): exit code 1 and one stderr line that names the cause. The PID lock test holds the data
 * directory with a real node process.
 */
class StartupErrorTest {

    @TempDir
    Path tmp;

    /** A single-node configuration from the sample, on free ports, data in tmp/data. */
    private Path conf(Map<String, String> extra) throws Exception {
        int[] p = LoopbackPorts.pick(3);
        TestConf.Ports ports = new TestConf.Ports(p[0], p[1], p[2]);
        return TestConf.write(TestConf.samples().resolve("single"), tmp.resolve("conf"), ports, tmp.resolve("data"),
                Collections.singletonMap(1, ports), extra);
    }

    private static String[] runServer(Path conf) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = ServerCommand.run(new String[]{"--conf", conf.toString()}, new PrintStream(out, true),
                new PrintStream(err, true));
        return new String[]{String.valueOf(code), new String(out.toByteArray(), StandardCharsets.UTF_8),
                new String(err.toByteArray(), StandardCharsets.UTF_8)};
    }

    /** Runs the server expecting it to refuse; returns its stderr. */
    private static String refused(Path conf) {
        String[] r = runServer(conf);
        assertEquals("1", r[0], "exit code; stderr: " + r[2]);
        assertEquals("", r[1], "nothing on stdout (no ready line)");
        assertTrue(r[2].startsWith("poyang server: cannot start: "), r[2]);
        return r[2];
    }

    private static void append(Path file, String line) throws Exception {
        Files.write(file, ("\n" + line + "\n").getBytes(StandardCharsets.UTF_8), java.nio.file.StandardOpenOption.APPEND);
    }

    @Test
    void anInvalidValueIsNamedWithItsKeyLineAndReason() throws Exception {
        Path conf = conf(Collections.singletonMap("electionTimeoutMillis", "ten"));
        String err = refused(conf);
        assertTrue(err.contains("config.properties:"), err);
        assertTrue(err.contains("electionTimeoutMillis = 'ten': not a whole number"), err);
    }

    @Test
    void anOutOfRangeValueSaysTheRange() throws Exception {
        String err = refused(conf(Collections.singletonMap("servicePort", "70000")));
        assertTrue(err.contains("servicePort = '70000': out of range; it must be between 0 and 65535"), err);
    }

    @Test
    void anUnknownKeyIsRefusedWithASuggestion() throws Exception {
        Path conf = conf(Collections.emptyMap());
        append(conf.resolve("config.properties"), "electionTimeoutMs = 500");
        String err = refused(conf);
        assertTrue(err.contains("unknown key 'electionTimeoutMs' (did you mean 'electionTimeoutMillis'?)"), err);
    }

    @Test
    void aServersFileThatDoesNotListThisNodeIsRefused() throws Exception {
        Path conf = conf(Collections.singletonMap("nodeId", "7"));
        String err = refused(conf);
        assertTrue(err.contains("servers.properties has no node.7 line"), err);
    }

    @Test
    void aGroupMemberWithoutAnAddressIsRefused() throws Exception {
        Path conf = conf(Collections.emptyMap());
        String text = new String(Files.readAllBytes(conf.resolve("servers.properties")), StandardCharsets.UTF_8)
                .replace("group.1.members = 1", "group.1.members = 1,2");
        Files.write(conf.resolve("servers.properties"), text.getBytes(StandardCharsets.UTF_8));
        String err = refused(conf);
        assertTrue(err.contains("group.1.members = '1,2': node 2 has no node.2 line"), err);
    }

    @Test
    void aMissingConfigFileOrDirectoryIsNamed() throws Exception {
        Path conf = conf(Collections.emptyMap());
        Files.delete(conf.resolve("config.properties"));
        String err = refused(conf);
        assertTrue(err.contains(conf.resolve("config.properties") + ": no such file"), err);
        err = refused(tmp.resolve("nowhere"));
        assertTrue(err.contains("--conf " + tmp.resolve("nowhere") + ": no such directory"), err);
    }

    @Test
    void aConfigFileGivenAsConfIsNotCalledMissing() throws Exception {
        Path file = conf(Collections.emptyMap()).resolve("config.properties");
        String err = refused(file);
        assertTrue(err.contains("--conf " + file + ": a file, not a directory; give the directory that holds it ("
                + file.getParent() + ")"), err);
    }

    @Test
    void aPortInUseIsNamedWithItsKey() throws Exception {
        Path conf = conf(Collections.emptyMap());
        int servicePort = Integer.parseInt(NodeConfig.load(conf.resolve("config.properties")).servicePort + "");
        try (ServerSocket taken = new ServerSocket(servicePort, 1, InetAddress.getByName("127.0.0.1"))) {
            String err = refused(conf);
            assertTrue(err.contains("port " + servicePort + " on 127.0.0.1 is already in use (servicePort"), err);
        }
        // nothing was left behind: the node starts now that the port is free
        assertEquals(0, Files.size(tmp.resolve("data").resolve("poyang.pid")), "the PID file was emptied");
        assertTrue(Files.notExists(tmp.resolve("data").resolve("node.properties")),
                "a failed start does not claim a new data directory for its node id");
    }

    /** A configuration whose host key (and this node's line in the servers file) is {@code host}. */
    private Path confOnHost(String host) throws Exception {
        Path conf = conf(Collections.singletonMap("host", host));
        Path servers = conf.resolve("servers.properties");
        String text = new String(Files.readAllBytes(servers), StandardCharsets.UTF_8);
        Files.write(servers, text.replace("127.0.0.1", host).getBytes(StandardCharsets.UTF_8));
        return conf;
    }

    @Test
    void aHostThatIsNotAnAddressOfThisMachineIsNamed() throws Exception {
        // 192.0.2.1 is reserved for documentation (RFC 5737): never an address of this machine
        String err = refused(confOnHost("192.0.2.1"));
        assertTrue(err.contains("192.0.2.1 is not an address of this machine"), err);
        assertTrue(!err.contains("already in use"), err);
    }

    @Test
    void aHostThatDoesNotResolveIsNamed() throws Exception {
        String err = refused(confOnHost("no-such-host.invalid"));
        assertTrue(err.contains("host 'no-such-host.invalid'") && err.contains("does not resolve"), err);
    }

    @Test
    void aDataDirectoryOfAnotherNodeIsRefused() throws Exception {
        Path conf = conf(Collections.emptyMap());
        Files.createDirectories(tmp.resolve("data"));
        Files.write(tmp.resolve("data").resolve("node.properties"), "nodeId = 2\ndataFormat = 1\n".getBytes(
                StandardCharsets.UTF_8));
        String err = refused(conf);
        assertTrue(err.contains("belongs to node 2"), err);
        assertTrue(err.contains("not to node 1"), err);
    }

    @Test
    void aDataDirectoryOfANewerFormatIsRefused() throws Exception {
        Path conf = conf(Collections.emptyMap());
        Files.createDirectories(tmp.resolve("data"));
        Files.write(tmp.resolve("data").resolve("node.properties"), "nodeId = 1\ndataFormat = 99\n".getBytes(
                StandardCharsets.UTF_8));
        String err = refused(conf);
        assertTrue(err.contains("written by a newer Poyang (data format 99; this version reads up to 1)"), err);
    }

    @Test
    void aDataDirectoryHeldByARunningNodeIsRefused() throws Exception {
        Path conf = conf(Collections.emptyMap());
        try (NodeProcess running = new NodeProcess(1, conf, tmp).start()) {
            running.awaitReady(60_000);
            // a second node on the same data directory, on other ports
            Map<String, String> other = new HashMap<>();
            int[] p = LoopbackPorts.pick(3);
            TestConf.Ports ports = new TestConf.Ports(p[0], p[1], p[2]);
            Path conf2 = TestConf.write(TestConf.samples().resolve("single"), tmp.resolve("conf2"), ports,
                    tmp.resolve("data"), Collections.singletonMap(1, ports), other);
            String err = refused(conf2);
            assertTrue(err.contains("is in use by another node process (pid " + running.pid() + ")"), err);
            assertTrue(err.contains("poyang.pid is locked"), err);
        }
    }

    @Test
    void aLogCorruptedBelowItsCommitIndexIsRefusedWithTheFileAndOffset() throws Exception {
        Path conf = conf(Collections.singletonMap("snapshotOnStop", "false"));
        NodeConfig c = NodeConfig.load(conf.resolve("config.properties"));
        PoyangNode node = new PoyangNode(c, ServersConfig.load(conf.resolve("servers.properties")),
                conf.resolve("servers.properties"));
        node.start();
        try (KvClient kv = new KvClient(new KvClientConfig().servers("127.0.0.1:" + node.servicePort()))) {
            kv.start();
            kv.mkdir("app");
            for (int i = 0; i < 40; i++) {
                kv.put("app.k" + i, "value-" + i);
            }
        } finally {
            node.stop();
        }
        Path segment = tmp.resolve("data").resolve("group-1").resolve("log").resolve("00000000000000000000");
        long offset = flipBodyByteOfItem(segment, 20);
        String err = refused(conf);
        assertTrue(err.contains("group 1 cannot start: its log is corrupted"), err);
        assertTrue(err.contains(segment.toAbsolutePath().toString()), err);
        assertTrue(err.contains("at offset " + offset), err);
    }

    /** Flips a byte in the body of the {@code n}-th item (1-based) of a segment; returns the item's offset. */
    private static long flipBodyByteOfItem(Path segment, int n) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
            long pos = 0;
            for (int i = 1; i < n; i++) {
                f.seek(pos);
                int total = f.readInt();
                assertTrue(total > 0, "item " + i + " is in the segment");
                pos += total;
            }
            f.seek(pos);
            byte[] header = new byte[48];
            f.readFully(header);
            ByteBuffer h = ByteBuffer.wrap(header);
            int headerBytes = h.getInt(4);
            int bodyBytes = h.getInt(8);
            assertTrue(bodyBytes > 2, "item " + n + " has a body");
            long at = pos + 48 + (headerBytes > 0 ? headerBytes + 4 : 0) + 1;
            f.seek(at);
            int b = f.read();
            f.seek(at);
            f.write(b ^ 0x5A);
            f.getFD().sync();
            return pos;
        }
    }

    @Test
    void confWithoutADirectoryIsAUsageError() {
        for (String[] args : new String[][]{{"--conf"}, {"--conf="}}) {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int code = ServerCommand.run(args, new PrintStream(new ByteArrayOutputStream(), true),
                    new PrintStream(err, true));
            String e = new String(err.toByteArray(), StandardCharsets.UTF_8);
            assertEquals(ServerCommand.EXIT_USAGE, code, e);
            assertTrue(e.startsWith("poyang server: --conf needs a directory"), e);
        }
    }
}
