package io.poyang.server.config;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The cluster as {@code servers.properties} describes it: every node's replication address and
 * every DtKV group with its voting members and observers.
 *
 * <pre>
 * node.1 = 127.0.0.1:9431
 * node.2 = 127.0.0.1:9441
 * group.1.members = 1,2,3
 * group.1.observers = 4
 * group.1.nonMembers = 5
 * group.1.preferredLeader = 2
 * </pre>
 *
 * <p>{@code nonMembers} lists nodes that run the group without being in its configuration: a node
 * given the group with {@code admin add-group --on} before a membership change takes it in, or one
 * a change took out before {@code remove-group} stopped it there. A node writes only itself there,
 * so that it runs the group again after a restart; it is not part of the group's configuration.
 *
 * <p>{@code preferredLeader} names the voting member the group's leadership is kept on: whichever
 * node leads hands it over once that node is caught up, after every failover too (raft's
 * {@code RaftGroup.setPreferredLeader}). Optional; it must be one of the group's members.
 *
 * <p>The file bootstraps: a group starts from these members only while it has neither a snapshot
 * nor a membership entry in its log; after that raft's own record wins, and the node writes what it
 * runs with back into this file ({@link #writeTo}), keeping comments and order.
 */
public final class ServersConfig {

    /**
     * A group: its voters and observers (ascending, disjoint), the nodes that run it outside them,
     * and the voter its leadership is kept on.
     */
    public static final class Group {
        public final int id;
        public final int[] members;
        public final int[] observers;
        /** Nodes that run the group without being in its configuration (see the class comment). */
        public final int[] nonMembers;
        /** The member the group's leadership is kept on; 0: none (see the class comment). */
        public final int preferredLeader;

        public Group(int id, int[] members, int[] observers) {
            this(id, members, observers, new int[0]);
        }

        public Group(int id, int[] members, int[] observers, int[] nonMembers) {
            this(id, members, observers, nonMembers, 0);
        }

        public Group(int id, int[] members, int[] observers, int[] nonMembers, int preferredLeader) {
            this.id = id;
            this.members = sortedCopy(members);
            this.observers = sortedCopy(observers);
            this.nonMembers = sortedCopy(nonMembers);
            this.preferredLeader = preferredLeader;
        }

        /** This group with {@code nodeId} as its preferred leader (0: none). */
        public Group withPreferredLeader(int nodeId) {
            return nodeId == preferredLeader ? this : new Group(id, members, observers, nonMembers, nodeId);
        }

        /** Whether {@code nodeId} runs this group: it votes in it, observes it, or is listed as a non-member. */
        public boolean hosts(int nodeId) {
            return isMember(nodeId) || contains(nonMembers, nodeId);
        }

        /** Whether {@code nodeId} is in the group's configuration (a voter or an observer). */
        public boolean isMember(int nodeId) {
            return contains(members, nodeId) || contains(observers, nodeId);
        }

        /** This group with {@code nodeId} added to its non-members. */
        public Group withNonMember(int nodeId) {
            if (contains(nonMembers, nodeId)) {
                return this;
            }
            int[] n = Arrays.copyOf(nonMembers, nonMembers.length + 1);
            n[nonMembers.length] = nodeId;
            return new Group(id, members, observers, n, preferredLeader);
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Group)) {
                return false;
            }
            Group g = (Group) o;
            return id == g.id && Arrays.equals(members, g.members) && Arrays.equals(observers, g.observers)
                    && Arrays.equals(nonMembers, g.nonMembers) && preferredLeader == g.preferredLeader;
        }

        @Override
        public int hashCode() {
            return id * 31 + Arrays.hashCode(members);
        }

        @Override
        public String toString() {
            return "group " + id + " members " + join(members) + (observers.length > 0 ? " observers "
                    + join(observers) : "") + (nonMembers.length > 0 ? " nonMembers " + join(nonMembers) : "")
                    + (preferredLeader != 0 ? " preferredLeader " + preferredLeader : "");
        }
    }

    /** node id → replication "host:port", ascending by id. */
    private final TreeMap<Integer, String> nodes;
    /** group id → group, ascending by id. */
    private final TreeMap<Integer, Group> groups;

    public ServersConfig(Map<Integer, String> nodes, Map<Integer, Group> groups) {
        this.nodes = new TreeMap<>(nodes);
        this.groups = new TreeMap<>(groups);
    }

    /** One node ({@code nodeId} at {@code host:replicationPort}) and DtKV group 1 with it as the only member. */
    public static ServersConfig singleNode(int nodeId, String replicationHostPort) {
        TreeMap<Integer, String> n = new TreeMap<>();
        n.put(nodeId, replicationHostPort);
        TreeMap<Integer, Group> g = new TreeMap<>();
        g.put(1, new Group(1, new int[]{nodeId}, new int[0]));
        return new ServersConfig(n, g);
    }

    public Map<Integer, String> nodes() {
        return Collections.unmodifiableMap(nodes);
    }

    public Map<Integer, Group> groups() {
        return Collections.unmodifiableMap(groups);
    }

    /** The groups {@code nodeId} runs: those it is a member, an observer or a listed non-member of. */
    public List<Group> groupsOf(int nodeId) {
        List<Group> r = new ArrayList<>();
        for (Group g : groups.values()) {
            if (g.hosts(nodeId)) {
                r.add(g);
            }
        }
        return r;
    }

    /** Reads and checks {@code servers.properties}; {@link ConfigException} names the key and the reason. */
    public static ServersConfig load(Path file) {
        return from(PropertiesFile.read(file));
    }

    static ServersConfig from(PropertiesFile p) {
        TreeMap<Integer, String> nodes = new TreeMap<>();
        TreeMap<Integer, int[]> members = new TreeMap<>();
        TreeMap<Integer, int[]> observers = new TreeMap<>();
        TreeMap<Integer, int[]> nonMembers = new TreeMap<>();
        TreeMap<Integer, Integer> preferredLeaders = new TreeMap<>();
        for (String key : p.keys()) {
            String[] parts = key.split("\\.", -1);
            if (parts.length == 2 && parts[0].equals("node")) {
                int id = id(p, key, parts[1], "node");
                nodes.put(id, hostPort(p, key));
            } else if (parts.length == 3 && parts[0].equals("group") && (parts[2].equals("members")
                    || parts[2].equals("observers") || parts[2].equals("nonMembers"))) {
                int id = id(p, key, parts[1], "group");
                int[] ids = idList(p, key);
                (parts[2].equals("members") ? members : parts[2].equals("observers") ? observers : nonMembers)
                        .put(id, ids);
            } else if (parts.length == 3 && parts[0].equals("group") && parts[2].equals("preferredLeader")) {
                preferredLeaders.put(id(p, key, parts[1], "group"), id(p, key, p.get(key), "node"));
            } else {
                throw new ConfigException(p.path(), key, p.locate(key) + ": unknown key '" + key + "'; servers.properties"
                        + " holds node.<id> = host:replicationPort, group.<id>.members = id,id,...,"
                        + " group.<id>.observers = id,..., group.<id>.nonMembers = id,... and"
                        + " group.<id>.preferredLeader = id");
            }
        }
        if (nodes.isEmpty()) {
            throw new ConfigException(p.path(), null, p.path() + ": no nodes; list every node of the cluster as"
                    + " node.<id> = host:replicationPort");
        }
        requireMembersLine(p, members, observers, "observers");
        requireMembersLine(p, members, nonMembers, "nonMembers");
        requireMembersLine(p, members, preferredLeaders, "preferredLeader");
        TreeMap<Integer, Group> groups = new TreeMap<>();
        for (Map.Entry<Integer, int[]> e : members.entrySet()) {
            int g = e.getKey();
            String mkey = "group." + g + ".members";
            String okey = "group." + g + ".observers";
            String nkey = "group." + g + ".nonMembers";
            int[] m = e.getValue();
            int[] o = observers.getOrDefault(g, new int[0]);
            int[] n = nonMembers.getOrDefault(g, new int[0]);
            if (m.length == 0) {
                throw p.invalid(mkey, "a group needs at least one voting member");
            }
            for (int id : m) {
                if (!nodes.containsKey(id)) {
                    throw p.invalid(mkey, "node " + id + " has no node." + id + " line (its replication address)");
                }
            }
            for (int id : o) {
                if (!nodes.containsKey(id)) {
                    throw p.invalid(okey, "node " + id + " has no node." + id + " line (its replication address)");
                }
                if (contains(m, id)) {
                    throw p.invalid(okey, "node " + id + " is also a voting member; a node either votes or observes");
                }
            }
            for (int id : n) {
                if (!nodes.containsKey(id)) {
                    throw p.invalid(nkey, "node " + id + " has no node." + id + " line (its replication address)");
                }
                if (contains(m, id) || contains(o, id)) {
                    throw p.invalid(nkey, "node " + id + " is also a member or an observer; nonMembers lists nodes"
                            + " that run the group outside its configuration");
                }
            }
            int preferred = preferredLeaders.getOrDefault(g, 0);
            if (preferred != 0 && !contains(m, preferred)) {
                throw p.invalid("group." + g + ".preferredLeader", "node " + preferred + " is not one of the group's"
                        + " members (" + mkey + " = " + join(m) + "); only a voting member can lead. Name one of"
                        + " them, or remove the line");
            }
            groups.put(g, new Group(g, m, o, n, preferred));
        }
        Set<String> seen = new LinkedHashSet<>();
        for (Map.Entry<Integer, String> e : nodes.entrySet()) {
            if (!seen.add(e.getValue())) {
                throw p.invalid("node." + e.getKey(), "another node has the same address; every node needs its own"
                        + " host:port");
            }
        }
        return new ServersConfig(nodes, groups);
    }

    /** Every group with a {@code group.<id>.<what>} line also has its members line. */
    private static void requireMembersLine(PropertiesFile p, Map<Integer, int[]> members, Map<Integer, ?> lines,
                                           String what) {
        for (Integer g : lines.keySet()) {
            if (!members.containsKey(g)) {
                String key = "group." + g + "." + what;
                throw new ConfigException(p.path(), key, p.locate(key) + ": group " + g + " has " + what
                        + " but no group." + g + ".members line");
            }
        }
    }

    private static int id(PropertiesFile p, String key, String text, String what) {
        // Written plainly (no sign, no leading zero): node.01 and node.1 would otherwise be one node
        // in two lines, the second silently replacing the first.
        if (text.matches("[1-9][0-9]{0,8}")) {
            return Integer.parseInt(text);
        }
        throw new ConfigException(p.path(), key, p.locate(key) + ": '" + key + "': " + what + " ids are positive"
                + " integers written without sign or leading zeros, found '" + text + "'");
    }

    private static String hostPort(PropertiesFile p, String key) {
        String v = p.get(key);
        String problem = io.poyang.net.HostPort.problem(v, false);
        if (problem != null) {
            throw p.invalid(key, problem + " (the node's replication address)");
        }
        return v;
    }

    private static int[] idList(PropertiesFile p, String key) {
        String v = p.get(key);
        if (v.isEmpty()) {
            return new int[0];
        }
        String[] parts = v.split(",");
        int[] ids = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                ids[i] = Integer.parseInt(parts[i].trim());
            } catch (NumberFormatException e) {
                throw p.invalid(key, "'" + parts[i].trim() + "' is not a node id; expected ids separated by commas");
            }
            if (ids[i] <= 0) {
                throw p.invalid(key, "node ids are positive: " + ids[i]);
            }
            for (int j = 0; j < i; j++) {
                if (ids[j] == ids[i]) {
                    throw p.invalid(key, "node " + ids[i] + " is listed twice");
                }
            }
        }
        return ids;
    }

    /**
     * Checks that this layout is one {@link #load} would accept (every group member has an address,
     * no node both votes and observes …); {@link ConfigException} says what is wrong.
     */
    public void checkWritable() {
        PropertiesFile p = PropertiesFile.empty(null);
        applyTo(p);
        from(p);
    }

    /**
     * Writes this layout into {@code file}, keeping its comments and the order of the lines that stay
     * (new nodes and groups are appended, removed ones dropped), atomically.
     */
    public void writeTo(Path file) throws IOException {
        PropertiesFile p;
        try {
            p = PropertiesFile.read(file);
        } catch (ConfigException e) {
            p = PropertiesFile.empty(file);
        }
        applyTo(p);
        p.writeAtomically();
    }

    /** Makes {@code p}'s settings equal this layout. */
    void applyTo(PropertiesFile p) {
        for (String key : new ArrayList<>(p.keys())) {
            String[] parts = key.split("\\.", -1);
            boolean keep = false;
            try {
                if (parts.length == 2 && parts[0].equals("node")) {
                    keep = nodes.containsKey(Integer.parseInt(parts[1]));
                } else if (parts.length == 3 && parts[0].equals("group")) {
                    Group g = groups.get(Integer.parseInt(parts[1]));
                    keep = g != null && (parts[2].equals("members") || parts[2].equals("observers")
                            || parts[2].equals("nonMembers") && g.nonMembers.length > 0
                            || parts[2].equals("preferredLeader") && g.preferredLeader != 0);
                }
            } catch (NumberFormatException e) {
                keep = false;
            }
            if (!keep) {
                p.remove(key);
            }
        }
        for (Map.Entry<Integer, String> e : nodes.entrySet()) {
            p.set("node." + e.getKey(), e.getValue());
        }
        for (Group g : groups.values()) {
            p.set("group." + g.id + ".members", join(g.members));
            if (g.observers.length > 0 || p.contains("group." + g.id + ".observers")) {
                p.set("group." + g.id + ".observers", join(g.observers));
            }
            if (g.nonMembers.length > 0) {
                p.set("group." + g.id + ".nonMembers", join(g.nonMembers));
            }
            if (g.preferredLeader != 0) {
                p.set("group." + g.id + ".preferredLeader", Integer.toString(g.preferredLeader));
            }
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ServersConfig && nodes.equals(((ServersConfig) o).nodes)
                && groups.equals(((ServersConfig) o).groups);
    }

    @Override
    public int hashCode() {
        return nodes.hashCode() * 31 + groups.hashCode();
    }

    @Override
    public String toString() {
        return "nodes " + nodes + ", groups " + groups.values();
    }

    /** Node ids separated by commas, as servers.properties lists them ("" for none). */
    public static String join(int[] ids) {
        StringBuilder sb = new StringBuilder();
        for (int id : ids) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(id);
        }
        return sb.toString();
    }

    private static int[] sortedCopy(int[] a) {
        int[] c = a.clone();
        Arrays.sort(c);
        return c;
    }

    private static boolean contains(int[] a, int v) {
        for (int x : a) {
            if (x == v) {
                return true;
            }
        }
        return false;
    }
}
