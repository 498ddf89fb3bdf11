package io.poyang.dtkv.cluster;

import io.poyang.dtkv.client.KvClient;
import io.poyang.raft.server.FullDiskFileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A single-node DtKV server (what users and {@code ./poyang bench} start) whose data disk fills up
 * under a put flood: what KvClient callers see, whether the server stays up, and how it comes
 * back once space is free.
 */
class SingleNodeDiskFullTest {

    @TempDir
    Path dir;

    @Test
    void putsFailWithinTheirDeadlineWhenTheDiskFillsTheServerStaysUpAndARestartOfTheGroupKeepsEveryAcknowledgedPut()
            throws Exception {
        FullDiskFileIo io = new FullDiskFileIo();
        Set<String> acknowledged = ConcurrentHashMap.newKeySet();
        Map<String, AtomicLong> errors = new ConcurrentHashMap<>();
        try (KvTestCluster c = new KvTestCluster(dir, 1, KvTestCluster.testConfig().logFileIo(io), null).start()) {
            KvClient client = c.client();
            client.put("before", "x".getBytes(StandardCharsets.UTF_8));
            Semaphore window = new Semaphore(200);
            AtomicLong outstanding = new AtomicLong();
            AtomicLong fillNanos = new AtomicLong();
            long filledAt = 0;
            long firstErrorAt = 0;
            for (int i = 0; i < 200_000; i++) {
                if (i == 5_000) {
                    io.fill(dir.resolve("node-1"));
                    filledAt = System.nanoTime();
                    fillNanos.set(filledAt);
                }
                if (!errors.isEmpty() && firstErrorAt == 0) {
                    firstErrorAt = System.nanoTime();
                }
                if (firstErrorAt != 0 && System.nanoTime() - firstErrorAt > TimeUnit.SECONDS.toNanos(1)) {
                    break;   // a second of puts against the failed node
                }
                assertTrue(window.tryAcquire(10, TimeUnit.SECONDS), "a put hangs: 200 outstanding for 10 s");
                String key = "k" + i;
                outstanding.incrementAndGet();
                client.putAsync(key, key.getBytes(StandardCharsets.UTF_8)).whenComplete((v, e) -> {
                    window.release();
                    outstanding.decrementAndGet();
                    if (e == null) {
                        acknowledged.add(key);
                    } else {
                        Throwable t = e instanceof java.util.concurrent.CompletionException ? e.getCause() : e;
                        String m = String.valueOf(t.getMessage()).replaceAll("seq=[0-9]+", "seq=N");
                        long sinceFill = (System.nanoTime() - fillNanos.get()) / 1_000_000;
                        errors.computeIfAbsent(t.getClass().getSimpleName() + ": " + m.substring(0, Math.min(2_000,
                                m.length())) + " [first answered " + (sinceFill / 500 * 500) + "+ ms after the fill]",
                                k -> new AtomicLong()).incrementAndGet();
                    }
                });
            }
            assertTrue(filledAt != 0 && firstErrorAt != 0, "the puts saw no error: " + acknowledged.size());
            // the store gives up ~310 ms after the fill; puts in flight then hear it at once (they used to
            // wait for their 5 s deadline: the group noticed the failed store only at its next append)
            long firstErrorMs = (firstErrorAt - filledAt) / 1_000_000;
            assertTrue(firstErrorMs < 4_000, "the first put failed " + firstErrorMs + " ms after the disk filled: " + errors);
            // every failed put says why, also those that only met the failed node's status answers
            // (they used to say only "no leader ... before its deadline")
            assertTrue(errors.keySet().stream().allMatch(k -> k.contains(FullDiskFileIo.ENOSPC)),
                    "puts not told the disk is full: " + errors);
            KvTestCluster.waitFor("every put to be answered", () -> outstanding.get() == 0);
            System.out.println("DISKFULL dtkv: first error " + (firstErrorAt - filledAt) / 1_000_000 + " ms after the disk"
                    + " filled; " + acknowledged.size() + " acknowledged; errors " + errors);
            assertNotNull(c.group(1).failure(), "the group failed on the full disk");
            String failure = c.group(1).failure().getMessage();
            // the store fails at its segment preallocation or at an fsync, whichever meets the full disk
            // first; both messages tell the operator what to do
            String lower = failure.toLowerCase(java.util.Locale.ROOT);
            assertTrue(lower.contains("check the disk") && lower.contains("restart"), failure);
            assertTrue(c.cluster.server(1).isRunning(), "the server process stays up");
            // space comes back; the failed group is restarted on its own (the node and the client's
            // connection stay): it recovers what is on disk, with a new DtKV state machine
            io.free();
            io.poyang.raft.core.RaftGroup failed = c.group(1);
            c.cluster.server(1).restartGroup(1).get(30, TimeUnit.SECONDS);
            assertTrue(c.group(1) != failed && c.group(1).failure() == null, "the group was not replaced");
            c.cluster.waitForLeader(1, 30_000);
            client.put("afterRestart", new byte[]{2});
            assertArrayEquals(new byte[]{2}, client.get("afterRestart").value());
            assertArrayEquals("x".getBytes(StandardCharsets.UTF_8), client.get("before").value());
            for (String k : acknowledged) {
                assertArrayEquals(k.getBytes(StandardCharsets.UTF_8), client.get(k).value(), "acknowledged put " + k);
            }
        }
    }
}
