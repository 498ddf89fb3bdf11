package io.poyang.common;

import io.poyang.testutil.Await;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

class MpscLinkedQueueTest {

    @Test
    void singleThreadFifoAndEmptiness() {
        MpscLinkedQueue<String> q = new MpscLinkedQueue<>();
        assertTrue(q.isEmpty());
        assertNull(q.poll());
        assertNull(q.relaxedPoll());
        q.offer("a");
        q.offer("b");
        q.offer("c");
        assertEquals(false, q.isEmpty());
        assertEquals("a", q.poll());
        assertEquals("b", q.relaxedPoll());
        assertEquals("c", q.poll());
        assertTrue(q.isEmpty());
        assertNull(q.poll());
        assertThrows(NullPointerException.class, () -> q.offer(null));
    }

    @Test
    void fourProducersOneConsumerLoseNothingAndKeepEachProducersOrder() throws Exception {
        int producers = 4;
        int perProducer = 250_000;
        MpscLinkedQueue<Long> q = new MpscLinkedQueue<>();
        CountDownLatch go = new CountDownLatch(1);
        Thread[] threads = new Thread[producers];
        for (int p = 0; p < producers; p++) {
            long id = p;
            threads[p] = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (long seq = 0; seq < perProducer; seq++) {
                    q.offer(id << 32 | seq);
                }
            }, "producer-" + p);
            threads[p].start();
        }
        go.countDown();
        long[] next = new long[producers];
        long received = 0;
        long total = (long) producers * perProducer;
        long deadline = System.nanoTime() + 30_000_000_000L;
        boolean relaxed = false;
        while (received < total) {
            // Alternate between the two poll flavours; both must hand out every element once, in order.
            Long v = relaxed ? q.relaxedPoll() : q.poll();
            relaxed = !relaxed;
            if (v == null) {
                if (System.nanoTime() - deadline > 0) {
                    fail("only " + received + " of " + total + " elements arrived in 30 s");
                }
                continue;
            }
            int producer = (int) (v >>> 32);
            long seq = v & 0xFFFFFFFFL;
            assertEquals(next[producer], seq, "producer " + producer + " out of order");
            next[producer]++;
            received++;
        }
        for (Thread t : threads) {
            Await.join(t, 10_000);
        }
        assertNull(q.poll());
        assertTrue(q.isEmpty());
        for (int p = 0; p < producers; p++) {
            assertEquals(perProducer, next[p]);
        }
    }
}
