package io.poyang.server.process;

import io.poyang.server.cli.KvCommand;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs {@code poyang kv}: as a child JVM (the real command) or in this JVM (the same code, faster). */
final class KvRun {

    final int exitCode;
    final String stdout;
    final String stderr;

    private KvRun(int exitCode, String stdout, String stderr) {
        this.exitCode = exitCode;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    /** {@code java -cp ... io.poyang.server.cli.KvCommand args} in a child process. */
    static KvRun process(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(Arrays.asList(NodeProcess.javaBin(), "-Xmx128m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), KvCommand.class.getName()));
        cmd.addAll(Arrays.asList(args));
        Process p = new ProcessBuilder(cmd).start();
        p.getOutputStream().close();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread t = new Thread(() -> copy(p.getErrorStream(), err));
        t.start();
        copy(p.getInputStream(), out);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("kv " + Arrays.toString(args) + " did not finish within 120 s");
        }
        t.join();
        return new KvRun(p.exitValue(), out.toString(StandardCharsets.UTF_8.name()),
                err.toString(StandardCharsets.UTF_8.name()));
    }

    /** KvCommand.run in this JVM. */
    static KvRun inProcess(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = KvCommand.run(args, new PrintStream(out, true), new PrintStream(err, true),
                new ByteArrayInputStream(new byte[0]));
        return new KvRun(code, new String(out.toByteArray(), StandardCharsets.UTF_8),
                new String(err.toByteArray(), StandardCharsets.UTF_8));
    }

    private static void copy(java.io.InputStream in, ByteArrayOutputStream to) {
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
