package io.poyang.benchmark;

import io.poyang.common.FlowControlException;
import io.poyang.common.StoppedException;
import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvException;
import io.poyang.net.NetConnectionException;
import io.poyang.net.NetTimeoutException;
import io.poyang.net.RemoteException;
import io.poyang.net.ResponseCode;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.client.RaftOutcomeUnknownException;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.*;

class FailureCauseTest {

    @Test
    void poyangErrorsAreNamedByTypeAndTheCodeThatTellsTheirCasesApart() {
        assertEquals("KvException NOT_FOUND", FailureCause.of(new KvException(KvCode.NOT_FOUND, "bench.k1", "gone")));
        assertEquals("KvException KV_CODE_99", FailureCause.of(new KvException(99, null, "from a newer server")));
        assertEquals("RemoteException NOT_LEADER", FailureCause.of(new RemoteException(ResponseCode.NOT_LEADER, 2, "")));
        assertEquals("NotLeaderException NOT_LEADER", FailureCause.of(new NotLeaderException(1, 2, "node 1 is not the leader")));
        assertEquals("RaftOutcomeUnknownException TIMEOUT",
                FailureCause.of(new RaftOutcomeUnknownException(1, "no answer", null)));
        assertEquals("NetTimeoutException TIMEOUT", FailureCause.of(new NetTimeoutException("no answer in 10000 ms")));
        assertEquals("FlowControlException FLOW_CONTROL", FailureCause.of(new FlowControlException("100 pending")));
        assertEquals("StoppedException STOPPED", FailureCause.of(new StoppedException("stopped")));
    }

    @Test
    void internalErrorsAndOtherExceptionsAreNamedByTheirTypeAlone() {
        assertEquals("NetConnectionException", FailureCause.of(new NetConnectionException("connection closed")));
        assertEquals("IllegalStateException", FailureCause.of(new IllegalStateException("odd")));
    }

    @Test
    void theMessageIsLeftOutSoFailuresOfOneKindCountAsOneCause() {
        assertEquals(FailureCause.of(new KvException(KvCode.NOT_FOUND, "bench.k1", "a")),
                FailureCause.of(new KvException(KvCode.NOT_FOUND, "bench.k2", "b")));
    }

    @Test
    void theFailureInsideFutureAndReflectionWrappersIsNamed() {
        NotLeaderException inner = new NotLeaderException(1, 0, "no leader");
        assertEquals("NotLeaderException NOT_LEADER", FailureCause.of(new ExecutionException(new CompletionException(inner))));
        assertEquals("CompletionException", FailureCause.of(new CompletionException("no cause", null)));
    }

    @Test
    void anAnonymousExceptionClassStillGetsAName() {
        RuntimeException anonymous = new RuntimeException("x") {
        };
        assertEquals(anonymous.getClass().getName(), FailureCause.of(anonymous));
        assertFalse(FailureCause.of(anonymous).isEmpty());
        assertEquals("no exception", FailureCause.of(null));
    }
}
