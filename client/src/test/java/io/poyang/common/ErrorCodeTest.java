package io.poyang.common;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ErrorCodeTest {

    @Test
    void codesAreUniqueAndRoundTripThroughOf() {
        Set<Integer> seen = new HashSet<>();
        for (ErrorCode c : ErrorCode.values()) {
            assertTrue(seen.add(c.code()), "duplicate code " + c.code());
            assertSame(c, ErrorCode.of(c.code()));
        }
        assertNull(ErrorCode.of(0));
        assertNull(ErrorCode.of(-1));
        assertNull(ErrorCode.of(10_000));
    }

    @Test
    void eachExceptionTypeCarriesItsCode() {
        assertEquals(ErrorCode.INTERNAL, new PoyangException("x").code());
        assertEquals(ErrorCode.TIMEOUT, new PoyangTimeoutException("x").code());
        assertEquals(ErrorCode.FLOW_CONTROL, new FlowControlException("x").code());
        assertEquals(ErrorCode.STOPPED, new StoppedException("x").code());
        assertEquals(ErrorCode.CODEC, new io.poyang.codec.CodecException(3, "x").code());
    }
}
