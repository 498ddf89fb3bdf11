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

    /**
     * A node the consumer moved past must not point at the rest of the queue: were it promoted to
     * the old generation while it waited, it would keep every later node alive through young
     * collections (see the queue's {@code take}). Looked at through the fields, as no collector
     * behaviour can be asserted from a test.
     */
    @Test
    void aNodeMovedPastNoLongerLinksToTheNodesAfterIt() throws Exception {
        MpscLinkedQueue<String> q = new MpscLinkedQueue<>();
        q.offer("a");
        q.offer("b");
        q.offer("c");
        Object before = headNode(q);
        assertEquals("a", q.poll());
        assertNull(nextOf(before), "the node before 'a' still links into the queue after poll");
        before = headNode(q);
        assertEquals("b", q.relaxedPoll());
        assertNull(nextOf(before), "the node of 'a' still links into the queue after relaxedPoll");
        assertEquals("c", q.poll());
        assertTrue(q.isEmpty());
        q.offer("d");
        assertEquals("d", q.poll());
    }

    private static Object headNode(MpscLinkedQueue<?> q) throws Exception {
        java.lang.reflect.Field f = MpscLinkedQueue.class.getDeclaredField("head");
        f.setAccessible(true);
        return f.get(q);
    }

    private static Object nextOf(Object node) throws Exception {
        java.lang.reflect.Field f = node.getClass().getDeclaredField("next");
        f.setAccessible(true);
        return f.get(node);
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
