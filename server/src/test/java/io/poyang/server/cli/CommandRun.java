package io.poyang.server.cli;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code poyang kv} or {@code poyang admin}: as a child JVM (the real command, exit code and
 * all) or in this JVM (the same code, faster), and keeps its exit code and output.
 */
public final class CommandRun {

    public final int exitCode;
    public final String stdout;
    public final String stderr;

    private CommandRun(int exitCode, String stdout, String stderr) {
        this.exitCode = exitCode;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    /** {@code poyang kv args} in a child process. */
    public static CommandRun kv(String... args) throws Exception {
        return process(KvCommand.class, "kv", 120, args);
    }

    /** {@code poyang admin args} in a child process. */
    public static CommandRun admin(String... args) throws Exception {
        return process(AdminCommand.class, "admin", 180, args);
    }

    /** KvCommand.run in this JVM, with an empty stdin. */
    public static CommandRun kvInProcess(String... args) {
        return kvInProcessWithStdin("", args);
    }

    /** KvCommand.run in this JVM, reading {@code stdin}. */
    public static CommandRun kvInProcessWithStdin(String stdin, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = KvCommand.run(args, new PrintStream(out, true), new PrintStream(err, true),
                new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
        return new CommandRun(code, utf8(out), utf8(err));
    }

    /** AdminCommand.run in this JVM against {@code servers}, with a 30 s timeout (a slow CI host). */
    public static CommandRun adminAt(String servers, String... args) {
        String[] all = new String[args.length + 4];
        all[0] = "--servers";
        all[1] = servers;
        all[2] = "--timeout";
        all[3] = "30000";
        System.arraycopy(args, 0, all, 4, args.length);
        return adminInProcess(all);
    }

    /** AdminCommand.run in this JVM. */
    public static CommandRun adminInProcess(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = AdminCommand.run(args, new PrintStream(out, true), new PrintStream(err, true));
        return new CommandRun(code, utf8(out), utf8(err));
    }

    private static CommandRun process(Class<?> main, String name, int timeoutSeconds, String... args)
            throws Exception {
        List<String> cmd = new ArrayList<>(Arrays.asList(Paths.get(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx128m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(Arrays.asList(args));
        Process p = new ProcessBuilder(cmd).start();
        p.getOutputStream().close();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread t = new Thread(() -> copy(p.getErrorStream(), err));
        t.start();
        copy(p.getInputStream(), out);
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(name + " " + Arrays.toString(args) + " did not finish within " + timeoutSeconds
                    + " s");
        }
        t.join();
        return new CommandRun(p.exitValue(), utf8(out), utf8(err));
    }

    private static String utf8(ByteArrayOutputStream b) {
        return new String(b.toByteArray(), StandardCharsets.UTF_8);
    }

    private static void copy(InputStream in, ByteArrayOutputStream to) {
        byte[] buf = new byte[4096];
        try {
            for (int n; (n = in.read(buf)) > 0; ) {
                to.write(buf, 0, n);
            }
        } catch (IOException e) {
            // the process ended
        }
    }

    @Override
    public String toString() {
        return "exit " + exitCode + ", stdout: " + stdout.trim() + ", stderr: " + stderr.trim();
    }
}
