package io.poyang.dtkv;

import java.util.Collections;
import java.util.List;

/**
 * One page of a directory's children ({@code KvClient.listPage}): the nodes, by key, whether more
 * children follow, and the raft index the page was read at. Ask for the next page with
 * {@link #nextStartAfter()} as its start key. Immutable.
 */
public final class KvListPage {

    private final List<KvNode> nodes;
    private final boolean more;
    private final long raftIndex;

    public KvListPage(List<KvNode> nodes, boolean more, long raftIndex) {
        this.nodes = nodes == null ? Collections.<KvNode>emptyList() : Collections.unmodifiableList(nodes);
        this.more = more;
        this.raftIndex = raftIndex;
    }

    /** The children of this page, sorted by key, values included. */
    public List<KvNode> nodes() {
        return nodes;
    }

    /** Whether children after the last one of this page were left out (by the limit, or to fit one answer). */
    public boolean more() {
        return more;
    }

    /** The applied raft index the page was read at; pages of one directory may be read at different ones. */
    public long raftIndex() {
        return raftIndex;
    }

    /** The key to start the next page after: the last key of this page (null when the page is empty). */
    public String nextStartAfter() {
        return nodes.isEmpty() ? null : nodes.get(nodes.size() - 1).key();
    }

    @Override
    public String toString() {
        return "KvListPage{" + nodes.size() + " nodes" + (more ? ", more" : "") + ", index " + raftIndex + "}";
    }
}
