package io.poyang.raft.server;

import io.poyang.common.IntObjMap;
import io.poyang.raft.core.RaftGroup;

import java.util.ArrayList;
import java.util.List;

/**
 * The groups a server hosts, by id, for the network threads that route messages to them. Lookups
 * are lock-free (a volatile read of an immutable map); adding or removing a group copies the map
 * (rare), so groups can come and go at runtime.
 */
final class GroupRegistry {

    private volatile IntObjMap<RaftGroup> groups = new IntObjMap<>();

    RaftGroup get(int groupId) {
        return groups.get(groupId);
    }

    synchronized void add(RaftGroup g) {
        IntObjMap<RaftGroup> copy = copy();
        if (copy.put(g.groupId(), g) != null) {
            throw new IllegalArgumentException("raft group " + g.groupId() + " is already hosted");
        }
        groups = copy;
    }

    /** Puts {@code fresh} in the place of {@code old} (a restart: the id never looks unhosted). */
    synchronized void replace(RaftGroup old, RaftGroup fresh) {
        IntObjMap<RaftGroup> copy = copy();
        if (copy.get(old.groupId()) != old || fresh.groupId() != old.groupId()) {
            throw new IllegalStateException("raft group " + old.groupId() + " is not the one hosted");
        }
        copy.put(fresh.groupId(), fresh);
        groups = copy;
    }

    synchronized RaftGroup remove(int groupId) {
        IntObjMap<RaftGroup> copy = copy();
        RaftGroup g = copy.remove(groupId);
        groups = copy;
        return g;
    }

    List<RaftGroup> all() {
        List<RaftGroup> list = new ArrayList<>();
        groups.forEach((k, v) -> {
            list.add(v);
            return true;
        });
        return list;
    }

    private IntObjMap<RaftGroup> copy() {
        IntObjMap<RaftGroup> copy = new IntObjMap<>();
        groups.forEach((k, v) -> {
            copy.put(k, v);
            return true;
        });
        return copy;
    }
}
