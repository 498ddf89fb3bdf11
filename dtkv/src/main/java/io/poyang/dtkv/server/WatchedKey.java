package io.poyang.dtkv.server;

import java.util.ArrayList;

/**
 * A key (or directory, or the root) that at least one watcher watches. Linked from the key's
 * {@link KvEntry} while the key has one, so a change finds its watches by walking up the parents
 * without any lookup.
 */
final class WatchedKey {

    final String key;
    final ArrayList<Watcher> watchers = new ArrayList<>(2);

    WatchedKey(String key) {
        this.key = key;
    }
}
