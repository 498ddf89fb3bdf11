package io.poyang.server;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.*;

class JsonTest {

    @Test
    void shortEscapesForQuoteBackslashAndLineBreaks() {
        assertEquals("a\\\"b\\\\c\\nd\\re\\tf", Json.escape("a\"b\\c\nd\re\tf"));
    }

    @Test
    void otherControlCharactersDelAndUnpairedSurrogatesBecomeUnicodeEscapes() {
        assertEquals("\\u0000\\u001f\\u007f", Json.escape("\u0000\u001f\u007f"));
        assertEquals("x\\ud800y", Json.escape("x\ud800y"), "a lone high surrogate");
        assertEquals("\\udc00", Json.escape("\udc00"), "a lone low surrogate");
        assertEquals("\\ud800", Json.escape("\ud800"), "a high surrogate at the end");
    }

    @Test
    void textOutsideAsciiAndSurrogatePairsStayAsTheyAre() {
        String s = "app.配置 \uD83D\uDE00 é";
        assertEquals(s, Json.escape(s));
        // what is written survives a UTF-8 round trip
        assertEquals(s, new String(Json.escape(s).getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8));
    }

    @Test
    void appendQuotedWrapsTheEscapedText() {
        StringBuilder b = new StringBuilder("k=");
        Json.appendQuoted(b, "say \"hi\"");
        assertEquals("k=\"say \\\"hi\\\"\"", b.toString());
        assertEquals("{\"name\":\"a\\\\b\",\"n\":1}", new Json().field("name", "a\\b").field("n", 1).toString());
    }
}
