package io.poyang.net;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The parts of a batched request: each is answered into the batch's collector, once, and a part
 * that expires or is dropped is answered TIMEOUT, so a batch never waits for it.
 */
class ReqContextPartTest {

    /** A batch request (no worker: its parts never reach the wire). */
    private static ReqContext batch(long deadlineNanos) {
        return new ReqContext(null, null, PacketType.REQUEST, 106, 7, deadlineNanos, 100, null);
    }

    private static final class Collected implements ReqContext.PartAnswers {
        final List<Integer> indexes = new ArrayList<>();
        final List<WritePacket> answers = new ArrayList<>();

        @Override
        public void answered(int index, WritePacket answer) {
            indexes.add(index);
            answers.add(answer);
        }
    }

    @Test
    void aPartsAnswerGoesToTheCollectorWithItsIndexOnce() {
        Collected c = new Collected();
        ReqContext part = ReqContext.part(batch(Long.MAX_VALUE), 2, c);
        WritePacket first = WritePacket.response(null);
        part.respond(first);
        part.respondError(ResponseCode.SYS_ERROR, "a second answer");
        assertEquals(1, c.answers.size(), "the part was answered twice");
        assertEquals(2, c.indexes.get(0));
        assertSame(first, c.answers.get(0));
        assertEquals(106, part.command());
        assertEquals(7, part.seq());
    }

    @Test
    void anExpiredPartIsAnsweredTimeoutSoTheBatchDoesNotWaitForIt() {
        Collected c = new Collected();
        ReqContext part = ReqContext.part(batch(System.nanoTime() - TimeUnit.SECONDS.toNanos(1)), 0, c);
        assertTrue(part.isExpired());
        assertEquals(1, c.answers.size());
        assertEquals(ResponseCode.TIMEOUT, c.answers.get(0).responseCode());
        part.respond(WritePacket.response(null));
        assertEquals(1, c.answers.size(), "a late answer after the expiry counted again");
    }

    @Test
    void aPartWithTimeLeftIsNotExpiredAndNotAnswered() {
        Collected c = new Collected();
        ReqContext part = ReqContext.part(batch(System.nanoTime() + TimeUnit.MINUTES.toNanos(1)), 0, c);
        assertFalse(part.isExpired());
        assertTrue(c.answers.isEmpty());
    }

    @Test
    void aPartDroppedWithoutAnAnswerIsAnsweredTimeout() {
        Collected c = new Collected();
        ReqContext part = ReqContext.part(batch(Long.MAX_VALUE), 1, c);
        part.finishWithoutResponse();
        assertEquals(1, c.answers.size());
        assertEquals(ResponseCode.TIMEOUT, c.answers.get(0).responseCode());
        assertEquals(1, c.indexes.get(0));
    }

    @Test
    void anErrorAnswerKeepsItsCodeDetailAndMessage() {
        Collected c = new Collected();
        ReqContext.part(batch(Long.MAX_VALUE), 0, c).respond(WritePacket.error(ResponseCode.NOT_LEADER, 3, "ask node 3"));
        WritePacket a = c.answers.get(0);
        assertEquals(ResponseCode.NOT_LEADER, a.responseCode());
        assertEquals(3, a.bizCode());
        assertEquals("ask node 3", a.message());
    }

    @Test
    void aPartCannotCarryPartsItself() {
        ReqContext part = ReqContext.part(batch(Long.MAX_VALUE), 0, new Collected());
        assertThrows(IllegalArgumentException.class, () -> ReqContext.part(part, 0, new Collected()));
    }
}
