package io.poyang.dtkv.client;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The kept states a watch key covers are found as a range of the sorted map, and only those. */
class KvWatchKeyRangeTest {

    private static final List<String> KEYS = Arrays.asList("", "a", "a-b", "a.b", "a.b.c", "a.bc", "a/x", "ab", "b", "b.a");

    private static TreeMap<String, Long> kept() {
        TreeMap<String, Long> m = new TreeMap<>();
        for (String k : KEYS) {
            m.put(k, 1L);
        }
        return m;
    }

    private static List<String> under(String dir) {
        List<String> out = new ArrayList<>();
        KvWatches.addKeysUnder(kept(), dir, out);
        return out;
    }

    private static Set<String> atOrUnder(String key) {
        Set<String> out = new LinkedHashSet<>();
        KvWatches.addKeysAtOrUnder(kept(), key, out);
        return out;
    }

    @Test
    void aDirectorysRangeHoldsExactlyTheKeysBelowIt() {
        assertEquals(Arrays.asList("a.b", "a.b.c", "a.bc"), under("a"));
        assertEquals(Arrays.asList("a.b.c"), under("a.b"));
        assertEquals(Arrays.asList(), under("a.b.c"));
        assertEquals(Arrays.asList(), under("ab"));
        assertEquals(Arrays.asList("b.a"), under("b"));
        assertEquals(Arrays.asList(), under("c"), "a directory with nothing kept");
    }

    @Test
    void theRootCoversEveryKeyItsOwnIncluded() {
        assertEquals(KEYS, under(""));
        assertEquals(new LinkedHashSet<>(KEYS), atOrUnder(""));
    }

    @Test
    void aWatchCoversItsKeyAndWhatIsUnderItButNotKeysItIsAPrefixOf() {
        assertEquals(new LinkedHashSet<>(Arrays.asList("a", "a.b", "a.b.c", "a.bc")), atOrUnder("a"));
        assertEquals(new LinkedHashSet<>(Arrays.asList("a.b", "a.b.c")), atOrUnder("a.b"));
        assertEquals(new LinkedHashSet<>(Arrays.asList("a.b.c")), atOrUnder("a.b.c"));
        assertEquals(new LinkedHashSet<>(Arrays.asList()), atOrUnder("a.c"), "a key nothing is kept for");
    }
}
