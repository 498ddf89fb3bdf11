package io.poyang.dtkv;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.*;

class KvKeysTest {

    @Test
    void validKeys() {
        for (String k : new String[]{"a", "app.db.url", "a-b_c.d e", "\u4e2d\u6587.\u00e9", "x.\ud83d\ude00", "1.2.3"}) {
            assertEquals(KvCode.SUCCESS, KvKeys.check(k), k);
        }
    }

    @Test
    void emptySegmentsLeadingTrailingDotsAndControlCharactersAreInvalid() {
        for (String k : new String[]{"", ".", "..", ".a", "a.", "a..b", "a.b.", "a\u0000b", "a\nb", "a\tb", "a\u007fb"}) {
            assertEquals(KvCode.INVALID_KEY, KvKeys.check(k), k);
            KvException e = assertThrows(KvException.class, () -> KvKeys.validate(k));
            assertEquals(KvCode.INVALID_KEY, e.kvCode());
            assertTrue(e.getMessage().startsWith("INVALID_KEY"), e.getMessage());
        }
        assertEquals(KvCode.INVALID_KEY, KvKeys.check(null));
    }

    @Test
    void halfOfASurrogatePairIsInvalidSinceUtf8CannotCarryIt() {
        // each would reach the server as "a?": two different keys would name one node
        for (String k : new String[]{"a\uD800", "\uDC00b", "a\uD800.b", "a\uDE00\uD83D", "x.\uD83D\uD83D"}) {
            assertEquals(KvCode.INVALID_KEY, KvKeys.check(k), k);
            assertTrue(KvKeys.explain(KvCode.INVALID_KEY, k).contains("surrogate"), KvKeys.explain(KvCode.INVALID_KEY, k));
        }
        assertEquals(KvCode.SUCCESS, KvKeys.check("a\uD83D\uDE00"));
        assertEquals(KvCode.SUCCESS, KvKeys.check("\uD83D\uDE00.\uD83D\uDE01"));
    }

    @Test
    void depthLimit() {
        StringBuilder sb = new StringBuilder("a");
        for (int i = 1; i < KvKeys.MAX_DEPTH; i++) {
            sb.append(".a");
        }
        assertEquals(KvCode.SUCCESS, KvKeys.check(sb.toString()));
        assertEquals(KvCode.INVALID_KEY, KvKeys.check(sb.append(".a").toString()));
        assertTrue(KvKeys.explain(KvCode.INVALID_KEY, sb.toString()).contains("segments"));
    }

    @Test
    void lengthLimitCountsUtf8Bytes() {
        StringBuilder ascii = new StringBuilder();
        while (ascii.length() < KvKeys.MAX_KEY_BYTES) {
            ascii.append('a');
        }
        assertEquals(KvCode.SUCCESS, KvKeys.check(ascii.toString()));
        assertEquals(KvCode.KEY_TOO_LONG, KvKeys.check(ascii + "a"));
        // 2731 three-byte characters are 8193 bytes though only 2731 chars
        StringBuilder cjk = new StringBuilder();
        for (int i = 0; i < 2731; i++) {
            cjk.append('\u4e2d');
        }
        assertEquals(KvCode.KEY_TOO_LONG, KvKeys.check(cjk.toString()));
        assertEquals(KvCode.SUCCESS, KvKeys.check(cjk.substring(1)));
        assertEquals(4, KvKeys.utf8Length("\ud83d\ude00"));
    }

    @Test
    void rootIsOnlyForListAndWatch() {
        assertEquals(KvCode.INVALID_KEY, KvKeys.check(""));
        assertEquals(KvCode.SUCCESS, KvKeys.checkDirOrRoot(""));
        assertEquals(KvCode.INVALID_KEY, KvKeys.checkDirOrRoot("a."));
    }

    @Test
    void valueTtlAndWaitLimits() {
        assertEquals(KvCode.SUCCESS, KvKeys.checkValue(new byte[KvKeys.MAX_VALUE_BYTES]));
        assertEquals(KvCode.VALUE_TOO_LARGE, KvKeys.checkValue(new byte[KvKeys.MAX_VALUE_BYTES + 1]));
        assertEquals(KvCode.SUCCESS, KvKeys.checkValue(null));
        assertEquals(KvCode.INVALID_TTL, KvKeys.checkTtl(0));
        assertEquals(KvCode.SUCCESS, KvKeys.checkTtl(1));
        assertEquals(KvCode.SUCCESS, KvKeys.checkTtl(KvKeys.MAX_TTL_MILLIS));
        assertEquals(KvCode.INVALID_TTL, KvKeys.checkTtl(KvKeys.MAX_TTL_MILLIS + 1));
        assertEquals(KvCode.SUCCESS, KvKeys.checkWait(0));
        assertEquals(KvCode.INVALID_TTL, KvKeys.checkWait(-1));
        assertEquals(KvCode.INVALID_TTL, KvKeys.checkWait(KvKeys.MAX_WAIT_MILLIS + 1));
    }

    @Test
    void pathHelpers() {
        assertEquals("a.b", KvKeys.parentOf("a.b.c"));
        assertEquals("", KvKeys.parentOf("a"));
        assertEquals("c", KvKeys.nameOf("a.b.c"));
        assertTrue(KvKeys.isUnder("a.b.c", "a"));
        assertTrue(KvKeys.isUnder("a", ""));
        assertFalse(KvKeys.isUnder("ab", "a"));
        assertFalse(KvKeys.isUnder("a", "a"));
    }

    @Test
    void codesHaveUniqueStableNumbersAndMeanings() {
        Set<Integer> numbers = new HashSet<>();
        for (KvCode c : KvCode.values()) {
            assertTrue(numbers.add(c.number()), "duplicate " + c.number());
            assertSame(c, KvCode.of(c.number()));
            assertFalse(c.meaning().isEmpty());
        }
        // numbers travel on the wire: pin a few so a reorder fails here
        assertEquals(0, KvCode.SUCCESS.number());
        assertEquals(1, KvCode.NOT_FOUND.number());
        assertEquals(10, KvCode.CAS_MISMATCH.number());
        assertEquals(21, KvCode.BATCH_TOO_LARGE.number());
        assertNull(KvCode.of(999));
        assertEquals("KV_CODE_999", KvCode.nameOf(999));
        KvException e = new KvException(999, "k", null);
        assertNull(e.kvCode());
        assertTrue(e.getMessage().contains("upgrade"), e.getMessage());
        assertEquals("k", new KvException(KvCode.NOT_FOUND, "k", "x").key());
        assertEquals(io.poyang.common.ErrorCode.BUSINESS, e.code());
    }

    @Test
    void failedResponseThrowsItsCode() {
        KvResp r = KvResp.fail(KvCode.CAS_MISMATCH, 3, "holds another value");
        KvException e = assertThrows(KvException.class, () -> r.throwIfFailed("k"));
        assertEquals(KvCode.CAS_MISMATCH, e.kvCode());
        assertTrue(e.getMessage().contains("holds another value"));
        KvResp ok = KvResp.success(4);
        assertSame(ok, ok.throwIfFailed("k"));
    }
}
