package io.poyang.benchmark;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.*;

class BenchOptionsTest {

    @Test
    void defaults() throws Exception {
        BenchOptions o = BenchOptions.parse();
        assertEquals("put", o.op, "no options: the DtKV put benchmark (issue 10)");
        assertEquals(1, o.nodes);
        assertFalse(o.inProcess, "local nodes run as child processes unless --in-process");
        assertEquals(128, o.valueSize);
        assertEquals(1000, o.maxPending);
        assertEquals(10, o.durationSeconds);
        assertEquals(3, o.warmupSeconds);
        assertFalse(o.sync);
        assertFalse(o.strict);
        assertTrue(o.fsync);
        assertEquals("table", o.output);
    }

    @Test
    void everyOptionOfDesignSection10IsParsed() throws Exception {
        BenchOptions o = BenchOptions.parse("--op", "put", "--nodes", "3", "--servers", "a:1,b:2,c:3", "--value-size", "256",
                "--keys", "5000", "--max-pending", "4000", "--clients", "2", "--batch-size", "10", "--duration", "500ms",
                "--warmup=2m", "--sync", "--threads", "100", "--fsync", "false", "--groups", "4", "--output", "json", "--strict", "--in-process");
        assertEquals("put", o.op);
        assertEquals(3, o.nodes);
        assertEquals(Arrays.asList("a:1", "b:2", "c:3"), o.servers);
        assertEquals(256, o.valueSize);
        assertEquals(5000, o.keys);
        assertEquals(4000, o.maxPending);
        assertEquals(2, o.clients);
        assertEquals(10, o.batchSize);
        assertEquals(0.5, o.durationSeconds, 1e-9);
        assertEquals(120, o.warmupSeconds, 1e-9);
        assertTrue(o.sync);
        assertEquals(100, o.threads);
        assertFalse(o.fsync);
        assertEquals(4, o.groups);
        assertTrue(o.json());
        assertTrue(o.strict);
        assertTrue(o.inProcess);
    }

    @Test
    void badOptionsSayWhatIsWrong() {
        assertMessage("unknown option --bogus", "--bogus", "1");
        assertMessage("unknown option --frobnicate", "--frobnicate");
        assertMessage("--duration needs a value", "--duration");
        assertMessage("--nodes must be 1 or 3", "--nodes", "2");
        assertMessage("--op must be one of", "--op", "nope");
        assertMessage("--output must be table or json", "--output", "xml");
        assertMessage("--max-pending must be at least 1", "--max-pending", "0");
        assertMessage("--clients takes a whole number", "--clients", "many");
        assertMessage("--duration takes a time", "--duration", "soon");
        // Java number suffixes are not time units: "1d" is not one day, nor one second
        assertMessage("--duration takes a time", "--duration", "1d");
        assertMessage("--warmup takes a time", "--warmup", "2f");
        assertMessage("--duration takes a time", "--duration", "0x1p3");
        assertMessage("--duration must be positive", "--duration", "0");
        assertMessage("--fsync takes true or false", "--fsync", "maybe");
        assertMessage("--servers takes [id=]host:port", "--servers", "localhost");
        assertMessage("out of range", "--servers", "h:99999");
        assertMessage("a node id is a positive number, got 'x'", "--servers", "x=h:1");
        assertMessage("a node id is a positive number, got '0'", "--servers", "0=h:1");
        assertMessage("out of range", "--servers", "4=h:99999");
        assertMessage("unexpected argument 'rpc'", "rpc");
        assertMessage("--read-kind must be lease, read-index or follower", "--read-kind", "dirty");
    }

    @Test
    void theMultiGroupSettingsAreOffForOneGroupUnlessGiven() throws Exception {
        BenchOptions o = BenchOptions.parse();
        assertFalse(o.logJournal);
        assertFalse(o.batchAppends);
        assertEquals(0, o.leadersOn, "the leaders stay where the elections put them");
        o = BenchOptions.parse("--op", "raft", "--nodes", "3");
        assertFalse(o.logJournal);
        assertFalse(o.batchAppends);
        assertEquals(0, o.leadersOn);
        o = BenchOptions.parse("--op", "raft", "--nodes", "3", "--groups", "4", "--log-journal", "true",
                "--batch-appends=true", "--leaders", "3");
        assertTrue(o.logJournal);
        assertTrue(o.logJournalGiven);
        assertTrue(o.batchAppends);
        assertTrue(o.batchAppendsGiven);
        assertEquals(3, o.leadersOn);
        for (String op : new String[]{"put", "get", "mixed", "raft-read"}) {
            assertEquals(1, BenchOptions.parse("--op", op, "--leaders", "1").leadersOn, op);
        }
    }

