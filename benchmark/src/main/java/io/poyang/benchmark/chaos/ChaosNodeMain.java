package io.poyang.benchmark.chaos;

import io.poyang.dtkv.server.DtKvService;
import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.server.RaftServer;
import io.poyang.raft.server.RaftServerConfig;
import io.poyang.raft.server.TestingFaultsService;

import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The DtKV node process the chaos runner starts, one per node, until {@code ./poyang server --conf DIR}
 * (issue 9) can take its place: a {@link RaftServer} with {@link DtKvService} hosting DtKV group
 * {@link #GROUP} on loopback, its data in a directory of its own, and the testing-only
 * {@link TestingFaultsService} so the runner can partition it. It prints {@link #READY} and the node id
 * on stdout once its ports are open, and runs until it is killed (SIGTERM stops it cleanly).
 *
 * <pre>
 * ChaosNodeMain --id 2 --nodes 1=127.0.0.1:20001,2=127.0.0.1:20011,3=127.0.0.1:20021 --service-port 20012
 *               --data DIR [--voters 1,2,3] [--spare] [--election-timeout-ms 1000] [--snapshot-every N]
 *               [--testing-faults]
 * </pre>
 *
 * <p>{@code --nodes} lists every node's replication address; {@code --voters} the group's first voters (default:
 * every node). A {@code --spare} node hosts no group at start: the runner adds the group to it at runtime
 * (AdminClient) when a membership change brings it in.
 *
 * <pre>
 * </pre>
 */
public final class ChaosNodeMain {

    /** The DtKV group every node hosts. */
    public static final int GROUP = 1;
    /** The start of the line printed once the node serves. */
    public static final String READY = "CHAOS NODE READY";

    private ChaosNodeMain() {
    }

    public static void main(String[] args) throws Exception {
        int id = 0;
        String nodes = null;
        int servicePort = -1;
        String data = null;
        long electionTimeoutMillis = 1000;
        long snapshotEvery = 0;
        boolean testingFaults = false;
        boolean spare = false;
        String voters = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--id":
                    id = Integer.parseInt(args[++i]);
                    break;
                case "--nodes":
                    nodes = args[++i];
                    break;
                case "--service-port":
                    servicePort = Integer.parseInt(args[++i]);
                    break;
                case "--data":
                    data = args[++i];
                    break;
                case "--election-timeout-ms":
                    electionTimeoutMillis = Long.parseLong(args[++i]);
                    break;
                case "--snapshot-every":
                    snapshotEvery = Long.parseLong(args[++i]);
                    break;
                case "--testing-faults":
                    testingFaults = true;
                    break;
                case "--voters":
                    voters = args[++i];
                    break;
                case "--spare":
                    spare = true;
                    break;
                default:
                    System.err.println("chaos node: unknown argument " + args[i]);
                    System.exit(2);
            }
        }
        if (id <= 0 || nodes == null || servicePort < 0 || data == null) {
            System.err.println("chaos node: --id, --nodes, --service-port and --data are required");
            System.exit(2);
        }
        DtKvService kv = new DtKvService();
        RaftConfig rc = new RaftConfig().electionTimeoutMillis(electionTimeoutMillis)
                .heartbeatIntervalMillis(Math.max(20, electionTimeoutMillis / 7))
                .snapshotEvery(snapshotEvery, 0);
        RaftServerConfig.Builder b = RaftServer.builder()
                .nodeId(id)
                .servicePort("127.0.0.1", servicePort)
                .dataDir(Paths.get(data))
                .dispatchers(1)
                .raftConfig(rc)
                .serviceExtension(kv)
                // Groups added at runtime (AdminClient.addGroup: a spare joining for a membership change) are DtKV too.
                .stateMachineFactory(g -> kv.stateMachine(g).get());
        List<Integer> members = new ArrayList<>();
        for (String n : nodes.split(",")) {
            String[] p = n.split("=", 2);
            int nodeId = Integer.parseInt(p[0].trim());
            b.node(nodeId, p[1].trim());
            members.add(nodeId);
        }
        if (voters != null) {
            members.clear();
            for (String v : voters.split(",")) {
                members.add(Integer.parseInt(v.trim()));
            }
        }
        if (!spare) {
            // The group's first configuration; once the group has membership entries or a snapshot, those win.
            b.group(GROUP, kv.stateMachine(GROUP), members.stream().mapToInt(Integer::intValue).toArray());
        }
        if (testingFaults) {
            TestingFaultsService.enable(b);
        }
        RaftServer server = b.build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.stop();
            stopped.countDown();
        }, "chaos-node-stop"));
        server.start();
        System.out.println(READY + " " + id + " service 127.0.0.1:" + server.servicePort() + " replication "
                + server.replicationPort());
        System.out.flush();
        stopped.await();
    }
}
