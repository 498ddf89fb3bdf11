package io.poyang.server.metrics;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A strict reader of the Prometheus text exposition format (0.0.4), for tests: every line must be a
 * HELP, a TYPE or a sample; a family's HELP and TYPE come before its samples and once; a sample
 * belongs to the family declared last (histograms: {@code _bucket} with {@code le}, {@code _sum},
 * {@code _count}); names, label names, escapes and numbers follow the format; histogram buckets
 * are cumulative and end with {@code le="+Inf"} equal to {@code _count}. Fails with the line.
 */
public final class PrometheusTextParser {

    static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");
    private static final Pattern NUMBER = Pattern.compile(
            "[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+)?|NaN|[+-]Inf");
    private static final Set<String> TYPES = new HashSet<>(java.util.Arrays.asList("counter", "gauge", "histogram",
            "summary", "untyped"));

    /** A sample: its name, labels in order, value. */
    static final class Sample {
        final String name;
        final Map<String, String> labels;
        final double value;

        Sample(String name, Map<String, String> labels, double value) {
            this.name = name;
            this.labels = labels;
            this.value = value;
        }

        @Override
        public String toString() {
            return name + labels + " " + value;
        }
    }

    final List<Sample> samples = new ArrayList<>();
    final Map<String, String> types = new HashMap<>();
    private final Map<String, String> helps = new HashMap<>();

    /** The HELP text of family {@code name}, or null when it has none. */
    public String help(String name) {
        return helps.get(name);
    }

    public static PrometheusTextParser parse(String text) {
        PrometheusTextParser p = new PrometheusTextParser();
        p.read(text);
        return p;
    }

