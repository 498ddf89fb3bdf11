package io.poyang.benchmark.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One node process of a chaos run: how to start it (its command line), and the signals the runner
 * sends it: {@code kill -9}, {@code kill -STOP}, {@code kill -CONT} (by its pid, through the
 * {@code kill} command). Its stdout and stderr are appended to {@code node-N.log} in the run
 * directory; it is ready once the ready line appears there. Used by one thread at a time (the
 * runner's fault thread, or the runner itself before and after the faults).
 */
final class ChaosNode {

    private final int id;
    private final int servicePort;
    private final int replicationPort;
    private final List<String> command;
    private final Path logFile;
    private final String readyLine;
    private Process process;
    private boolean paused;
    /** Where the log file stood when the current incarnation started (so an old ready line does not count). */
    private long logOffsetAtStart;
    private int starts;

    ChaosNode(int id, int servicePort, int replicationPort, List<String> command, Path logFile, String readyLine) {
        this.id = id;
        this.servicePort = servicePort;
        this.replicationPort = replicationPort;
        this.command = new ArrayList<>(command);
        this.logFile = logFile;
        this.readyLine = readyLine;
    }

    int id() {
        return id;
    }

    int servicePort() {
        return servicePort;
    }

    int replicationPort() {
        return replicationPort;
    }

    String name() {
        return "node-" + id;
    }

    boolean isAlive() {
        return process != null && process.isAlive();
    }

    boolean isPaused() {
        return paused;
    }

    long pid() {
        return process == null ? -1 : process.pid();
    }

    /** Starts the process (it must not be running). */
    void start() throws IOException {
        if (isAlive()) {
            throw new IllegalStateException(name() + " is already running (pid " + process.pid() + ")");
        }
        logOffsetAtStart = Files.exists(logFile) ? Files.size(logFile) : 0;
        starts++;
        Files.write(logFile, ("---- start #" + starts + ": " + String.join(" ", command) + "\n")
                .getBytes(StandardCharsets.UTF_8), java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND);
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                .redirectInput(ProcessBuilder.Redirect.PIPE);
        process = pb.start();
        paused = false;
    }

    /** Waits until this incarnation printed its ready line; fails if it exits first or the time runs out. */
    void awaitReady(long timeoutMillis) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            if (readySinceStart()) {
                return;
            }
            if (!process.isAlive()) {
                throw new IOException(name() + " exited with code " + process.exitValue() + " before it was ready; "
                        + "see " + logFile);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IOException(name() + " did not print its ready line within " + timeoutMillis + " ms; see "
                        + logFile);
            }
            Thread.sleep(20);
        }
    }

    private boolean readySinceStart() throws IOException {
        byte[] all = Files.readAllBytes(logFile);
        int from = (int) Math.min(all.length, logOffsetAtStart);
        String text = new String(all, from, all.length - from, StandardCharsets.UTF_8);
        for (String line : text.split("\n")) {
            if (line.startsWith(readyLine)) {
                return true;
            }
        }
        return false;
    }

    /** {@code kill -9}: no shutdown of any kind; waits until the process is gone. */
    void kill9() throws IOException, InterruptedException {
        if (process == null) {
            return;
        }
        signal("KILL");
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IOException(name() + " (pid " + process.pid() + ") survived kill -9 for 30 s");
        }
        paused = false;
    }

    /** {@code kill -STOP}: the process freezes (its sockets stay open, nothing answers). */
    void pause() throws IOException, InterruptedException {
        signal("STOP");
        paused = true;
    }

    /** {@code kill -CONT}. */
    void resume() throws IOException, InterruptedException {
        signal("CONT");
        paused = false;
    }

    /** Kills the process at once without waiting (the runner's JVM is exiting). */
    void destroyNow() {
        Process p = process;
        if (p != null && p.isAlive()) {
            p.destroyForcibly();
        }
    }

    /** SIGTERM and a wait for a clean stop; kill -9 if it takes longer than {@code timeoutMillis}. */
    void stop(long timeoutMillis) throws IOException, InterruptedException {
        if (!isAlive()) {
            return;
        }
        if (paused) {
            resume();
        }
        process.destroy();
        if (!process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
            kill9();
        }
    }

    private void signal(String sig) throws IOException, InterruptedException {
        if (!isAlive()) {
            throw new IOException(name() + " is not running; cannot send SIG" + sig);
        }
        Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid()))
                .redirectErrorStream(true).start();
        String out = new String(k.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
            throw new IOException("kill -" + sig + " " + process.pid() + " (" + name() + ") failed: " + out);
        }
    }

    Path logFile() {
        return logFile;
    }
}
