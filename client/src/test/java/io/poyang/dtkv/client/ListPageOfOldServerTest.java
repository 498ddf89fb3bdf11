package io.poyang.dtkv.client;

import io.poyang.dtkv.KvListPage;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvResp;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A server older than list paging ignores start_after and limit and answers the whole directory
 * without {@code more}; the client cuts such an answer to the page that was asked for, so a listing
 * in pages during a rolling upgrade neither repeats children nor loses the limit. A real page
 * passes unchanged.
 */
class ListPageOfOldServerTest {

    private static KvResp wholeDirectory(String... keys) {
        List<KvNode> nodes = new ArrayList<>();
        for (int i = 0; i < keys.length; i++) {
            nodes.add(KvNode.of(keys[i], new byte[]{(byte) i}, false, i + 1, i + 1));
        }
        return KvResp.success(40).nodes(nodes);
    }

    private static List<String> keys(KvListPage page) {
        List<String> out = new ArrayList<>();
        for (KvNode n : page.nodes()) {
            out.add(n.key());
        }
        return out;
    }

    @Test
    void aWholeDirectoryAnswerIsCutToTheAskedPage() {
        KvResp old = wholeDirectory("d.a", "d.b", "d.c", "d.d", "d.e");

        KvListPage afterB = KvClient.pageOf(old, "d.b", 2);
        assertEquals(Arrays.asList("d.c", "d.d"), keys(afterB));
        assertTrue(afterB.more(), "the limit cut children off");
        assertEquals("d.d", afterB.nextStartAfter());
        assertEquals(40, afterB.raftIndex());

        KvListPage rest = KvClient.pageOf(old, "d.d", 2);
        assertEquals(Collections.singletonList("d.e"), keys(rest));
        assertFalse(rest.more());

        KvListPage noLimit = KvClient.pageOf(old, "d.bb", 0);
        assertEquals(Arrays.asList("d.c", "d.d", "d.e"), keys(noLimit));
        assertFalse(noLimit.more());

        KvListPage past = KvClient.pageOf(old, "d.z", 3);
        assertTrue(past.nodes().isEmpty());
        assertFalse(past.more());

        assertEquals(5, KvClient.pageOf(old, null, 0).nodes().size());
    }

    @Test
    void aPageOfANewServerPassesUnchanged() {
        KvResp page = wholeDirectory("d.c", "d.d").more(true);
        KvListPage p = KvClient.pageOf(page, "d.b", 2);
        assertEquals(Arrays.asList("d.c", "d.d"), keys(p));
        assertTrue(p.more());
        KvListPage last = KvClient.pageOf(wholeDirectory("d.e"), "d.d", 2);
        assertEquals(Collections.singletonList("d.e"), keys(last));
        assertFalse(last.more());
    }
}
