package io.poyang.raft.server;

import io.poyang.codec.PbCallback;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.NioServer;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.WritePacket;

import java.util.Arrays;
import java.util.Objects;

/**
 * FOR TESTING ONLY: lets a test harness cut a node's replication traffic from outside the process
 * (the chaos runner's partitions). Installed only when the node is started with the testing flag
 * that asks for it, never in a normal configuration: it gives anyone who can reach the service
 * port the power to partition the node.
 *
 * <p>It registers TESTING_FAULTS on the service port. A request lists node ids; from then on this
 * node refuses to send AppendEntries, votes, snapshot chunks and every other replication request to
 * them and drops their answers (through the server's {@link FaultInjector}), replacing the previous
 * list; an empty list heals. Traffic the other nodes send to this one is cut by telling them the
 * same (a partition is set on both sides). Without this service the server has no injector and
 * the replication path does not look at one (one null check per request).
 */
public final class TestingFaultsService implements ServiceExtension {

    /** TestingFaultsRequest → TestingFaultsRequest (the list in force), service port; testing flag only. */
    public static final int TESTING_FAULTS = 299;

    private static final PoyangLog log = PoyangLogs.get(TestingFaultsService.class);

    private final FaultInjector faults;

    private TestingFaultsService(FaultInjector faults) {
        this.faults = Objects.requireNonNull(faults, "faults");
    }

    /**
     * Gives the server being built a {@link FaultInjector} and the TESTING_FAULTS command that drives
     * it. Call only for a testing flag.
     */
    public static void enable(RaftServerConfig.Builder builder) {
        FaultInjector faults = new FaultInjector();
        builder.faultInjector(faults).serviceExtension(new TestingFaultsService(faults));
    }

    @Override
    public void install(RaftServer server, NioServer service) {
        int selfId = server.nodeId();
        log.warn("raft node {}: TESTING_FAULTS is enabled: anyone reaching the service port can cut this node's "
                + "replication traffic (a testing flag; never use it in production)", selfId);
        service.register(TESTING_FAULTS, new ReqProcessor<TestingFaultsRequest>() {
            @Override
            public PbCallback<TestingFaultsRequest> createDecoder() {
                return new TestingFaultsRequest.Decoder();
            }

            @Override
            public WritePacket process(ReqContext context, TestingFaultsRequest req) {
                int[] blocked = req.blockedNodeIds();
                synchronized (faults) {
                    faults.heal();
                    for (int other : blocked) {
                        if (other != selfId) {
                            faults.block(selfId, other).block(other, selfId);
                        }
                    }
                }
                log.info("raft node {}: testing faults: replication traffic with nodes {} is {}", selfId,
                        Arrays.toString(blocked), blocked.length == 0 ? "restored (healed)" : "blocked");
                return WritePacket.response(req);
            }
        });
    }
}