    @Test
    void severalGroupsOnNodesTheBenchStartsGetTheJournalBatchingAndLeadersOnNodeOneUnlessGiven() throws Exception {
        for (String op : new String[]{"put", "raft"}) {
            BenchOptions o = BenchOptions.parse("--op", op, "--nodes", "3", "--groups", "4");
            assertTrue(o.logJournal, op);
            assertTrue(o.batchAppends, op);
            assertEquals(1, o.leadersOn, op);
        }
        BenchOptions o = BenchOptions.parse("--nodes", "3", "--groups", "4", "--leaders", "0", "--log-journal", "false");
        assertEquals(0, o.leadersOn, "--leaders 0: where the elections put them");
        assertFalse(o.logJournal);
        assertFalse(o.batchAppends, "batching follows the journal");
        o = BenchOptions.parse("--nodes", "3", "--groups", "4", "--batch-appends", "false", "--leaders", "2");
        assertTrue(o.logJournal);
        assertFalse(o.batchAppends);
        assertEquals(2, o.leadersOn);
        o = BenchOptions.parse("--groups", "4");
        assertTrue(o.logJournal, "one node with several groups shares its fsyncs too");
        assertEquals(0, o.leadersOn, "one node leads every group anyway");
        o = BenchOptions.parse("--servers", "a:1,b:2,c:3", "--groups", "4");
        assertFalse(o.logJournal, "an existing cluster is used as it is");
        assertEquals(0, o.leadersOn, "an existing cluster is used as it is");
        o = BenchOptions.parse("--nodes", "3", "--groups", "4", "--fsync", "false");
        assertFalse(o.logJournal, "without fsyncs there is nothing to share");
        assertFalse(o.batchAppends);
        o = BenchOptions.parse("--op", "raft", "--log-journal", "true");
        assertTrue(o.batchAppends, "one group with the journal: batching follows it, as on a node");
        o = BenchOptions.parse("--op", "log", "--groups", "4");
        assertFalse(o.logJournal, "--op log starts no raft nodes");
    }

    @Test
    void theOldSystemPropertiesTurnTheJournalAndBatchingOnUnlessTheOptionsSayOtherwise() throws Exception {
        System.setProperty(BenchOptions.LOG_JOURNAL_PROPERTY, "true");
        System.setProperty(BenchOptions.BATCH_APPENDS_PROPERTY, "true");
        try {
            BenchOptions o = BenchOptions.parse("--op", "raft");
            assertTrue(o.logJournal);
            assertTrue(o.batchAppends);
            o = BenchOptions.parse("--op", "raft", "--log-journal", "false", "--batch-appends", "false");
            assertFalse(o.logJournal, "the option wins");
            assertFalse(o.batchAppends, "the option wins");
            // a property is not an option: an existing cluster is used as it is, as before
            assertTrue(BenchOptions.parse("--servers", "a:1").logJournal);
        } finally {
            System.clearProperty(BenchOptions.LOG_JOURNAL_PROPERTY);
            System.clearProperty(BenchOptions.BATCH_APPENDS_PROPERTY);
        }
    }

    @Test
    void theMultiGroupSettingsAreRefusedWhereTheBenchStartsNoRaftNodes() {
        assertMessage("--log-journal takes true or false, got 'yes'", "--log-journal", "yes");
        assertMessage("--batch-appends takes true or false, got '1'", "--batch-appends", "1");
        assertMessage("--leaders must be at least 0, got -1", "--leaders", "-1");
        assertMessage("--leaders takes a whole number", "--leaders", "two");
        assertMessage("--leaders 2 names no node: the bench starts 1 node(s) (--nodes 1), ids 1 to 1", "--leaders", "2");
        assertMessage("--leaders 4 names no node", "--op", "raft", "--nodes", "3", "--leaders", "4");
        assertMessage("--leaders sets up the nodes the bench starts; with --servers", "--servers", "a:1,b:2,c:3",
                "--leaders", "1");
        assertMessage("--log-journal sets up the nodes the bench starts; with --servers", "--servers", "a:1",
                "--log-journal", "true");
        assertMessage("--batch-appends sets up the nodes the bench starts; with --servers", "--servers", "a:1",
                "--batch-appends", "false");
        for (String op : new String[]{"rpc", "fiber", "log"}) {
            assertMessage("--leaders sets up raft nodes, which --op " + op + " does not start", "--op", op, "--leaders", "1");
            assertMessage("--log-journal sets up raft nodes, which --op " + op + " does not start", "--op", op,
                    "--log-journal", "true");
        }
    }

