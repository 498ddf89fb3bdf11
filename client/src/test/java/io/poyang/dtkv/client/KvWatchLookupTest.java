package io.poyang.dtkv.client;

import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvWatchEvent;
import io.poyang.dtkv.KvWatchNotify;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Which watch handles a notified state reaches, and with which of their keys: the handles watching
 * the key itself or a directory above it, in the order they were made, each once with the first of
 * its keys that covers the state. No cluster: the client is made but never started (registrations
 * fail to send and are retried in the background), its events run on the calling thread, and
 * notifications are handed to it as the I/O thread would.
 */
class KvWatchLookupTest {

    private KvClient kv;
    private long index;
    /** What the listeners heard, in order: "handle:watchKey:key". */
    private final List<String> heard = Collections.synchronizedList(new ArrayList<>());

    @BeforeEach
    void makeClient() {
        kv = new KvClient(new KvClientConfig().servers("127.0.0.1:1").callbackExecutor(Runnable::run));
    }

    @AfterEach
    void closeClient() {
        kv.close();
    }

    private KvWatch watch(String name, String... keys) {
        return kv.watch((watchKey, n) -> heard.add(name + ":" + watchKey + ":" + n.key()), keys);
    }

    /** Pushes a new state of {@code key} (read at a higher index than any before) and returns what was heard. */
    private List<String> push(String key) {
        heard.clear();
        index++;
        KvNode node = KvNode.of(key, ("v" + index).getBytes(StandardCharsets.UTF_8), false, index, index);
        kv.shared.watches.onNotify(new KvWatchNotify(kv.groupId, index,
                Collections.singletonList(KvWatchEvent.change(key, node))));
        return new ArrayList<>(heard);
    }

    @Test
    void aStateReachesTheHandlesOfItsKeyAndOfItsDirectoriesInTheOrderTheyWereMade() {
        KvWatch h1 = watch("h1", "a.b");
        KvWatch h2 = watch("h2", "a.b");                 // a key watched by several handles
        KvWatch h3 = watch("h3", "a");                   // a directory above it
        KvWatch h4 = watch("h4", "a", "a.bc");           // a directory and a key in it: the first that covers counts
        KvWatch h5 = watch("h5", "x", "a.b.c", "a.b");   // a key and a directory above it
        KvWatch h6 = watch("h6", "");                    // the root
        assertEquals(Collections.emptyList(), heard, "nothing is known yet");

        assertEquals(Arrays.asList("h1:a.b:a.b", "h2:a.b:a.b", "h3:a:a.b", "h4:a:a.b", "h5:a.b:a.b", "h6::a.b"),
                push("a.b"));
        // a.b is a prefix of a.bc's name but not its directory
        assertEquals(Arrays.asList("h3:a:a.bc", "h4:a:a.bc", "h6::a.bc"), push("a.bc"));
        assertEquals(Arrays.asList("h1:a.b:a.b.c", "h2:a.b:a.b.c", "h3:a:a.b.c", "h4:a:a.b.c", "h5:a.b.c:a.b.c",
                "h6::a.b.c"), push("a.b.c"));
        assertEquals(Collections.singletonList("h6::ab"), push("ab"));   // a is a prefix of ab, not its directory
        assertEquals(Arrays.asList("h5:x:x", "h6::x"), push("x"));

        // a handle closed while another still watches the same key
        h1.close();
        assertEquals(Arrays.asList("h2:a.b:a.b", "h3:a:a.b", "h4:a:a.b", "h5:a.b:a.b", "h6::a.b"), push("a.b"));
        assertEquals(Arrays.asList("h2:a.b:a.b.c", "h3:a:a.b.c", "h4:a:a.b.c", "h5:a.b.c:a.b.c", "h6::a.b.c"),
                push("a.b.c"));

        // the directory and root watches closed: a.b and what is under it stay watched (h2), a.bc and ab not
        h3.close();
        h4.close();
        h5.close();
        h6.close();
        assertEquals(Collections.singletonList("h2:a.b:a.b"), push("a.b"));
        assertEquals(Collections.singletonList("h2:a.b:a.b.c"), push("a.b.c"));
        assertEquals(Collections.emptyList(), push("a.bc"));
        assertEquals(Collections.emptyList(), push("x"));

        // the client kept the states of a.b and a.b.c only: a new watch of the root starts from them
        heard.clear();
        KvWatch h7 = watch("h7", "");
        assertEquals(new HashSet<>(Arrays.asList("h7::a.b", "h7::a.b.c")), new HashSet<>(heard));
        assertEquals(2, heard.size(), heard.toString());

        h2.close();
        assertEquals(Collections.singletonList("h7::a.b"), push("a.b"));
        h7.close();
        assertEquals(Collections.emptyList(), push("a.b"));
    }

    @Test
    void aHandleThatListsAKeyTwiceHearsItOnceAndLetsItGoWhenClosed() {
        KvWatch twice = watch("twice", "d", "d");
        KvWatch other = watch("other", "d");
        assertEquals(Arrays.asList("twice:d:d", "other:d:d"), push("d"));

        twice.close();
        assertEquals(Collections.singletonList("other:d:d"), push("d"));
        other.close();
        assertEquals(Collections.emptyList(), push("d"));

        // d is no longer watched: the client kept nothing of it
        heard.clear();
        watch("again", "d");
        assertEquals(Collections.emptyList(), heard);
        assertEquals(Collections.singletonList("again:d:d"), push("d"));
    }
}
