package io.poyang.benchmark;

import io.poyang.common.FlowControlException;
import io.poyang.common.StoppedException;
import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvException;
import io.poyang.net.NetConnectionException;
import io.poyang.net.RemoteException;
import io.poyang.net.ResponseCode;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.client.RaftOutcomeUnknownException;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.*;

/** A whole run (BenchCommand.runScenario) says why its operations failed, in the table and in the JSON. */
class RunFailureCausesTest {

    private final PrintStream out = new PrintStream(new ByteArrayOutputStream(), true);

    /** 28 failures of 7 causes (7, 6, 5 ... 1 of each), then successes. */
    private static List<Exception> failures() {
        List<Exception> l = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            l.add(new NotLeaderException(1, 2, "node 1 is not the leader"));
        }
        for (int i = 0; i < 6; i++) {
            l.add(new KvException(KvCode.NOT_FOUND, "bench.k" + i, "a preloaded key is missing"));
        }
        for (int i = 0; i < 5; i++) {
            l.add(new RemoteException(ResponseCode.NOT_LEADER, 2, ""));
        }
        for (int i = 0; i < 4; i++) {
            l.add(new RaftOutcomeUnknownException(1, "no answer in 10000 ms", null));
        }
        for (int i = 0; i < 3; i++) {
            l.add(new NetConnectionException("connection closed"));
        }
        for (int i = 0; i < 2; i++) {
            l.add(new IllegalStateException("odd"));
        }
        l.add(new ExecutionException(new StoppedException("the client is stopped")));
        return l;
    }

    @Test
    void blockingCallsThatFailAreCountedByCauseAndTheTopFiveShownInTheTableAndTheJson() throws Exception {
        List<Exception> failures = failures();
        AtomicInteger calls = new AtomicInteger();
        Scenario failingFirst = new Scenario() {
            @Override
            public void setUp(BenchOptions options) {
            }

            @Override
            public int clients() {
                return 1;
            }

            @Override
            public void issue(int client, OpCallback callback) {
                throw new UnsupportedOperationException("blocking only");
            }

            @Override
            public void call(int thread) throws Exception {
                int n = calls.getAndIncrement();
                if (n < failures.size()) {
                    throw failures.get(n);
                }
            }

            @Override
            public void close() {
            }
        };
        // no warm-up: the window opens before the first call, so every failure falls inside it
        BenchOptions o = BenchOptions.parse("--sync", "--threads", "1", "--duration", "0.3", "--warmup", "0");
        Report r = BenchCommand.runScenario(failingFirst, o, out);
        assertEquals(24, r.failed);
        assertEquals(4, r.timeout, "RaftOutcomeUnknownException is a timeout");
        String table = r.toTable();
        assertTrue(table.contains("  causes       NotLeaderException NOT_LEADER 7, KvException NOT_FOUND 6,"
                + " RemoteException NOT_LEADER 5, RaftOutcomeUnknownException TIMEOUT 4, NetConnectionException 3, other 3"), table);
        String json = r.toJson();
        assertTrue(json.contains("\"failure_causes\":{\"NotLeaderException NOT_LEADER\":7,\"KvException NOT_FOUND\":6,"
                + "\"RemoteException NOT_LEADER\":5,\"RaftOutcomeUnknownException TIMEOUT\":4,\"NetConnectionException\":3,"
                + "\"other\":3}"), json);
        assertTrue(json.contains("\"failed\":24,\"timeout\":4,\"drain_failed\":0,\"drain_timeout\":0,\"drained\":true,"), json);
    }

    @Test
    void asynchronousOperationsThatCannotStartAreCountedUnderTheirCause() throws Exception {
        Scenario refusing = new AsyncOneClientScenario() {
            @Override
            public void issue(int client, OpCallback callback) {
                throw new FlowControlException("100 requests pending");
            }
        };
        BenchOptions o = BenchOptions.parse("--max-pending", "2", "--duration", "0.3", "--warmup", "0");
        Report r = BenchCommand.runScenario(refusing, o, out);
        assertTrue(r.failed > 0, "the driver retries each slot every 10 ms: " + r.failed);
        String table = r.toTable();
        assertTrue(table.contains(String.format(java.util.Locale.ROOT, "  causes       FlowControlException FLOW_CONTROL %,d%n",
                r.failed)), table);
        String json = r.toJson();
        assertTrue(json.contains("\"failure_causes\":{\"FlowControlException FLOW_CONTROL\":" + r.failed + "}"), json);
    }
}