    private void read(String text) {
        if (!text.endsWith("\n")) {
            throw new AssertionError("the text must end with a newline");
        }
        Set<String> helped = new HashSet<>();
        Set<String> finished = new HashSet<>();
        String current = null;
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length - 1; i++) {
            String line = lines[i];
            String where = "line " + (i + 1) + ": '" + line + "': ";
            if (line.startsWith("# HELP ") || line.startsWith("# TYPE ")) {
                String[] parts = line.split(" ", 4);
                if (parts.length < 4) {
                    throw new AssertionError(where + "a HELP or TYPE line needs a name and a text");
                }
                String name = parts[2];
                check(NAME.matcher(name).matches(), where + "bad metric name");
                if (!name.equals(current)) {
                    check(!finished.contains(name), where + "family " + name + " appears twice (not contiguous)");
                    if (current != null) {
                        finished.add(current);
                    }
                    current = name;
                }
                if (parts[1].equals("HELP")) {
                    check(helped.add(name), where + "a second HELP");
                    checkHelpEscapes(parts[3], where);
                    helps.put(name, parts[3]);
                } else {
                    check(!types.containsKey(name), where + "a second TYPE");
                    check(TYPES.contains(parts[3]), where + "unknown type " + parts[3]);
                    types.put(name, parts[3]);
                }
                continue;
            }
            check(!line.startsWith("#"), where + "comments other than HELP and TYPE are not produced");
            check(!line.isEmpty(), where + "empty line");
            Sample s = sample(line, where);
            check(current != null && types.containsKey(current), where + "a sample before its family's TYPE");
            String type = types.get(current);
            if (type.equals("histogram")) {
                check(s.name.equals(current + "_bucket") || s.name.equals(current + "_sum")
                        || s.name.equals(current + "_count"), where + "not a sample of histogram " + current);
                if (s.name.endsWith("_bucket")) {
                    check(s.labels.containsKey("le"), where + "a bucket without le");
                }
            } else {
                check(s.name.equals(current), where + "not a sample of family " + current);
            }
            samples.add(s);
        }
        checkHistograms();
    }

    private static void checkHelpEscapes(String help, String where) {
        for (int i = 0; i < help.length(); i++) {
            if (help.charAt(i) == '\\') {
                check(i + 1 < help.length() && (help.charAt(i + 1) == '\\' || help.charAt(i + 1) == 'n'),
                        where + "bad escape in HELP");
                i++;
            }
        }
    }

    private static Sample sample(String line, String where) {
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && line.charAt(i) != ' ') {
            i++;
        }
        String name = line.substring(0, i);
        check(NAME.matcher(name).matches(), where + "bad sample name");
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i++;
            while (line.charAt(i) != '}') {
                int eq = line.indexOf('=', i);
                check(eq > i, where + "a label without '='");
                String ln = line.substring(i, eq);
                check(LABEL_NAME.matcher(ln).matches(), where + "bad label name '" + ln + "'");
                check(line.charAt(eq + 1) == '"', where + "a label value must be quoted");
                StringBuilder v = new StringBuilder();
                int j = eq + 2;
                while (true) {
                    check(j < line.length(), where + "an unterminated label value");
                    char c = line.charAt(j);
                    if (c == '\\') {
                        char n = line.charAt(j + 1);
                        check(n == '\\' || n == '"' || n == 'n', where + "bad escape in a label value");
                        v.append(n == 'n' ? '\n' : n);
                        j += 2;
                    } else if (c == '"') {
                        break;
                    } else {
                        v.append(c);
                        j++;
                    }
                }
                check(labels.put(ln, v.toString()) == null, where + "label " + ln + " twice");
                i = j + 1;
                if (line.charAt(i) == ',') {
                    i++;
                }
            }
            i++;
        }
        check(i < line.length() && line.charAt(i) == ' ', where + "a space must separate the value");
        String[] rest = line.substring(i + 1).split(" ");
        check(rest.length == 1 || rest.length == 2, where + "expected a value and an optional timestamp");
        check(NUMBER.matcher(rest[0]).matches(), where + "bad value '" + rest[0] + "'");
        double value = rest[0].equals("NaN") ? Double.NaN : rest[0].equals("+Inf") ? Double.POSITIVE_INFINITY
                : rest[0].equals("-Inf") ? Double.NEGATIVE_INFINITY : Double.parseDouble(rest[0]);
        if (rest.length == 2) {
            check(rest[1].matches("-?\\d+"), where + "bad timestamp");
        }
        return new Sample(name, labels, value);
    }

    /** Buckets cumulative, the last le="+Inf", equal to _count, per label set. */
    private void checkHistograms() {
        for (Map.Entry<String, String> t : types.entrySet()) {
            if (!t.getValue().equals("histogram")) {
                continue;
            }
            String h = t.getKey();
            Map<String, List<Sample>> buckets = new LinkedHashMap<>();
            Map<String, Double> counts = new HashMap<>();
            for (Sample s : samples) {
                Map<String, String> key = new LinkedHashMap<>(s.labels);
                key.remove("le");
                if (s.name.equals(h + "_bucket")) {
                    buckets.computeIfAbsent(key.toString(), k -> new ArrayList<>()).add(s);
                } else if (s.name.equals(h + "_count")) {
                    counts.put(key.toString(), s.value);
                }
            }
            for (Map.Entry<String, List<Sample>> e : buckets.entrySet()) {
                List<Sample> bs = e.getValue();
                double prevLe = Double.NEGATIVE_INFINITY;
                double prevCount = 0;
                for (Sample b : bs) {
                    String le = b.labels.get("le");
                    double bound = le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
                    check(bound > prevLe, h + e.getKey() + ": bucket bounds must grow");
                    check(b.value >= prevCount, h + e.getKey() + ": buckets must be cumulative");
                    prevLe = bound;
                    prevCount = b.value;
                }
                check(prevLe == Double.POSITIVE_INFINITY, h + e.getKey() + ": the last bucket must be le=\"+Inf\"");
                check(counts.containsKey(e.getKey()) && counts.get(e.getKey()) == prevCount,
                        h + e.getKey() + ": _count must equal the +Inf bucket");
            }
        }
    }

    /** The value of the one sample with this name and these labels (a subset); fails if not exactly one. */
    public double value(String name, String... labels) {
        Sample found = null;
        for (Sample s : samples) {
            if (!s.name.equals(name)) {
                continue;
            }
            boolean match = true;
            for (int i = 0; i + 1 < labels.length; i += 2) {
                if (!labels[i + 1].equals(s.labels.get(labels[i]))) {
                    match = false;
                }
            }
            if (match) {
                check(found == null, "more than one sample " + name + java.util.Arrays.toString(labels));
                found = s;
            }
        }
        check(found != null, "no sample " + name + java.util.Arrays.toString(labels));
        return found.value;
    }

    boolean has(String name) {
        for (Sample s : samples) {
            if (s.name.equals(name)) {
                return true;
            }
        }
        return false;
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new AssertionError(message);
        }
    }
}
