package io.poyang.benchmark.chaos;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;

import static org.junit.jupiter.api.Assertions.*;

class HistoryRecorderTest {

    @Test
    void manyClientThreadsLoseNoLineAndEachRecordsInOrder(@TempDir Path dir) throws Exception {
        int threads = 8;
        int perThread = 5_000;
        Path file = dir.resolve("history.txt");
        HistoryRecorder recorder = new HistoryRecorder(HistoryWriter.create(file));
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < threads; c++) {
            int client = c;
            Thread t = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    String key = "k" + (i % 4);
                    switch (i % 4) {
                        case 0:
                            recorder.record(recorder.invokePut(client, key, "c" + client + "-" + i).putOk(recorder.nowNanos()));
                            break;
                        case 1:
                            recorder.record(recorder.invokeGet(client, key).getOk(recorder.nowNanos(), null));
                            break;
                        case 2:
                            recorder.record(recorder.invokeCas(client, key, null, "x").unknown(recorder.nowNanos(), "timeout"));
                            break;
                        default:
                            recorder.record(recorder.invokeRemove(client, key).failed(recorder.nowNanos(), "NOT_LEADER"));
                            break;
                    }
                }
            });
            clients.add(t);
            t.start();
        }
        recorder.note("fault: kill n2");
        start.countDown();
        for (Thread t : clients) {
            t.join();
        }
        recorder.close();

        List<Operation> inMemory = recorder.operations();
        List<Operation> inFile = HistoryReader.read(file);
        assertEquals(threads * perThread, inMemory.size());
        assertEquals(threads * perThread, inFile.size());
        Set<Long> ids = new HashSet<>();
        for (Operation op : inFile) {
            assertTrue(ids.add(op.id()), "ids are unique");
            assertTrue(op.completeNanos() >= op.invokeNanos());
            assertTrue(op.invokeNanos() >= 0, "times count from the recorder's start");
        }
        // Each client's operations are sequential on the clock.
        long[] lastComplete = new long[threads];
        for (Operation op : inMemory) {
            assertTrue(op.invokeNanos() >= lastComplete[op.clientId()], "client " + op.clientId() + " went back in time");
            lastComplete[op.clientId()] = op.completeNanos();
        }
    }

    @Test
    void threadsShareOneClock(@TempDir Path dir) throws Exception {
        // A token goes round 4 threads; each completes one operation, then hands the token on. An
        // operation invoked after another thread's completion must be later on the recorder's clock,
        // which a clock of each thread's own (an offset per thread) would break.
        int threads = 4;
        int rounds = 200;
        HistoryRecorder recorder = new HistoryRecorder(HistoryWriter.create(dir.resolve("h.txt")));
        List<SynchronousQueue<Integer>> turns = new ArrayList<>();
        for (int c = 0; c < threads; c++) {
            turns.add(new SynchronousQueue<>());
        }
        List<Operation> inHandOffOrder = Collections.synchronizedList(new ArrayList<>());
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < threads; c++) {
            int client = c;
            Thread t = new Thread(() -> {
                try {
                    for (int r = 0; r < rounds; r++) {
                        int n = turns.get(client).take();
                        Operation op = recorder.invokePut(client, "k", "v" + n).putOk(recorder.nowNanos());
                        recorder.record(op);
                        inHandOffOrder.add(op);
                        if (n + 1 < threads * rounds) {
                            turns.get((client + 1) % threads).put(n + 1);
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            clients.add(t);
            t.start();
        }
        turns.get(0).put(0);
        for (Thread t : clients) {
            t.join(30_000);
            assertFalse(t.isAlive(), "the token went round");
        }
        recorder.close();
        assertEquals(threads * rounds, inHandOffOrder.size());
        for (int i = 1; i < inHandOffOrder.size(); i++) {
            Operation before = inHandOffOrder.get(i - 1);
            Operation after = inHandOffOrder.get(i);
            assertNotEquals(before.clientId(), after.clientId());
            assertTrue(after.invokeNanos() >= before.completeNanos(), "client " + after.clientId()
                    + " invoked at " + after.invokeNanos() + " after client " + before.clientId() + " completed at "
                    + before.completeNanos());
        }
    }

    @Test
    void completingWithTheWrongKindIsRefused() {
        Invocation put = Invocation.put(1, 0, "k", "v", 0);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> put.getOk(1, "v"));
        assertEquals("operation #1 is a put, not a get", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> put.putOk(-1));
    }
}
