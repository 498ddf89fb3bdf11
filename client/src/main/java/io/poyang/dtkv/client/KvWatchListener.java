package io.poyang.dtkv.client;

import io.poyang.dtkv.KvNode;

/**
 * Hears the states of watched keys, in order, on the client's callback executor (one event at a
 * time). {@code node} is the key's latest state: {@code node.exists()} is false when the key was
 * removed (or never existed). {@code watchKey} is the watch it came through (the key itself, or the
 * watched directory above it).
 */
@FunctionalInterface
public interface KvWatchListener {

    void onChange(String watchKey, KvNode node);
}
