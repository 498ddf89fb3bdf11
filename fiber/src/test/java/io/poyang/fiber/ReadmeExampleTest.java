package io.poyang.fiber;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The worked example of fiber/README.md, compiled and run, so the README cannot rot. */
class ReadmeExampleTest {

    // ---- README example begins
    /** A client request: some bytes, and where the client waits for the log position. */
    static final class Request {
        final String data;
        final CompletableFuture<Long> answer = new CompletableFuture<>();

        Request(String data) {
            this.data = data;
        }
    }

    /** Writes a batch with a blocking call on an I/O executor; returns the position after it. */
    static final class WriteBatchFrame extends FiberFrame<Long> {
        private final List<Request> batch;
        private final ExecutorService io;
        private final List<String> disk;

        WriteBatchFrame(List<Request> batch, ExecutorService io, List<String> disk) {
            this.batch = batch;
            this.io = io;
            this.disk = disk;
        }

        @Override
        public FrameCallResult execute(Object input) {
            // A copy for the I/O thread: it may go on writing after this frame stopped waiting (a
            // timeout), while the caller clears and refills its batch.
            List<String> records = new ArrayList<>(batch.size());
            for (Request r : batch) {
                records.add(r.data);
            }
            FiberFuture<Long> written = getGroup().executeBlocking("write", io, () -> {
                for (String record : records) {   // runs on the I/O thread: blocking is fine here
                    if (record.isEmpty()) {
                        throw new IOException("empty record");
                    }
                    disk.add(record);
                }
                return (long) disk.size();
            });
            return written.await(1_000, this::afterWrite);   // suspend; afterWrite runs with the value
        }

        private FrameCallResult afterWrite(Long position) {
            return Fiber.frameReturn(position);              // the caller's resume point gets it
        }
    }

    /** Takes every queued request, writes them as one batch, answers them, and loops until shutdown. */
    static final class BatchWriterFrame extends FiberFrame<Void> {
        private final FiberChannel<Request> requests;
        private final ExecutorService io;
        private final List<String> disk;
        private final List<Request> batch = new ArrayList<>();
        private final FrameCall<Void> onBatch = this::onBatch;   // made once: no allocation per take

        BatchWriterFrame(FiberChannel<Request> requests, ExecutorService io, List<String> disk) {
            this.requests = requests;
            this.io = io;
            this.disk = disk;
        }

        @Override
        public FrameCallResult execute(Object input) {
            return requests.takeAll(batch, onBatch);
        }

        private FrameCallResult onBatch(Void ignored) {
            if (batch.isEmpty()) {               // woken with nothing: the group is shutting down
                return Fiber.frameReturn();
            }
            return Fiber.call(new WriteBatchFrame(batch, io, disk), this::afterWrite);
        }

        private FrameCallResult afterWrite(Long position) {
            for (Request r : batch) {
                r.answer.complete(position);
            }
            batch.clear();
            return requests.takeAll(batch, onBatch);       // next batch
        }

        @Override
        protected FrameCallResult handle(Throwable ex) {
            // A failed write, or one that did not end within a second, ends the loop: the batch in
            // hand fails. After a timeout the I/O thread may still write it: say so.
            Throwable why = ex instanceof FiberTimeoutException
                    ? new IOException("the write did not end within 1 s; its records may still be written", ex) : ex;
            for (Request r : batch) {
                r.answer.completeExceptionally(why);
            }
            batch.clear();
            return Fiber.frameReturn();
        }

        @Override
        protected FrameCallResult doFinally() {
            // Runs once, whether the loop ended normally or by an error: nobody takes requests any
            // more, so those still queued, and any offered later, fail instead of waiting forever.
            requests.close(r -> r.answer.completeExceptionally(new IllegalStateException("the batch writer has stopped")));
            return Fiber.frameReturn();
        }
    }
    // ---- README example ends

    private Dispatcher dispatcher;
    private ExecutorService io;

    @org.junit.jupiter.api.BeforeEach
    void startDispatcher() {
        dispatcher = new Dispatcher("example");
        dispatcher.start();
        io = Executors.newSingleThreadExecutor();
    }

    @org.junit.jupiter.api.AfterEach
    void stopDispatcher() {
        io.shutdownNow();
        dispatcher.stop();
    }

    /** A started group on the test's dispatcher. */
    private FiberGroup startedGroup(String name) throws Exception {
        FiberGroup group = new FiberGroup(name, dispatcher);
        dispatcher.startGroup(group).get(10, TimeUnit.SECONDS);
        return group;
    }

    @Test
    void theReadmeExampleBatchesRequestsAndStopsOnShutdown() throws Exception {
        FiberGroup group = startedGroup("raft-group-1");
        FiberChannel<Request> requests = group.newChannel("requests");
        List<String> disk = new ArrayList<>();
        group.fireFiber("batch-writer", new BatchWriterFrame(requests, io, disk));

        Request a = new Request("a");
        Request b = new Request("b");
        requests.fireOffer(a);        // from any thread: an I/O worker, here the test thread
        requests.fireOffer(b);
        assertTrue(b.answer.get(10, TimeUnit.SECONDS) >= 2);
        assertEquals(List.of("a", "b"), disk.subList(0, 2));

        group.requestShutdown();
        group.shutdownFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void aFailedWriteFailsTheBatchThroughHandle() throws Exception {
        FiberGroup group = startedGroup("g");
        FiberChannel<Request> requests = group.newChannel("requests");
        group.fireFiber("batch-writer", new BatchWriterFrame(requests, io, new ArrayList<>()));
        Request bad = new Request("");
        requests.fireOffer(bad);
        try {
            bad.answer.get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            assertEquals("empty record", e.getCause().getMessage());
        }
        assertTrue(bad.answer.isCompletedExceptionally());
        group.requestShutdown();
        group.shutdownFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void aWriteThatTimesOutFailsItsBatchAsMaybeWrittenAndLaterRequestsFail() throws Exception {
        FiberGroup group = startedGroup("g");
        FiberChannel<Request> requests = group.newChannel("requests");
        // a disk that takes 0.6 s per record: two records outlast the writer's 1 s wait
        List<String> disk = java.util.Collections.synchronizedList(new ArrayList<String>() {
            @Override
            public boolean add(String record) {
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(600));
                return super.add(record);
            }
        });
        Request a = new Request("a");
        Request b = new Request("b");
        requests.fireOffer(a);
        requests.fireOffer(b);
        group.fireFiber("batch-writer", new BatchWriterFrame(requests, io, disk));
        for (Request r : List.of(a, b)) {
            java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class, () -> r.answer.get(10, TimeUnit.SECONDS));
            assertTrue(e.getCause().getMessage().contains("may still be written"), e.getCause().toString());
        }
        Request late = new Request("c");
        requests.fireOffer(late);
        java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.ExecutionException.class, () -> late.answer.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof IllegalStateException, e.getCause().toString());
        // the I/O thread finished the batch from its own copy
        io.shutdown();
        assertTrue(io.awaitTermination(10, TimeUnit.SECONDS));
        assertEquals(List.of("a", "b"), disk);
    }
}
