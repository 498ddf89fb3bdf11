package io.poyang.net;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The child JVM of {@link FdExhaustionTest}, started with a low file-descriptor limit: an echo
 * server (args: handshake timeout in ms, maxConnections) that prints "PORT n PID p" once it
 * listens, answers "files N" on its stdin by opening N files at once and printing "FILES opened",
 * and stops when its stdin closes.
 *
 * <p>It first loads every class of the client module without initializing any: run from a classes
 * directory (as under Maven), each class loaded later opens its .class file, which fails once the
 * descriptors are gone; loaded from a jar, as in production, it would not. Only our classes: the
 * JDK's own lazily initialized socket code is what the test is about, and is left alone.
 */
public final class FdExhaustionServerMain {

    private FdExhaustionServerMain() {
    }

    public static void main(String[] args) throws Exception {
        int loaded = preloadClassesOf(NioServer.class);
        NioServerConfig c = new NioServerConfig();
        c.name = "FdExhaustionServer";
        c.host = "127.0.0.1";
        c.port = 0;
        c.ioThreads = 1;
        c.handshakeTimeoutMillis = Long.parseLong(args[0]);
        c.maxConnections = Integer.parseInt(args[1]);
        NioServer server = new NioServer(c);
        server.register(Commands.ECHO, new EchoProcessor());
        server.start();
        String pid = new File("/proc/self").getCanonicalFile().getName();
        System.out.println("PORT " + server.port() + " PID " + pid + " (" + loaded + " classes preloaded)");
        System.out.flush();
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String command; (command = commands.readLine()) != null; ) {   // until the test closes our stdin
            if (command.startsWith("files ")) {
                System.out.println("FILES " + openFiles(Integer.parseInt(command.substring(6))));
                System.out.flush();
            }
        }
        server.stop();
    }

    /** Opens (then closes) {@code n} temporary files at once; returns how many could be opened. */
    private static int openFiles(int n) throws IOException {
        List<FileChannel> open = new ArrayList<>();
        Path dir = Files.createTempDirectory("fd-exhaustion");
        try {
            for (int i = 0; i < n; i++) {
                open.add(FileChannel.open(dir.resolve("f" + i), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                        StandardOpenOption.DELETE_ON_CLOSE));
            }
        } catch (IOException e) {
            System.err.println("could not open file " + open.size() + ": " + e);
        } finally {
            for (FileChannel ch : open) {
                ch.close();
            }
        }
        Files.deleteIfExists(dir);
        return open.size();
    }

    private static int preloadClassesOf(Class<?> anchor) throws IOException, URISyntaxException {
        Path where = Paths.get(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<String> names = new ArrayList<>();
        if (Files.isDirectory(where)) {
            try (Stream<Path> files = Files.walk(where)) {
                files.filter(f -> f.toString().endsWith(".class")).forEach(f -> names.add(className(where.relativize(f).toString())));
            }
        } else {
            try (JarFile jar = new JarFile(where.toFile())) {
                for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                    String n = e.nextElement().getName();
                    if (n.endsWith(".class") && !n.contains("module-info")) {
                        names.add(className(n));
                    }
                }
            }
        }
        ClassLoader loader = anchor.getClassLoader();
        for (String n : names) {
            try {
                Class.forName(n, false, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                // not one the server needs
            }
        }
        return names.size();
    }

    private static String className(String path) {
        return path.substring(0, path.length() - ".class".length()).replace(File.separatorChar, '.').replace('/', '.');
    }
}
