package io.poyang.benchmark.chaos;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The end-of-run check: after the faults stop, the runner reads every key from every node. Every node must hold
 * the same value for every key, and that value must be one the history can end in: it is checked as a final read
 * of the key, invoked after every operation of the history completed, which the linearizability checker must
 * accept. So an acknowledged write that is lost, or a value nobody wrote, fails here even if no client read it
 * during the run. Unknown-outcome writes may have landed or not; the final read decides nothing about them by
 * itself, only in agreement with the rest of the history.
 */
public final class FinalStateCheck {

    /** The client id of the final reads in reports. */
    public static final int FINAL_READ_CLIENT = -1;

    private final LinearizabilityChecker checker;

    public FinalStateCheck(LinearizabilityChecker checker) {
        this.checker = Objects.requireNonNull(checker, "checker");
    }

    /**
     * @param history           every operation of the run
     * @param finalValuesByNode node name to the keys it holds at the end and their values; a key a node does not
     *                          list is absent on that node
     */
    public Result check(Collection<Operation> history, Map<String, Map<String, String>> finalValuesByNode) {
        if (finalValuesByNode.isEmpty()) {
            throw new IllegalArgumentException("the final state of at least one node is needed");
        }
        Map<String, Map<String, String>> nodes = new TreeMap<>(finalValuesByNode);
        TreeSet<String> keys = new TreeSet<>();
        long lastNanos = Long.MIN_VALUE;
        long lastId = 0;
        for (Operation op : history) {
            keys.add(op.key());
            lastNanos = Math.max(lastNanos, op.completeNanos());
            lastId = Math.max(lastId, op.id());
        }
        for (Map<String, String> values : nodes.values()) {
            keys.addAll(values.keySet());
        }
        long readAt = lastNanos == Long.MIN_VALUE ? 0 : lastNanos + 1;

        List<Operation> withFinalReads = new ArrayList<>(history);
        List<String> disagreements = new ArrayList<>();
        Map<String, List<Operation>> byKey = null;
        long nextId = lastId + 1;
        for (String key : keys) {
            // The value each node holds, and the nodes holding each value, in node order.
            Map<String, List<String>> nodesByValue = new LinkedHashMap<>();
            for (Map.Entry<String, Map<String, String>> node : nodes.entrySet()) {
                String value = node.getValue().get(key);
                nodesByValue.computeIfAbsent(value, v -> new ArrayList<>()).add(node.getKey());
            }
            String majority = null;
            int most = -1;
            for (Map.Entry<String, List<String>> e : nodesByValue.entrySet()) {
                if (e.getValue().size() > most) {
                    most = e.getValue().size();
                    majority = e.getKey();
                }
            }
            withFinalReads.add(finalRead(nextId++, key, majority, readAt));
            if (nodesByValue.size() > 1) {
                if (byKey == null) {
                    byKey = groupByKey(history);
                }
                disagreements.add(describeDisagreement(key, nodesByValue, majority,
                        byKey.getOrDefault(key, Collections.emptyList()), readAt));
            }
        }
        CheckReport report = checker.check(withFinalReads);
        return new Result(disagreements, report);
    }

    private String describeDisagreement(String key, Map<String, List<String>> nodesByValue, String majority,
                                        List<Operation> ops, long readAt) {
        StringBuilder b = new StringBuilder("key ").append(HistoryLine.quote(key)).append(": the nodes disagree:");
        for (Map.Entry<String, List<String>> e : nodesByValue.entrySet()) {
            b.append(' ').append(String.join(",", e.getValue())).append('=').append(HistoryLine.quote(e.getKey()));
        }
        for (Map.Entry<String, List<String>> e : nodesByValue.entrySet()) {
            if (Objects.equals(e.getKey(), majority)) {
                continue;
            }
            List<Operation> withRead = new ArrayList<>(ops);
            withRead.add(finalRead(Long.MAX_VALUE, key, e.getKey(), readAt));
            Verdict v = checker.checkKey(key, withRead).verdict();
            b.append("; ").append(HistoryLine.quote(e.getKey())).append(" (").append(String.join(",", e.getValue()))
                    .append(v == Verdict.LINEARIZABLE ? ") is a state the history can end in too"
                            : v == Verdict.NOT_LINEARIZABLE ? ") is not a state the history can end in"
                            : ") could not be checked within the budget");
        }
        return b.toString();
    }

    private static Map<String, List<Operation>> groupByKey(Collection<Operation> history) {
        Map<String, List<Operation>> byKey = new TreeMap<>();
        for (Operation op : history) {
            byKey.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op);
        }
        return byKey;
    }

    private static Operation finalRead(long id, String key, String value, long readAtNanos) {
        return Invocation.get(id, FINAL_READ_CLIENT, key, readAtNanos).getOk(readAtNanos + 1, value);
    }

    /** The outcome: node disagreements, and the linearizability report of the history with the final reads. */
    public static final class Result {

        private final List<String> disagreements;
        private final CheckReport report;

        Result(List<String> disagreements, CheckReport report) {
            this.disagreements = Collections.unmodifiableList(disagreements);
            this.report = report;
        }

        /** One line per key on which the nodes hold different values. */
        public List<String> disagreements() {
            return disagreements;
        }

        /**
         * The check of the history with a final read of each key (the value most nodes hold) appended; it covers
         * the history itself too (a final read only adds a constraint).
         */
        public CheckReport report() {
            return report;
        }

        /** NOT_LINEARIZABLE when the nodes disagree or a final value cannot be explained, else the report's verdict. */
        public Verdict verdict() {
            return disagreements.isEmpty() ? report.verdict() : Verdict.NOT_LINEARIZABLE;
        }

        public boolean passed() {
            return verdict() == Verdict.LINEARIZABLE;
        }

        /** The disagreements, then the report (final reads appear as client -1). */
        public String format(boolean everyKey) {
            StringBuilder b = new StringBuilder();
            for (String d : disagreements) {
                b.append(d).append('\n');
            }
            b.append(report.format(everyKey));
            if (!disagreements.isEmpty()) {
                b.append("NOT CONSISTENT: the nodes disagree on ").append(disagreements.size())
                        .append(disagreements.size() == 1 ? " key" : " keys").append('\n');
            }
            return b.toString();
        }
    }
}
