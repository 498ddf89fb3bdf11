package io.poyang.server.cli;

import io.poyang.common.PoyangTimeoutException;
import io.poyang.net.NetConnectionException;
import io.poyang.raft.client.AdminClient;
import io.poyang.raft.client.AdminClientConfig;
import io.poyang.raft.client.AdminError;
import io.poyang.raft.client.GroupMembers;
import io.poyang.raft.client.GroupStatus;
import io.poyang.raft.client.NodeStatus;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.client.RaftAdminException;
import io.poyang.server.Json;
import io.poyang.server.config.ServersConfig;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * {@code ./poyang admin}: administers a cluster over {@link AdminClient}, through the nodes'
 * replication (admin) ports.
 *
 * <pre>
 * poyang admin [--servers ID=HOST:PORT,...] [--timeout MS] [--json] COMMAND ARGS
 *   status [--group G]                                  list-nodes                list-groups
 *   transfer-leader GROUP NODE                          preferred-leader GROUP NODE
 *   prepare-change GROUP --members IDS [--observers IDS]  commit-change (same)      abort-change GROUP
 *   add-group GROUP --members IDS [--observers IDS] [--on IDS]
 *   remove-group GROUP [--on IDS] [--delete-data]
 *   restart-group GROUP [--on IDS]
 *   add-node NODE HOST:PORT                             remove-node NODE
 * </pre>
 *
 * <p>Every node changes its own {@code servers.properties} when it sees a change (see the node's
 * ServersFileSync), so the command line only talks to the nodes. A group or node that no node
 * asked has ({@code remove-group}, {@code remove-node}, {@code status --group}) is an error, not an
 * empty success. Exit codes: {@value #EXIT_OK}
 * done; {@value #EXIT_ERROR} an error (the message says which and what to do);
 * {@value #EXIT_UNREACHABLE} for {@code status} when a node, or a group on it, could not be asked (the
 * table is still printed).
 */
public final class AdminCommand {

    public static final int EXIT_OK = 0;
    public static final int EXIT_ERROR = 2;
    public static final int EXIT_UNREACHABLE = 4;

    static final String DEFAULT_SERVERS = "127.0.0.1:9431";

    private static final Set<String> VALUED = new HashSet<>(Arrays.asList("--servers", "--timeout", "--group",
            "--members", "--observers", "--on"));
    private static final Set<String> FLAGS = new HashSet<>(Arrays.asList("--json", "--verbose", "--help", "-h",
            "--delete-data"));

    private final PrintStream out;
    private final PrintStream err;
    private boolean json;
    private Map<Integer, String> servers;
    private long timeoutMillis;
    /** When the whole command must end ({@code --timeout} from its start), on System.nanoTime(). */
    private long deadlineNanos;

    AdminCommand(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    public static void main(String[] args) {
        CliLogging.configure(!Arrays.asList(args).contains("--verbose"));
        System.exit(run(args, System.out, System.err));
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return new AdminCommand(out, err).execute(args);
    }

    int execute(String[] args) {
        CliArgs a;
        try {
            a = CliArgs.parse(args, VALUED, FLAGS);
            json = a.flag("--json");
            if (a.flag("--help") || a.flag("-h")) {
                usage(out);
                return EXIT_OK;
            }
            if (a.positional().isEmpty()) {
                throw new CliArgs.UsageException("name a command");
            }
            String s = a.value("--servers", envOr("POYANG_ADMIN_SERVERS", DEFAULT_SERVERS));
            servers = ServerList.parse("--servers", s);
            timeoutMillis = a.longValue("--timeout", 30_000, 1, 3_600_000);
            deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        } catch (CliArgs.UsageException e) {
            return usageError(e.getMessage());
        }
        AdminClientConfig cfg = new AdminClientConfig();
        servers.forEach(cfg::node);
        // A node that cannot be reached holds a request for its whole timeout (connections are retried
        // until then: the node may be restarting). Half the command's --timeout at most leaves the
        // other half for the nodes that can be reached: remove-group and restart-group go on past it.
        cfg.requestTimeoutMillis = Math.max(1, Math.min(timeoutMillis / 2, cfg.requestTimeoutMillis));
        cfg.net.name = "admin";
        // once the command has its answers (or its deadline passed) nothing is left worth waiting
        // for: a request still out to a node that does not answer is dropped at exit
        cfg.net.stopTimeoutMillis = 0;
        String command = a.positional().get(0);
        List<String> rest = a.positional().subList(1, a.positional().size());
        try (AdminClient admin = new AdminClient(cfg)) {
            admin.start();
            switch (command) {
                case "status":
                    expect(rest, 0);
                    return status(admin, a.has("--group") ? (int) a.longValue("--group", 0, 1, Integer.MAX_VALUE) : 0);
                case "transfer-leader":
                    expect(rest, 2);
                    return transferLeader(admin, id(rest.get(0), "GROUP"), id(rest.get(1), "NODE"));
                case "preferred-leader":
                    expect(rest, 2);
                    return preferredLeader(admin, id(rest.get(0), "GROUP"), idOrNone(rest.get(1), "NODE"));
                case "prepare-change":
                case "commit-change": {
                    expect(rest, 1);
                    int group = id(rest.get(0), "GROUP");
                    int[] voters = ids(a, "--members", true);
                    int[] observers = ids(a, "--observers", false);
                    GroupMembers m = command.equals("prepare-change")
                            ? admin.prepareMembers(group, voters, observers, remainingMillis())
                            : admin.commitMembers(group, voters, observers, remainingMillis());
                    return members(command, group, m);
                }
                case "abort-change": {
                    expect(rest, 1);
                    int group = id(rest.get(0), "GROUP");
                    return members(command, group, admin.abortMembers(group, remainingMillis()));
                }
                case "add-group":
                    expect(rest, 1);
                    return addGroup(admin, a, id(rest.get(0), "GROUP"));
                case "remove-group":
                    expect(rest, 1);
                    return removeGroup(admin, a, id(rest.get(0), "GROUP"));
                case "restart-group":
                    expect(rest, 1);
                    return restartGroup(admin, a, id(rest.get(0), "GROUP"));
                case "add-node":
                    expect(rest, 2);
                    return addNode(admin, id(rest.get(0), "NODE"), rest.get(1));
                case "remove-node":
                    expect(rest, 1);
                    return removeNode(admin, id(rest.get(0), "NODE"));
                case "list-nodes":
                    expect(rest, 0);
                    return listNodes(admin);
                case "list-groups":
                    expect(rest, 0);
                    return listGroups(admin);
                default:
                    return usageError("unknown command '" + command + "'");
            }
        } catch (CliArgs.UsageException e) {
            return usageError(e.getMessage());
        } catch (RuntimeException e) {
            return failure(e);
        }
    }

    // ------------------------------------------------------------------ commands

    /** One row of the status table: a group on a node. */
    private static final class Row {
        final int group;
        final int node;
        final GroupStatus status;
        final String error;

        Row(int group, int node, GroupStatus status, String error) {
            this.group = group;
            this.node = node;
            this.status = status;
            this.error = error;
        }
    }

    private int status(AdminClient admin, int onlyGroup) {
        // Every node is asked at once, and each asked for its groups as soon as it answers, so one
        // node that does not answer holds up only its own rows within the command's deadline.
        Map<Integer, CompletableFuture<Map<Integer, CompletableFuture<GroupStatus>>>> nodeAsks = new LinkedHashMap<>();
        Set<Integer> groupsSeen = new ConcurrentSkipListSet<>();
        for (int n : servers.keySet()) {
            nodeAsks.put(n, admin.nodeStatusAsync(n).thenApply(ns -> {
                Map<Integer, CompletableFuture<GroupStatus>> groupAsks = new TreeMap<>();
                for (int g : ns.groupIds()) {
                    groupsSeen.add(g);
                    if (onlyGroup == 0 || g == onlyGroup) {
                        groupAsks.put(g, admin.groupStatusAsync(n, g));
                    }
                }
                return groupAsks;
            }));
        }
        Map<Integer, String> unreachable = new TreeMap<>();
        // group → node → its status
        TreeMap<Integer, TreeMap<Integer, CompletableFuture<GroupStatus>>> hosts = new TreeMap<>();
        for (Map.Entry<Integer, CompletableFuture<Map<Integer, CompletableFuture<GroupStatus>>>> e : nodeAsks.entrySet()) {
            try {
                get(e.getValue()).forEach((g, f) -> hosts.computeIfAbsent(g, k -> new TreeMap<>()).put(e.getKey(), f));
            } catch (RuntimeException ex) {
                unreachable.put(e.getKey(), describe(ex));
            }
        }
        if (onlyGroup != 0 && hosts.isEmpty() && unreachable.isEmpty()) {
            // every node answered and none runs it: a mistyped id, not an empty table
            throw noSuchGroup(onlyGroup, "no node of --servers runs group " + onlyGroup, groupsSeen, "");
        }
        List<Row> rows = new ArrayList<>();
        Map<Integer, GroupStatus> leaders = new TreeMap<>();
        for (Map.Entry<Integer, TreeMap<Integer, CompletableFuture<GroupStatus>>> e : hosts.entrySet()) {
            for (Map.Entry<Integer, CompletableFuture<GroupStatus>> a : e.getValue().entrySet()) {
                try {
                    GroupStatus s = get(a.getValue());
                    rows.add(new Row(e.getKey(), a.getKey(), s, null));
                    if (s.role() == io.poyang.raft.client.RaftRole.LEADER) {
                        GroupStatus prev = leaders.get(e.getKey());
                        if (prev == null || prev.term() < s.term()) {
                            leaders.put(e.getKey(), s);
                        }
                    }
                } catch (RuntimeException ex) {
                    rows.add(new Row(e.getKey(), a.getKey(), null, describe(ex)));
                }
            }
        }
        if (json) {
            printStatusJson(rows, leaders, unreachable);
        } else {
            printStatusTable(rows, leaders, unreachable);
        }
        // a group row without an answer is a part of the table missing, as a node that was not reached is
        boolean rowMissing = false;
        for (Row r : rows) {
            rowMissing |= r.error != null;
        }
        return unreachable.isEmpty() && !rowMissing ? EXIT_OK : EXIT_UNREACHABLE;
    }

    private static String lagOf(GroupStatus leader, Row r) {
        if (leader == null) {
            return "?";
        }
        if (leader.nodeId() == r.node) {
            return "-";
        }
        for (GroupStatus.Follower f : leader.followers()) {
            if (f.nodeId() == r.node) {
                return String.valueOf(f.lag());
            }
        }
        return "?";
    }

    private void printStatusTable(List<Row> rows, Map<Integer, GroupStatus> leaders, Map<Integer, String> unreachable) {
        TextTable table = new TextTable("GROUP", "NODE", "ROLE", "TERM", "LEADER", "FIRST", "LAST", "PERSISTED",
                "COMMIT", "APPLIED", "LAG", "CONFIGURATION");
        for (Row r : rows) {
            if (r.status == null) {
                table.row(String.valueOf(r.group), String.valueOf(r.node), "?", "", "", "", "", "", "", "", "",
                        "no answer: " + r.error);
                continue;
            }
            GroupStatus s = r.status;
            boolean observer = contains(s.observers(), r.node);
            String role = s.failure().isEmpty() ? s.role().name() + (observer ? " (observer)" : "") : "FAILED";
            table.row(String.valueOf(r.group), String.valueOf(r.node), role, String.valueOf(s.term()),
                    s.leaderId() == 0 ? "none" : String.valueOf(s.leaderId()), String.valueOf(s.firstLogIndex()),
                    String.valueOf(s.lastLogIndex()), String.valueOf(s.persistedIndex()), String.valueOf(s.commitIndex()),
                    String.valueOf(s.lastApplied()), lagOf(leaders.get(r.group), r), configuration(s));
        }
        table.print(out);
        if (rows.isEmpty()) {
            out.println("(no groups)");
        }
        for (Map.Entry<Integer, String> u : unreachable.entrySet()) {
            out.println("node " + u.getKey() + " (" + servers.get(u.getKey()) + "): unreachable: " + u.getValue());
        }
        for (Row r : rows) {
            if (r.status != null && !r.status.failure().isEmpty()) {
                out.println("group " + r.group + " on node " + r.node + " failed: " + r.status.failure());
            }
        }
    }

    private static String configuration(GroupStatus s) {
        String c = "voters " + join(s.voters());
        if (s.isJoint()) {
            c += " -> " + join(s.newVoters()) + " (change prepared)";
        }
        if (s.observers().length > 0) {
            c += ", observers " + join(s.observers());
        }
        if (s.transferTarget() != 0) {
            c += ", transferring to " + s.transferTarget();
        }
        if (s.preferredLeader() != 0) {
            c += ", preferred leader " + s.preferredLeader();
        }
        return c;
    }

    private void printStatusJson(List<Row> rows, Map<Integer, GroupStatus> leaders, Map<Integer, String> unreachable) {
        List<String> items = new ArrayList<>();
        for (Row r : rows) {
            Json j = new Json().field("group", r.group).field("node", r.node);
            if (r.status == null) {
                j.field("error", r.error);
            } else {
                GroupStatus s = r.status;
                String lag = lagOf(leaders.get(r.group), r);
                j.field("role", s.role().name()).field("observer", contains(s.observers(), r.node))
                        .field("term", s.term()).field("leader", s.leaderId())
                        .field("firstLogIndex", s.firstLogIndex()).field("lastLogIndex", s.lastLogIndex())
                        .field("persistedIndex", s.persistedIndex()).field("commitIndex", s.commitIndex())
                        .field("appliedIndex", s.lastApplied())
                        .raw("lag", lag.matches("\\d+") ? lag : "null")
                        .raw("voters", intArray(s.voters())).field("joint", s.isJoint())
                        .raw("newVoters", intArray(s.newVoters())).raw("observers", intArray(s.observers()))
                        .field("preferredLeader", s.preferredLeader())
                        .field("failure", s.failure().isEmpty() ? null : s.failure());
            }
            items.add(j.toString());
        }
        List<String> down = new ArrayList<>();
        for (Map.Entry<Integer, String> u : unreachable.entrySet()) {
            down.add(new Json().field("node", u.getKey()).field("error", u.getValue()).toString());
        }
        out.println(new Json().raw("groups", Json.array(items)).raw("unreachable", Json.array(down)));
    }

    private int transferLeader(AdminClient admin, int group, int node) {
        admin.transferLeader(group, node, remainingMillis());
        if (json) {
            out.println(new Json().field("ok", true).field("op", "transfer-leader").field("group", group)
                    .field("leader", node));
        } else {
            out.println("OK: node " + node + " leads group " + group);
        }
        return EXIT_OK;
    }

    /**
     * Sets the preferred leader of {@code group} ({@code node}; 0: none) on every node of
     * {@code --servers} that runs the group. The setting is each node's own, not replicated, and
     * whichever node leads acts on its own, so it goes to all of them; each writes it to its
     * servers.properties, so it outlasts a restart. Each node refuses a node that is not a voter of
     * the group there (BAD_ARGUMENT); refused by every node alike, that refusal is the error.
     * Nodes that could not be asked or told, and voters of the group that --servers does not list,
     * end the command PARTIAL, naming them: a voter without the setting that comes to lead keeps
     * the leadership (running the command again once they can be reached is safe). The command does
     * not wait for the leadership to move: the leader hands it over once the node is caught up,
     * within about an election timeout ({@code status} shows the leader).
     */
    private int preferredLeader(AdminClient admin, int group, int node) {
        Set<Integer> groupsSeen = new ConcurrentSkipListSet<>();
        Set<Integer> hosting = new TreeSet<>();
        Map<Integer, RuntimeException> unasked = new TreeMap<>();
        for (Map.Entry<Integer, CompletableFuture<NodeStatus>> e : askEach(admin::nodeStatusAsync).entrySet()) {
            NodeStatus ns = answerOf(e.getKey(), e.getValue(), unasked);
            if (ns != null) {
                noteGroups(ns, group, e.getKey(), groupsSeen, hosting);
            }
        }
        if (hosting.isEmpty()) {
            if (!unasked.isEmpty()) {
                throw unreachable("preferred-leader set nothing: no node that answered runs group " + group + ", and "
                        + unaskedText(unasked, "whether it runs the group") + ". Run it again once those nodes can"
                        + " be reached", unasked);
            }
            throw noSuchGroup(group, "no node of --servers runs group " + group, groupsSeen, "; nothing was set");
        }
        Map<Integer, CompletableFuture<GroupStatus>> asks = new LinkedHashMap<>();
        for (int n : hosting) {
            asks.put(n, admin.setPreferredLeaderAsync(n, group, node));
        }
        List<Integer> setOn = new ArrayList<>();
        Set<Integer> voters = new TreeSet<>();
        Map<Integer, RuntimeException> notSet = new TreeMap<>();
        for (Map.Entry<Integer, CompletableFuture<GroupStatus>> a : asks.entrySet()) {
            try {
                GroupStatus st = get(a.getValue());
                setOn.add(a.getKey());
                for (int v : union(st.voters(), st.newVoters())) {
                    voters.add(v);
                }
            } catch (RuntimeException e) {
                notSet.put(a.getKey(), e);
            }
        }
        if (setOn.isEmpty() && unasked.isEmpty() && sameRefusal(notSet.values())) {
            throw notSet.values().iterator().next();   // e.g. every node: NODE is not a voter
        }
        String what = node == 0 ? "group " + group + " has no preferred leader" : "node " + node
                + " is the preferred leader of group " + group;
        List<String> missing = new ArrayList<>();
        notSet.forEach((n, e) -> missing.add("node " + n + ": " + describe(e)));
        unasked.forEach((n, e) -> missing.add("node " + n + " (not asked whether it runs the group): "
                + describe(e)));
        List<Integer> unlisted = new ArrayList<>();
        for (int v : voters) {
            if (!servers.containsKey(v)) {
                unlisted.add(v);
            }
        }
        if (!unlisted.isEmpty()) {
            missing.add("node" + (unlisted.size() == 1 ? " " : "s ") + joinList(unlisted) + ", "
                    + (unlisted.size() == 1 ? "a voter" : "voters") + " of the group not in --servers");
        }
        if (!missing.isEmpty()) {
            String done = setOn.isEmpty() ? "set on no node: not on " : what + " on node" + (setOn.size() == 1 ? " "
                    : "s ") + joinList(setOn) + ", but not on ";
            throw new PartialChangeException("preferred-leader: " + done + String.join("; ", missing)
                    + ". A node without the setting that comes to lead keeps the leadership. Run it again, with every"
                    + " voter in --servers, once those nodes can be reached (it is safe to repeat; a node that refused"
                    + " refuses again until the reason given is fixed)",
                    !notSet.isEmpty() ? notSet.values().iterator().next()
                            : !unasked.isEmpty() ? unasked.values().iterator().next() : null);
        }
        String text = what + " on node" + (setOn.size() == 1 ? " " : "s ") + joinList(setOn)
                + (node == 0 ? "" : " (the leader hands it the leadership once it is caught up, and again after"
                + " every failover; status shows the leader)");
        return done("preferred-leader", text, new Json().field("group", group).field("preferredLeader", node)
                .raw("on", setOn.toString().replace(" ", "")));
    }

    /** Every one of {@code errors} is a node's refusal for the same reason (the same {@link AdminError}). */
    private static boolean sameRefusal(java.util.Collection<RuntimeException> errors) {
        AdminError first = null;
        for (RuntimeException e : errors) {
            if (!(e instanceof RaftAdminException)) {
                return false;
            }
            AdminError error = ((RaftAdminException) e).error();
            if (first != null && first != error) {
                return false;
            }
            first = error;
        }
        return first != null;
    }

    private int members(String op, int group, GroupMembers m) {
        if (json) {
            out.println(new Json().field("ok", true).field("op", op).field("group", group)
                    .raw("voters", intArray(m.voters())).field("joint", m.isJoint())
                    .raw("newVoters", intArray(m.newVoters())).raw("observers", intArray(m.observers())));
        } else {
            out.println("OK: group " + group + " voters " + join(m.voters())
                    + (m.isJoint() ? " -> " + join(m.newVoters()) + " (prepared; commit-change or abort-change next)" : "")
                    + (m.observers().length > 0 ? ", observers " + join(m.observers()) : ""));
        }
        return EXIT_OK;
    }

    private int addGroup(AdminClient admin, CliArgs a, int group) {
        int[] voters = ids(a, "--members", true);
        int[] observers = ids(a, "--observers", false);
        int[] on = a.has("--on") ? ids(a, "--on", true) : union(voters, observers);
        // each node answers once the group runs, after replaying its log: allowed the whole --timeout
        long waitMillis = remainingMillis();
        onEachNode("add-group", on, n -> admin.addGroupAsync(n, group, voters, observers, waitMillis));
        return done("add-group", "group " + group + " runs on node" + (on.length > 1 ? "s " : " ") + join(on),
                new Json().field("group", group).raw("on", intArray(on)));
    }

    /**
     * Stops {@code group} on the nodes of {@code --on}, or on every node of {@code --servers} that
     * runs it. Removing is idempotent on a node, so a group that no node asked runs would "succeed"
     * without doing anything; that is refused as NO_SUCH_GROUP instead (a mistyped id, or a removal
     * done already), with the groups the nodes do run. Only nodes that run the group are sent the
     * removal: a node sent {@code --delete-data} deletes the group's directory even when it only
     * holds a replica kept by an earlier remove-group, and the command would then say nothing was
     * removed. Without {@code --on}, a node that cannot be asked does not keep the group from being
     * removed where it runs; the command then ends PARTIAL, naming it.
     */
    private int removeGroup(AdminClient admin, CliArgs a, int group) {
        boolean delete = a.flag("--delete-data");
        Set<Integer> groupsSeen = new ConcurrentSkipListSet<>();
        Set<Integer> ranIt = new ConcurrentSkipListSet<>();
        Map<Integer, RuntimeException> unasked = new TreeMap<>();
        if (a.has("--on")) {
            int[] named = ids(a, "--on", true);
            // each node is asked what it runs just before it is told to remove the group, so the
            // nodes still go at once and one that does not answer holds up only its own part
            onEachNode("remove-group", named, n -> admin.nodeStatusAsync(n).thenCompose(ns -> {
                noteGroups(ns, group, n, groupsSeen, ranIt);
                return ranIt.contains(n) ? admin.removeGroupAsync(n, group, delete)
                        : CompletableFuture.completedFuture(null);
            }));
            if (ranIt.isEmpty()) {
                throw noSuchGroup(group, (named.length == 1 ? "node " + join(named) + " does not run" : "none of nodes "
                        + join(named) + " runs") + " group " + group, groupsSeen, "; nothing was removed"
                        + (delete ? " and no data deleted" : ""));
            }
        } else {
            for (Map.Entry<Integer, CompletableFuture<NodeStatus>> e : askEach(admin::nodeStatusAsync).entrySet()) {
                NodeStatus ns = answerOf(e.getKey(), e.getValue(), unasked);
                if (ns != null) {
                    noteGroups(ns, group, e.getKey(), groupsSeen, ranIt);
                }
            }
            if (ranIt.isEmpty()) {
                if (!unasked.isEmpty()) {
                    String why = "remove-group removed nothing: no node that answered runs group " + group + ", and "
                            + unaskedText(unasked, "whether it runs the group") + ". Run it again once those nodes can"
                            + " be reached";
                    throw unreachable(why, unasked);
                }
                throw noSuchGroup(group, "no node of --servers runs group " + group, groupsSeen,
                        "; nothing was removed");
            }
            onEachNode("remove-group", toArray(ranIt), n -> admin.removeGroupAsync(n, group, delete));
        }
        int[] on = toArray(ranIt);
        String removed = "group " + group + " removed from node" + (on.length == 1 ? " " : "s ") + join(on)
                + (delete ? " and its data deleted" : " (its data kept)");
        if (!unasked.isEmpty()) {
            throw new PartialChangeException("remove-group: " + removed + ", but " + unaskedText(unasked,
                    "whether it runs the group") + ". Run it again once those nodes can be reached",
                    unasked.values().iterator().next());
        }
        return done("remove-group", removed,
                new Json().field("group", group).raw("on", intArray(on)).field("dataDeleted", delete));
    }

    private static int[] toArray(Set<Integer> ids) {
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The nodes that were not asked, as the error of a command that therefore did nothing. */
    private static RuntimeException unreachable(String why, Map<Integer, RuntimeException> unasked) {
        RuntimeException first = unasked.values().iterator().next();
        return first instanceof NetConnectionException ? new NetConnectionException(why, first)
                : new PoyangTimeoutException(why, first);
    }

    /**
     * Restarts {@code group} (stops it and starts it again from its files, with a new state machine)
     * on the nodes of {@code --on}, or, without it, on every node of {@code --servers} where the
     * group failed: what a failed group needs once its cause (a full disk) is fixed. A node that
     * does not answer does not keep the command from the others: the failed replicas found are
     * restarted and the command then ends PARTIAL, naming the nodes it could not ask. A restart not
     * done on every node it was for also ends PARTIAL, saying per node what is known: never reached
     * (run it again there), sent but not answered (outcome unknown: check the status; a restart is not
     * idempotent), or refused; and when running it again without --on is safe. With no
     * {@code --on} and no failed replica, nothing is restarted and that is an error (NOT_FAILED):
     * healthy replicas are restarted only when named.
     */
    private int restartGroup(AdminClient admin, CliArgs a, int group) {
        if (a.flag("--delete-data")) {
            throw new CliArgs.UsageException("restart-group keeps the group's files and takes no --delete-data"
                    + " (remove-group --delete-data deletes them)");
        }
        int[] on;
        Map<Integer, RuntimeException> unasked = new TreeMap<>();
        if (a.has("--on")) {
            on = ids(a, "--on", true);
        } else {
            Set<Integer> groupsSeen = new ConcurrentSkipListSet<>();
            Set<Integer> hosting = new TreeSet<>();
            for (Map.Entry<Integer, CompletableFuture<NodeStatus>> e : askEach(admin::nodeStatusAsync).entrySet()) {
                NodeStatus ns = answerOf(e.getKey(), e.getValue(), unasked);
                if (ns != null) {
                    noteGroups(ns, group, e.getKey(), groupsSeen, hosting);
                }
            }
            Map<Integer, CompletableFuture<GroupStatus>> statuses = new LinkedHashMap<>();
            for (int n : hosting) {
                statuses.put(n, admin.groupStatusAsync(n, group));
            }
            List<Integer> failed = new ArrayList<>();
            for (Map.Entry<Integer, CompletableFuture<GroupStatus>> e : statuses.entrySet()) {
                GroupStatus gs = answerOf(e.getKey(), e.getValue(), unasked);
                if (gs != null && !gs.failure().isEmpty()) {
                    failed.add(e.getKey());
                }
            }
            if (failed.isEmpty()) {
                if (!unasked.isEmpty()) {
                    // it may have failed exactly there: named as what kept those nodes from answering
                    String why = "restart-group restarted nothing: group " + group + " has not failed on "
                            + (hosting.isEmpty() ? "any node that answered" : "node" + (hosting.size() == 1 ? " " : "s ")
                            + joinList(new ArrayList<>(hosting))) + ", and "
                            + unaskedText(unasked, "whether it failed there")
                            + ". Run it again once those nodes can be reached";
                    throw unreachable(why, unasked);
                }
                if (hosting.isEmpty()) {
                    throw noSuchGroup(group, "no node of --servers runs group " + group, groupsSeen,
                            "; nothing was restarted");
                }
                throw new NotFailedException("group " + group + " has not failed on any node running it (node"
                        + (hosting.size() == 1 ? " " : "s ") + joinList(new ArrayList<>(hosting))
                        + "); nothing was restarted. To restart it anyway, name the nodes: restart-group " + group
                        + " --on IDS");
            }
            on = failed.stream().mapToInt(Integer::intValue).toArray();
        }
        // the old group's stop (up to 30 s for its file operations) and the new one's replay:
        // allowed the whole --timeout
        long waitMillis = remainingMillis();
        onEachNode("restart-group", on, n -> admin.restartGroupAsync(n, group, waitMillis),
                notDone -> restartNotDoneHint(group, on, notDone, unasked));
        if (!unasked.isEmpty()) {
            throw new PartialChangeException("restart-group restarted group " + group + " on node"
                    + (on.length == 1 ? " " : "s ") + join(on) + ", where it had failed, but "
                    + unaskedText(unasked, "whether it failed there") + ". " + rerunWithoutOn(group) + " once "
                    + (unasked.size() == 1 ? "that node" : "those nodes") + " can be reached",
                    unasked.values().iterator().next());
        }
        return done("restart-group", "group " + group + " restarted on node" + (on.length == 1 ? " " : "s ")
                + join(on) + " (it recovered its files and catches up from the leader)",
                new Json().field("group", group).raw("on", intArray(on)));
    }

    /**
     * How to finish a restart-group that was not done on every node, by what is known of each node
     * it was not done on. A restart is not idempotent (a second one after the first ended stops the
     * group again), and the admin client sends it again only while it certainly never left, so
     * "run it again" is right as it stands only for a node the restart never reached; one that got
     * it and did not answer (timed out, or its connection lost: outcome unknown) may have restarted
     * the group, and one that refused it will refuse again. Nodes the search for failed replicas
     * could not ask ({@code unasked}) are named too.
     */
    private static String restartNotDoneHint(int group, int[] on, Map<Integer, RuntimeException> notDone,
                                             Map<Integer, RuntimeException> unasked) {
        List<Integer> done = new ArrayList<>();
        for (int n : on) {
            if (!notDone.containsKey(n)) {
                done.add(n);
            }
        }
        List<Integer> neverReached = new ArrayList<>();
        List<Integer> outcomeUnknown = new ArrayList<>();
        List<Integer> refused = new ArrayList<>();
        notDone.forEach((n, e) -> {
            if (e instanceof PoyangTimeoutException) {   // RaftOutcomeUnknownException is one too
                outcomeUnknown.add(n);
            } else if (e instanceof NetConnectionException) {
                neverReached.add(n);
            } else {
                refused.add(n);
            }
        });
        List<String> sentences = new ArrayList<>();
        if (!done.isEmpty()) {
            sentences.add(nodes(done) + " restarted the group and need" + (done.size() == 1 ? "s" : "")
                    + " no second restart.");
        }
        if (!neverReached.isEmpty()) {
            sentences.add(nodes(neverReached) + (neverReached.size() == 1 ? " was" : " were") + " never reached, so the"
                    + " group was not restarted there: run restart-group " + group + " --on " + joinList(neverReached)
                    + " once " + (neverReached.size() == 1 ? "it" : "they") + " can be reached.");
        }
        if (!outcomeUnknown.isEmpty()) {
            sentences.add(nodes(outcomeUnknown) + (outcomeUnknown.size() == 1 ? " was" : " were") + " sent the restart"
                    + " and did not answer: the group may have restarted there, may still be restarting, or the"
                    + " restart may never have arrived. Check `poyang admin status --group " + group
                    + "`: ROLE FAILED on a node means the group is still failed there; any other role means it runs"
                    + " and needs no restart (naming such a node with --on would stop it again).");
        }
        if (!refused.isEmpty()) {
            sentences.add(nodes(refused) + " refused it, for the reason given: running it again changes nothing"
                    + " there until that is fixed.");
        }
        if (!unasked.isEmpty()) {
            sentences.add("Also, " + unaskedText(unasked, "whether it failed there") + ".");
        }
        if (!outcomeUnknown.isEmpty() || !unasked.isEmpty()) {
            sentences.add(rerunWithoutOn(group) + " once the nodes answer.");
        }
        return String.join(" ", sentences);
    }

    /**
     * When re-running restart-group is safe: without --on it restarts only the replicas that are
     * FAILED when it asks, and a node asked again while its restart is still under way joins that
     * restart instead of starting another (RaftServer.restartGroup).
     */
    private static String rerunWithoutOn(int group) {
        return "`restart-group " + group + "` without --on is safe to run again: it restarts only replicas that are"
                + " still FAILED (`poyang admin status --group " + group + "` shows them), and a node still"
                + " restarting the group joins that restart rather than starting another; run it";
    }

    private static String nodes(List<Integer> ids) {
        return (ids.size() == 1 ? "Node " : "Nodes ") + joinList(ids);
    }

    /**
     * A node's answer, or null when it could not be reached or did not answer in time (recorded in
     * {@code unasked}); any other error (a refusal) is thrown.
     */
    private <T> T answerOf(int node, CompletableFuture<T> answer, Map<Integer, RuntimeException> unasked) {
        try {
            return get(answer);
        } catch (NetConnectionException | PoyangTimeoutException e) {
            unasked.put(node, e);
            return null;
        }
    }

    /** "node N was not asked {@code question} (why)", for the nodes that could not be asked. */
    private static String unaskedText(Map<Integer, RuntimeException> unasked, String question) {
        StringBuilder b = new StringBuilder();
        unasked.forEach((n, e) -> b.append(b.length() > 0 ? "; " : "").append("node ").append(n).append(": ")
                .append(describe(e)));
        return (unasked.size() == 1 ? "node " + unasked.keySet().iterator().next() + " was"
                : "nodes " + joinList(new ArrayList<>(unasked.keySet())) + " were") + " not asked " + question
                + " (" + b + ")";
    }

    private int addNode(AdminClient admin, int node, String address) {
        String problem = io.poyang.net.HostPort.problem(address, false);
        if (problem != null) {
            throw new CliArgs.UsageException("add-node NODE HOST:PORT: " + problem);
        }
        List<Integer> told = onEachNode("add-node", othersThan(node), n -> admin.addNodeAsync(n, node, address));
        return done("add-node", "node " + node + " at " + address + " known to node" + (told.size() == 1 ? " " : "s ")
                        + joinList(told), new Json().field("node", node).field("address", address)
                        .raw("on", told.toString().replace(" ", "")));
    }

    /**
     * Makes every other node of {@code --servers} forget {@code node}. Forgetting is idempotent on a
     * node, so a node that none of them knows would "succeed" without doing anything; that is refused
     * as UNKNOWN_NODE instead (a mistyped id, or a removal done already), with the nodes they know.
     */
    private int removeNode(AdminClient admin, int node) {
        if (othersThan(node).length == 0) {
            throw new CliArgs.UsageException("remove-node " + node + ": --servers lists no other node to tell");
        }
        Set<Integer> nodesSeen = new ConcurrentSkipListSet<>();
        Set<Integer> knewIt = ConcurrentHashMap.newKeySet();
        // each node is asked what it knows just before it is told to forget, as in removeGroup
        List<Integer> told = onEachNode("remove-node", othersThan(node), n -> admin.nodeStatusAsync(n)
                .thenCompose(ns -> {
                    nodesSeen.addAll(ns.nodes().keySet());
                    if (ns.nodes().containsKey(node)) {
                        knewIt.add(n);
                    }
                    return admin.removeNodeAsync(n, node);
                }));
        if (knewIt.isEmpty()) {
            throw new NoSuchTargetException(AdminError.UNKNOWN_NODE, "no node of --servers"
                    + " knows node " + node + " (the nodes asked know nodes " + joinList(new ArrayList<>(nodesSeen))
                    + "); nothing was removed. Check the node id; list-nodes shows what each node knows");
        }
        return done("remove-node", "node " + node + " forgotten by node" + (told.size() == 1 ? " " : "s ")
                + joinList(told), new Json().field("node", node).raw("on", told.toString().replace(" ", "")));
    }

    private int listNodes(AdminClient admin) {
        // node id → address → the nodes that know it so
        TreeMap<Integer, TreeMap<String, TreeSet<Integer>>> known = new TreeMap<>();
        Map<Integer, String> unreachable = new TreeMap<>();
        for (Map.Entry<Integer, CompletableFuture<Map<Integer, String>>> ask : askEach(admin::listNodesAsync).entrySet()) {
            int n = ask.getKey();
            try {
                for (Map.Entry<Integer, String> e : get(ask.getValue()).entrySet()) {
                    known.computeIfAbsent(e.getKey(), k -> new TreeMap<>())
                            .computeIfAbsent(e.getValue(), k -> new TreeSet<>()).add(n);
                }
            } catch (RuntimeException e) {
                unreachable.put(n, describe(e));
            }
        }
        if (json) {
            List<String> items = new ArrayList<>();
            known.forEach((id, addrs) -> addrs.forEach((addr, by) -> items.add(new Json().field("node", id)
                    .field("address", addr).raw("knownBy", by.toString().replace(" ", "")).toString())));
            List<String> down = new ArrayList<>();
            unreachable.forEach((id, why) -> down.add(new Json().field("node", id).field("error", why).toString()));
            out.println(new Json().raw("nodes", Json.array(items)).raw("unreachable", Json.array(down)));
        } else {
            TextTable t = new TextTable("NODE", "ADDRESS", "KNOWN BY");
            known.forEach((id, addrs) -> addrs.forEach((addr, by) -> t.row(String.valueOf(id), addr,
                    joinList(new ArrayList<>(by)))));
            t.print(out);
            unreachable.forEach((id, why) -> out.println("node " + id + " (" + servers.get(id) + "): unreachable: " + why));
        }
        return unreachable.isEmpty() ? EXIT_OK : EXIT_UNREACHABLE;
    }

    private int listGroups(AdminClient admin) {
        TreeMap<Integer, TreeSet<Integer>> hosts = new TreeMap<>();
        Map<Integer, String> unreachable = new TreeMap<>();
        for (Map.Entry<Integer, CompletableFuture<NodeStatus>> ask : askEach(admin::nodeStatusAsync).entrySet()) {
            int n = ask.getKey();
            try {
                for (int g : get(ask.getValue()).groupIds()) {
                    hosts.computeIfAbsent(g, k -> new TreeSet<>()).add(n);
                }
            } catch (RuntimeException e) {
                unreachable.put(n, describe(e));
            }
        }
        if (json) {
            List<String> items = new ArrayList<>();
            hosts.forEach((g, on) -> items.add(new Json().field("group", g).raw("on", on.toString().replace(" ", ""))
                    .toString()));
            List<String> down = new ArrayList<>();
            unreachable.forEach((id, why) -> down.add(new Json().field("node", id).field("error", why).toString()));
            out.println(new Json().raw("groups", Json.array(items)).raw("unreachable", Json.array(down)));
        } else {
            TextTable t = new TextTable("GROUP", "ON NODES");
            hosts.forEach((g, on) -> t.row(String.valueOf(g), joinList(new ArrayList<>(on))));
            t.print(out);
            unreachable.forEach((id, why) -> out.println("node " + id + " (" + servers.get(id) + "): unreachable: " + why));
        }
        return unreachable.isEmpty() ? EXIT_OK : EXIT_UNREACHABLE;
    }

    // ------------------------------------------------------------------ helpers

    /** The nodes of --servers but {@code node}. */
    private int[] othersThan(int node) {
        return servers.keySet().stream().mapToInt(Integer::intValue).filter(n -> n != node).toArray();
    }

    /**
     * Runs {@code step} on all of {@code nodes} at once and waits for them within the command's
     * deadline; a node that fails does not keep the command from the others. When some were done
     * and some not, the error names both, so a change half made is seen as such (run it again once
     * the others are back: every step is idempotent).
     */
    private List<Integer> onEachNode(String op, int[] nodes,
                                     java.util.function.IntFunction<CompletableFuture<?>> step) {
        return onEachNode(op, nodes, step,
                notDone -> "Run it again once those nodes can be reached (it is safe to repeat)");
    }

    /**
     * As above; {@code repeatHint}, given the nodes it was not done on and why, ends the PARTIAL
     * message: how to finish the change.
     */
    private List<Integer> onEachNode(String op, int[] nodes, java.util.function.IntFunction<CompletableFuture<?>> step,
                                     java.util.function.Function<Map<Integer, RuntimeException>, String> repeatHint) {
        Map<Integer, CompletableFuture<?>> asks = new LinkedHashMap<>();
        for (int n : nodes) {
            asks.put(n, step.apply(n));
        }
        List<Integer> doneOn = new ArrayList<>();
        Map<Integer, RuntimeException> failed = new TreeMap<>();
        RuntimeException first = null;
        for (Map.Entry<Integer, CompletableFuture<?>> a : asks.entrySet()) {
            try {
                get(a.getValue());
                doneOn.add(a.getKey());
            } catch (RuntimeException e) {
                failed.put(a.getKey(), e);
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first == null) {
            return doneOn;
        }
        if (doneOn.isEmpty() && failed.size() == 1) {
            throw first;
        }
        StringBuilder why = new StringBuilder();
        failed.forEach((n, e) -> why.append(why.length() > 0 ? "; " : "").append("node ").append(n).append(": ")
                .append(describe(e)));
        throw new PartialChangeException(op + " was done on " + (doneOn.isEmpty() ? "no node" : "node"
                + (doneOn.size() == 1 ? " " : "s ") + joinList(doneOn)) + " and not on " + why
                + ". " + repeatHint.apply(failed), first);
    }

    /** Records the groups {@code ns} runs, and whether {@code group} is among them (then adds {@code node} to {@code runners}). */
    private static void noteGroups(NodeStatus ns, int group, int node, Set<Integer> groupsSeen, Set<Integer> runners) {
        for (int g : ns.groupIds()) {
            groupsSeen.add(g);
        }
        if (contains(ns.groupIds(), group)) {
            runners.add(node);
        }
    }

    private static NoSuchTargetException noSuchGroup(int group, String what, Set<Integer> groupsSeen, String outcome) {
        return new NoSuchTargetException(AdminError.NO_SUCH_GROUP, what + " (the nodes asked"
                + " run " + (groupsSeen.isEmpty() ? "no group" : "group" + (groupsSeen.size() == 1 ? " " : "s ")
                + joinList(new ArrayList<>(groupsSeen))) + ")" + outcome + ". Check the group id; list-groups shows"
                + " which node runs what");
    }

    /**
     * A command names a group or node that none of the nodes asked has: a mistyped id (or a change
     * made already). Nothing was changed. Named like the nodes' own refusal of the same thing.
     */
    static final class NoSuchTargetException extends RuntimeException {
        final AdminError error;

        NoSuchTargetException(AdminError error, String message) {
            super(message);
            this.error = error;
        }
    }

    /** restart-group without --on found the group failed nowhere: nothing to restart. */
    static final class NotFailedException extends RuntimeException {
        NotFailedException(String message) {
            super(message);
        }
    }

    /** A command that reached some of its nodes and not others. */
    static final class PartialChangeException extends RuntimeException {
        PartialChangeException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private int done(String op, String text, Json details) {
        if (json) {
            out.println(new Json().field("ok", true).field("op", op).raw("details", details.toString()));
        } else {
            out.println("OK: " + text);
        }
        return EXIT_OK;
    }

    private int usageError(String message) {
        err.println("poyang admin: " + message);
        err.println("run 'poyang admin --help' for the commands and options");
        return EXIT_ERROR;
    }

    private int failure(RuntimeException e) {
        String name;
        if (e instanceof RaftAdminException) {
            name = ((RaftAdminException) e).error().name();
        } else if (e instanceof NotLeaderException) {
            name = "NOT_LEADER";
        } else if (e instanceof PoyangTimeoutException) {
            name = "TIMEOUT";
        } else if (e instanceof NetConnectionException) {
            name = "UNREACHABLE";
        } else if (e instanceof IllegalArgumentException) {
            name = "BAD_ARGUMENT";
        } else if (e instanceof PartialChangeException) {
            name = "PARTIAL";
        } else if (e instanceof NoSuchTargetException) {
            name = ((NoSuchTargetException) e).error.name();
        } else if (e instanceof NotFailedException) {
            name = "NOT_FAILED";
        } else {
            name = "ERROR";
        }
        String message = describe(e);
        if (json) {
            out.println(new Json().field("ok", false).field("error", name).field("message", message));
        }
        err.println("poyang admin: " + name + ": " + message);
        return EXIT_ERROR;
    }

    private static String describe(Throwable e) {
        if (e instanceof java.util.concurrent.CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        String m = e.getMessage();
        return m == null ? e.toString() : m;
    }

    /** Asks every node of --servers at once; node id → its answer to come, in --servers order. */
    private <T> Map<Integer, CompletableFuture<T>> askEach(java.util.function.IntFunction<CompletableFuture<T>> ask) {
        Map<Integer, CompletableFuture<T>> asks = new LinkedHashMap<>();
        for (int n : servers.keySet()) {
            asks.put(n, ask.apply(n));
        }
        return asks;
    }

    /**
     * What is left of the command's {@code --timeout}; each request and wait gets this, so a command
     * that asks several nodes in turn ends at its deadline, not after one timeout per node.
     */
    private long remainingMillis() {
        long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
        if (left <= 0) {
            throw commandTimedOut();
        }
        return left;
    }

    private PoyangTimeoutException commandTimedOut() {
        return new PoyangTimeoutException("the command's --timeout of " + timeoutMillis + " ms passed");
    }

    private <T> T get(CompletableFuture<T> f) {
        try {
            // an answer already there is taken even when the deadline has just passed
            return f.get(f.isDone() ? 0 : remainingMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException) {
                throw (RuntimeException) c;
            }
            throw new IllegalStateException(String.valueOf(c), c);
        } catch (java.util.concurrent.TimeoutException e) {
            throw commandTimedOut();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
    }

    private static void expect(List<String> args, int count) {
        if (args.size() < count) {
            throw new CliArgs.UsageException("missing argument" + (count - args.size() > 1 ? "s" : "")
                    + "; see --help");
        }
        if (args.size() > count) {
            throw new CliArgs.UsageException("unexpected argument '" + args.get(count) + "'");
        }
    }

    private static int id(String s, String what) {
        try {
            int v = Integer.parseInt(s);
            if (v > 0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new CliArgs.UsageException(what + " must be a positive id, not '" + s + "'");
    }

    /** A node id, or 0 for "none". */
    private static int idOrNone(String s, String what) {
        return "0".equals(s.trim()) ? 0 : id(s, what + " (or 0 for none)");
    }

    private static int[] ids(CliArgs a, String option, boolean required) {
        String v = a.value(option, null);
        if (v == null || v.trim().isEmpty()) {
            if (required) {
                throw new CliArgs.UsageException(option + " IDS is required (node ids separated by commas)");
            }
            return new int[0];
        }
        String[] parts = v.split(",");
        int[] r = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            r[i] = id(parts[i].trim(), option);
        }
        return r;
    }

    private static int[] union(int[] a, int[] b) {
        TreeSet<Integer> s = new TreeSet<>();
        for (int x : a) {
            s.add(x);
        }
        for (int x : b) {
            s.add(x);
        }
        return s.stream().mapToInt(Integer::intValue).toArray();
    }

    private static boolean contains(int[] a, int v) {
        for (int x : a) {
            if (x == v) {
                return true;
            }
        }
        return false;
    }

    private static String join(int[] ids) {
        return ids.length == 0 ? "none" : ServersConfig.join(ids);
    }

    private static String joinList(List<Integer> ids) {
        return join(ids.stream().mapToInt(Integer::intValue).toArray());
    }

    private static String intArray(int[] ids) {
        return Arrays.toString(ids).replace(" ", "");
    }

    private static String envOr(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.trim().isEmpty() ? dflt : v.trim();
    }

    static void usage(PrintStream out) {
        out.println("usage: poyang admin [--servers ID=HOST:PORT,...] [--timeout MS] [--json] COMMAND ARGS");
        out.println();
        out.println("Talks to the nodes' replication (admin) ports. Each node writes membership, group and node");
        out.println("changes it sees into its own servers.properties.");
        out.println();
        out.println("commands:");
        out.println("  status [--group G]             every group on every node: role, term, leader, indexes,");
        out.println("                                 lag behind the leader, configuration and preferred leader");
        out.println("                                 (a table); a group G no node runs is an error");
        out.println("                                 (NO_SUCH_GROUP)");
        out.println("  transfer-leader GROUP NODE     make NODE (a voter) the leader of GROUP");
        out.println("  preferred-leader GROUP NODE    keep GROUP's leadership on NODE (a voter; 0: none): set on");
        out.println("                                 every node running GROUP, written to each servers.properties;");
        out.println("                                 the leader hands over once NODE is caught up, and again after");
        out.println("                                 every failover");
        out.println("  prepare-change GROUP --members IDS [--observers IDS]");
        out.println("                                 start a membership change (joint consensus) to these voters");
        out.println("                                 and observers; new members must run the group (add-group)");
        out.println("  commit-change GROUP --members IDS [--observers IDS]   finish it (the same IDS)");
        out.println("  abort-change GROUP             abandon a prepared change");
        out.println("  add-group GROUP --members IDS [--observers IDS] [--on IDS]");
        out.println("                                 start GROUP on nodes IDS (default: members and observers)");
        out.println("                                 with this configuration (for a node joining an existing");
        out.println("                                 group: its current configuration, --on the new node)");
        out.println("  remove-group GROUP [--on IDS] [--delete-data]   stop running GROUP on nodes IDS");
        out.println("                                 (default: every node running it; when none of them runs");
        out.println("                                 it, an error: NO_SUCH_GROUP)");
        out.println("  restart-group GROUP [--on IDS] stop GROUP on nodes IDS and start it again from its files");
        out.println("                                 (default: every node where it failed); how a group that");
        out.println("                                 failed (e.g. a full disk) comes back once the cause is fixed");
        out.println("  add-node NODE HOST:PORT        tell every other node NODE's replication address");
        out.println("  remove-node NODE               make every other node forget NODE (UNKNOWN_NODE when none");
        out.println("                                 knows it)");
        out.println("  list-nodes                     the nodes each node knows, with addresses");
        out.println("  list-groups                    the groups and the nodes running them");
        out.println();
        out.println("options:");
        out.println("  --servers ...                  replication addresses of the nodes: ID=HOST:PORT,... or");
        out.println("                                 HOST:PORT,... in node-id order (default $POYANG_ADMIN_SERVERS,");
        out.println("                                 else " + DEFAULT_SERVERS + ")");
        out.println("  --timeout MS                   deadline of the whole command (default 30000)");
        out.println("  --json                         one JSON object on stdout");
        out.println();
        out.println("exit codes: 0 done, 2 error, 4 a node, or a group on it, could not be asked (status, list-*)");
    }
}
