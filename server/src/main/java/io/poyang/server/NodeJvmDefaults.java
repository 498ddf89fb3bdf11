package io.poyang.server;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The JVM options a node process gets by default: the {@code poyang} launcher puts them before
 * {@code POYANG_JAVA_OPTS} when it starts {@code ./poyang server} (so a user's option of the same
 * name wins), and {@code ./poyang bench} before {@code POYANG_SERVER_JAVA_OPTS} for the nodes it
 * starts. Which options depends on the JDK that runs the node, so the launcher asks this class,
 * run by that JDK ({@link #main}); the flags differ between JDK versions and a JVM refuses to
 * start on an option it does not know.
 *
 * <p>Only JDK-only options; no class of Poyang is needed, so the launcher can run this class from
 * the server jar alone.
 */
public final class NodeJvmDefaults {

    /**
     * log2 of the entries of G1's hot card cache on JDK 8-19 (the JDK's default is 10: 1,024 cards
     * of 512 bytes). A DtKV put stores a new value into an old-generation object of its key; a
     * card written again and again is "hot" and G1 defers it to the next young collection, but
     * only as many as the cache holds. With the keys spread over several groups the hot cards
     * outgrew 1,024 and G1's refinement threads re-scanned them all the time: on three nodes with
     * 4 groups they took 1.6 ms of CPU per 1,000 puts (a tenth of all the nodes' CPU) against
     * 0.03 ms with one group. 8,192 entries (64 KiB) ended that (docs/benchmarks.md, 2026-11-22).
     * JDK 20 removed the cache with its new refinement, and the option with it (JDK 25 does not
     * start with it); those JDKs did not show the cost.
     */
    static final int HOT_CARD_CACHE_LOG2 = 13;

    /** The first JDK without G1's hot card cache (and its option). */
    static final int FIRST_JDK_WITHOUT_HOT_CARD_CACHE = 20;

    private NodeJvmDefaults() {
    }

    /** The default options for a node run by a JDK of {@code javaFeatureVersion} (e.g. 17). */
    public static List<String> forJdk(int javaFeatureVersion) {
        if (javaFeatureVersion < 8) {
            throw new IllegalArgumentException("Java feature version " + javaFeatureVersion + " is not a JDK version");
        }
        List<String> options = new ArrayList<>();
        if (javaFeatureVersion < FIRST_JDK_WITHOUT_HOT_CARD_CACHE) {
            options.add("-XX:G1ConcRSLogCacheSize=" + HOT_CARD_CACHE_LOG2);
        }
        return Collections.unmodifiableList(options);
    }

    /** The default options for a node run by the JDK this code runs in. */
    public static List<String> forThisJdk() {
        return forJdk(Runtime.version().feature());
    }

    /** Prints {@link #forThisJdk()} on one line, separated by spaces (read by the launcher). */
    public static void main(String[] args) {
        System.out.println(String.join(" ", forThisJdk()));
    }
}
