package io.poyang.log;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

class MessageFormatterTest {

    private static String text(String pattern, Object... args) {
        return MessageFormatter.format(pattern, args).message;
    }

    @Test
    void placeholdersAreFilledInOrder() {
        assertEquals("a=1 b=two", text("a={} b={}", 1, "two"));
        assertEquals("12", text("{}{}", 1, 2));
        assertEquals("no placeholders", text("no placeholders", 1));
        assertEquals("x=null", text("x={}", (Object) null));
    }

    @Test
    void missingArgumentsLeaveThePlaceholderAndExtraOnesAreIgnored() {
        assertEquals("1 and {}", text("{} and {}", 1));
        assertEquals("1", text("{}", 1, 2, 3));
    }

    @Test
    void escapedBracesPrintLiterallyAndAnEscapedBackslashKeepsThePlaceholder() {
        assertEquals("set {} has 3", text("set \\{} has {}", 3));
        assertEquals("C:\\7", text("C:\\\\{}", 7));
        assertEquals("{ } {x} 5", text("{ } {x} {}", 5));
        assertEquals("trailing {", text("trailing {", 1));
        assertEquals("trailing \\", text("trailing \\", 1));
    }

    @Test
    void arraysArePrintedByContent() {
        assertEquals("[1, 2]", text("{}", (Object) new int[]{1, 2}));
        assertEquals("[a, [b]]", text("{}", (Object) new Object[]{"a", new String[]{"b"}}));
        assertEquals("[1, -1]", text("{}", (Object) new byte[]{1, -1}));
        assertEquals("[true]", text("{}", (Object) new boolean[]{true}));
        assertEquals("[1.5]", text("{}", (Object) new double[]{1.5}));
    }

    @Test
    void aBrokenToStringDoesNotBreakLogging() {
        Object bad = new Object() {
            @Override
            public String toString() {
                throw new IllegalStateException("nope");
            }
        };
        String s = text("v={}", bad);
        assertEquals(true, s.startsWith("v=[toString of ") && s.contains("nope"), s);
    }

    @Test
    void aTrailingThrowableIsTheExceptionAndNeverFillsAPlaceholder() {
        Exception e = new Exception("boom");
        MessageFormatter.Formatted f = MessageFormatter.format("op {} failed", new Object[]{"put", e});
        assertEquals("op put failed", f.message);
        assertSame(e, f.throwable);
        // As in slf4j: the only argument being a Throwable leaves the placeholder unfilled.
        MessageFormatter.Formatted g = MessageFormatter.format("failed: {}", new Object[]{e});
        assertEquals("failed: {}", g.message);
        assertSame(e, g.throwable);
        // A Throwable that is not last is an ordinary argument.
        MessageFormatter.Formatted h = MessageFormatter.format("{} then {}", new Object[]{e, "x"});
        assertEquals("java.lang.Exception: boom then x", h.message);
        assertNull(h.throwable);
    }

    @Test
    void nullPatternAndNoArguments() {
        assertEquals("null", text(null, 1));
        assertEquals("as is \\{}", MessageFormatter.format("as is \\{}", null).message);
        assertEquals("as is {}", text("as is {}"));
    }
}