    @Test
    void serversMayNameTheirNodeIds() throws Exception {
        BenchOptions o = BenchOptions.parse("--servers", "4=a:1, 5=b:2,6=c:3");
        assertEquals(Arrays.asList("4=a:1", "5=b:2", "6=c:3"), o.servers);
        assertEquals(3, o.clusterNodes());
    }

    @Test
    void aNumberOutOfRangeIsToldTheBoundItBroke() {
        // not "between 0 and ..." for a count that must be at least 1
        assertMessage("--keys must be at least 1, got -5", "--keys", "-5");
        assertMessage("--groups must be at least 1, got -3", "--groups", "-3");
        assertMessage("--nodes must be at least 1, got -1", "--nodes", "-1");
        assertMessage("--value-size must be at least 0, got -1", "--value-size", "-1");
        assertMessage("--max-pending must be at most 2147483647, got 3000000000", "--max-pending", "3000000000");
    }

    /**
     * Sizes that only exhaust the machine have ceilings: a start-up burst of 2·10⁹ operations ran
     * out of memory, a million platform threads could not start, 100,000 groups per node did not fit.
     */
    @Test
    void countsThatWouldExhaustTheMachineAreRejected() throws Exception {
        assertMessage("--clients 1 with --max-pending 2000000000 keep 2000000000 operations in flight; at most 1000000 are allowed",
                "--max-pending", "2000000000");
        assertMessage("--clients 10 with --max-pending 200000 keep 2000000 operations in flight", "--clients", "10",
                "--max-pending", "200000");
        assertMessage("--threads must be at most 10000, got 1000000", "--threads", "1000000");
        assertMessage("--groups must be at most 256, got 100000", "--groups", "100000");
        assertMessage("--clients must be at most 1000, got 5000", "--clients", "5000");
        BenchOptions atTheCeilings = BenchOptions.parse("--clients", "1000", "--max-pending", "1000", "--threads", "10000",
                "--groups", "256");
        assertEquals(1000, atTheCeilings.clients);
        assertEquals(256, atTheCeilings.groups);
    }

    /** With --servers the cluster is the one listed: its size is what the report says, and a different --nodes is a mistake. */
    @Test
    void theClusterOfServersIsTheOneListed() throws Exception {
        assertEquals(3, BenchOptions.parse("--servers", "a:1,b:2,c:3").clusterNodes());
        assertEquals(3, BenchOptions.parse("--servers", "a:1,b:2,c:3", "--nodes", "3").clusterNodes());
        assertEquals(3, BenchOptions.parse("--nodes", "3").clusterNodes());
        assertEquals(1, BenchOptions.parse().clusterNodes());
        assertMessage("--nodes 3 but --servers lists 2 address(es): with --servers the cluster is the one listed; leave --nodes out",
                "--nodes", "3", "--servers", "a:1,b:2");
    }

    @Test
    void theReadKindOfRaftRead() throws Exception {
        assertEquals("lease", BenchOptions.parse("--op", "raft-read").readKind);
        BenchOptions o = BenchOptions.parse("--op", "raft-read", "--read-kind", "Follower");
        assertEquals("raft-read", o.op);
        assertEquals("follower", o.readKind);
        assertEquals("read-index", BenchOptions.parse("--read-kind=read-index").readKind);
    }

    private static void assertMessage(String expected, String... args) {
        UsageException e = assertThrows(UsageException.class, () -> BenchOptions.parse(args));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void serversAreRefusedForTheOpsThatStartTheirOwnNodes() throws Exception {
        for (String op : new String[]{"raft", "raft-read", "log", "fiber"}) {
            assertMessage("--servers is for the DtKV ops (put, get, mixed); --op " + op + " starts its own nodes in this"
                    + " process", "--op", op, "--servers", "a:1,b:2,c:3");
        }
        assertEquals(3, BenchOptions.parse("--op", "get", "--servers", "a:1,b:2,c:3").clusterNodes());
    }

    @Test
    void helpListsEveryOption() throws Exception {
        assertTrue(BenchOptions.parse("--help").help);
        for (String opt : new String[]{"--op", "--nodes", "--servers", "--value-size", "--keys", "--max-pending",
                "--clients", "--batch-size", "--duration", "--warmup", "--sync", "--threads", "--fsync", "--groups",
                "--output", "--strict", "--read"}) {
            assertTrue(BenchOptions.usage().contains(opt), opt);
        }
    }
}
