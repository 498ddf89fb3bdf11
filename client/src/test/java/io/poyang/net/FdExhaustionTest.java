package io.poyang.net;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.poyang.net.NetTestSupport.waitUntil;
import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A server with more connections than file descriptors: a child JVM ({@link FdExhaustionServerMain})
 * with a limit of {@value #FD_LIMIT} descriptors gets {@value #CONNECTIONS} connections.
 *
 * <p>Without a connection limit, accept fails: the server must keep serving the connections it has,
 * neither spin nor flood its log while accept fails, take the waiting ones once connections close,
 * and end with the descriptors and threads it started with. With the default limit, it must close
 * the connections past it at once and keep descriptors for the rest of the process (its files).
 */
class FdExhaustionTest {

    private static final int FD_LIMIT = 128;
    private static final int CONNECTIONS = 200;
    /** Linux's USER_HZ: the unit of the CPU times in /proc/PID/stat. */
    private static final double CLOCK_TICKS_PER_SECOND = 100;

    @Test
    @Timeout(30)
    void serverOutOfFileDescriptorsKeepsServingDoesNotSpinAndRecovers() throws Exception {
        Child child = Child.start(-1);
        List<RawConnection> all = new ArrayList<>();
        try {
            int port = child.port;
            String proc = child.proc;
            File stderr = child.stderr;
            int baseFds = count(proc + "/fd");
            int baseThreads = count(proc + "/task");

            for (int i = 0; i < CONNECTIONS; i++) {
                Socket s = new Socket();
                s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);   // the backlog takes what accept cannot
                all.add(new RawConnection(s));
            }
            waitUntil("the server to run out of file descriptors", 10_000,
                    () -> count(proc + "/fd") >= FD_LIMIT - 2 && read(stderr).contains("accept failed"));

            // every connection says hello; those the server could accept answer
            byte[] handshake = handshakeFrame();
            for (RawConnection c : all) {
                c.send(handshake);
            }
            int capacity = FD_LIMIT - baseFds;
            List<RawConnection> answered = new ArrayList<>();
            List<RawConnection> waiting = new ArrayList<>(all);
            waitUntil("handshake answers on the " + capacity + " or so connections the server accepted", 10_000,
                    () -> collectAnswers(waiting, answered) >= capacity - 5);

            // out of descriptors, accept fails every time: the acceptor must back off, not spin
            long cpuBefore = cpuTicks(proc);
            long wallBefore = System.nanoTime();
            Thread.sleep(1_000);   // measuring CPU over an interval, not synchronizing
            double cores = (cpuTicks(proc) - cpuBefore) / CLOCK_TICKS_PER_SECOND
                    / ((System.nanoTime() - wallBefore) / 1e9);
            assertTrue(cores < 0.5, "the server used " + cores + " cores while out of file descriptors and idle");

            // the connections it has are served
            for (int i = 0; i < 5; i++) {
                RawConnection c = answered.get(i);
                c.sendPacket(echo(i + 2, new byte[]{(byte) i}));
                RawConnection.Decoded d = c.readPacket();
                assertEquals(i + 2, d.seq);
                assertArrayEquals(new byte[]{(byte) i}, d.body);
            }

            // closing those frees descriptors: the connections waiting in the backlog are taken
            int stillWaiting = waiting.size();
            assertTrue(stillWaiting > 0, "no connection waited in the backlog; the test needs more than " + CONNECTIONS);
            for (RawConnection c : answered) {
                c.close();
            }
            List<RawConnection> late = new ArrayList<>();
            waitUntil("handshake answers on the " + stillWaiting + " connections that waited in the backlog", 10_000,
                    () -> collectAnswers(waiting, late) == stillWaiting);
            for (RawConnection c : late) {
                c.close();
            }

            waitUntil("the server's file descriptors and threads to be back to " + baseFds + " and " + baseThreads,
                    10_000, () -> count(proc + "/fd") <= baseFds && count(proc + "/task") <= baseThreads);
            String log = read(stderr);
            assertFalse(log.contains("IMPOSSIBLE STATE"), "the server reported an impossible state:\n" + log);
            assertTrue(log.contains("accepting connections again"), "no word that accepting works again:\n" + log);
            int warnings = log.split("accept failed|accept still failing", -1).length - 1;
            assertTrue(warnings <= 3, warnings + " warnings about failed accepts in a few seconds:\n" + log);
        } finally {
            for (RawConnection c : all) {
                c.close();
            }
            child.close();
        }
    }

    @Test
    @Timeout(30)
    void connectionsPastTheDefaultLimitAreClosedAtOnceAndLeaveDescriptorsForFiles() throws Exception {
        Child child = Child.start(0);
        List<RawConnection> all = new ArrayList<>();
        try {
            int limit = FD_LIMIT - 64;   // the default: the descriptor limit less a quarter of it, at least 64
            byte[] handshake = handshakeFrame();
            for (int i = 0; i < CONNECTIONS; i++) {
                Socket s = new Socket();
                s.connect(new InetSocketAddress("127.0.0.1", child.port), 5_000);
                RawConnection c = new RawConnection(s);
                c.send(handshake);
                all.add(c);
            }
            // each connection is either served (its handshake answered) or closed at once
            List<RawConnection> answered = new ArrayList<>();
            for (RawConnection c : all) {
                if (servedOrClosed(c)) {
                    answered.add(c);
                }
            }
            assertEquals(limit, answered.size(), "connections served");

            // what the connections left is there for the rest of the process
            child.command("files 24");
            assertEquals("FILES 24", child.out.readLine(), "the server could not open files; see its log:\n"
                    + read(child.stderr));

            // a connection closed makes room for a new one
            answered.remove(0).close();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (true) {
                assertTrue(System.nanoTime() - deadline < 0, "no new connection was served after one closed");
                RawConnection c = RawConnection.connect(child.port);
                all.add(c);
                c.send(handshake);
                if (servedOrClosed(c)) {
                    break;
                }
            }
            String log = read(child.stderr);
            int warnings = log.split("closed at once", -1).length - 1;
            assertTrue(warnings >= 1 && warnings <= 2, warnings + " warnings about connections closed at once:\n" + log);
        } finally {
            for (RawConnection c : all) {
                c.close();
            }
            child.close();
        }
    }

    /** The server child JVM, its stdout and the file its stderr goes to. */
    private static final class Child implements AutoCloseable {
        final Process process;
        final BufferedReader out;
        final File stderr;
        final int port;
        final String proc;

        private Child(Process process, BufferedReader out, File stderr, int port, String proc) {
            this.process = process;
            this.out = out;
            this.stderr = stderr;
            this.port = port;
            this.proc = proc;
        }

        static Child start(int maxConnections) throws IOException {
            assumeTrue(new File("/proc/self/fd").isDirectory() && new File("/bin/bash").canExecute(),
                    "needs Linux's /proc and bash (for ulimit)");
            File stderr = File.createTempFile("fd-exhaustion-server", ".log");
            String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
            ProcessBuilder pb = new ProcessBuilder("/bin/bash", "-c", "ulimit -n " + FD_LIMIT + " && exec \"$0\" -Xmx64m"
                    + " -XX:+UseSerialGC -XX:CICompilerCount=2 -XX:-UseDynamicNumberOfCompilerThreads -cp \"$1\""
                    + " io.poyang.net.FdExhaustionServerMain 3000 " + maxConnections,
                    java, System.getProperty("java.class.path"));
            pb.redirectError(stderr);
            Process p = pb.start();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String line = out.readLine();
            if (line == null || !line.startsWith("PORT ")) {
                p.destroyForcibly();
                throw new AssertionError("the server child did not start (first line: " + line + "):\n" + read(stderr));
            }
            String[] words = line.split(" ");
            return new Child(p, out, stderr, Integer.parseInt(words[1]), "/proc/" + words[3]);
        }

        void command(String line) throws IOException {
            process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
            process.getOutputStream().flush();
        }

        @Override
        public void close() throws Exception {
            process.getOutputStream().close();   // the server stops when its stdin closes
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
            Files.deleteIfExists(stderr.toPath());
        }
    }

    /** True when the server answered the connection's handshake, false when it closed the connection. */
    private static boolean servedOrClosed(RawConnection c) throws IOException {
        c.socket.setSoTimeout(5_000);   // neither within that: the test fails with the timeout
        RawConnection.Decoded d;
        try {
            d = c.readPacket();
        } catch (EOFException | SocketException e) {
            return false;
        } catch (SocketTimeoutException e) {
            throw new AssertionError("a connection was neither served nor closed within 5 s (left waiting in the"
                    + " listen backlog, as when accept fails for want of descriptors)", e);
        }
        assertEquals(PacketType.RESPONSE, d.type, "not a handshake answer");
        assertEquals(ResponseCode.SUCCESS, d.responseCode, "handshake refused: " + d.message);
        return true;
    }

    /** Moves the connections of {@code from} that have an answer to read to {@code to}; returns to's size. */
    private static int collectAnswers(List<RawConnection> from, List<RawConnection> to) {
        try {
            for (int i = from.size() - 1; i >= 0; i--) {
                RawConnection c = from.get(i);
                if (c.in.available() > 0) {
                    RawConnection.Decoded d = c.readPacket();
                    assertEquals(PacketType.RESPONSE, d.type, "not a handshake answer");
                    assertEquals(ResponseCode.SUCCESS, d.responseCode, "handshake refused: " + d.message);
                    to.add(from.remove(i));
                }
            }
        } catch (IOException e) {
            throw new AssertionError("a connection failed while waiting for its handshake answer: " + e, e);
        }
        return to.size();
    }

    private static byte[] handshakeFrame() {
        WritePacket hs = WritePacket.request(Commands.HANDSHAKE, new Handshake(Handshake.MAGIC, Handshake.MAJOR_VERSION,
                0, 1, 2, 1 << 20, 1000, 1 << 20));
        hs.seq = 1;
        return RawConnection.frame(RawConnection.encode(hs));
    }

    private static WritePacket echo(int seq, byte[] data) {
        WritePacket p = WritePacket.request(Commands.ECHO, new BytesBody(data));
        p.seq = seq;
        return p;
    }

    private static int count(String dir) {
        String[] names = new File(dir).list();
        return names == null ? -1 : names.length;
    }

    /** User plus system CPU time of a process, in clock ticks (fields 14 and 15 of /proc/PID/stat). */
    private static long cpuTicks(String proc) throws IOException {
        String stat = read(new File(proc + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    private static String read(File f) {
        try {
            return new String(Files.readAllBytes(Paths.get(f.getPath())), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError("cannot read " + f + ": " + e, e);
        }
    }
}
