package io.poyang.server.metrics;

/**
 * Writes the Prometheus text exposition format (version 0.0.4): for each metric family a
 * {@code # HELP} and a {@code # TYPE} line, then its samples, {@code name{label="value",...} number}.
 * Label values are escaped (backslash, double quote, newline); numbers are written so Prometheus
 * parses them ({@code NaN}, {@code +Inf}, integers without a decimal point).
 */
public final class PrometheusText {

    /** The content type of the format, for the HTTP response. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final StringBuilder out = new StringBuilder(8192);
    private String family;

    /** Starts a metric family: {@code type} is counter, gauge, histogram, summary or untyped. */
    public PrometheusText family(String name, String type, String help) {
        checkName(name);
        family = name;
        out.append("# HELP ").append(name).append(' ');
        for (int i = 0; i < help.length(); i++) {
            char c = help.charAt(i);
            if (c == '\\') {
                out.append("\\\\");
            } else if (c == '\n') {
                out.append("\\n");
            } else {
                out.append(c);
            }
        }
        out.append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        return this;
    }

    /** A sample of the current family; {@code labels} alternate name, value. */
    public PrometheusText sample(double value, String... labels) {
        return sampleNamed(family, value, labels);
    }

    /** A sample with its own name (a histogram's {@code _bucket}, {@code _sum}, {@code _count}). */
    public PrometheusText sampleNamed(String name, double value, String... labels) {
        out.append(name);
        if (labels.length > 0) {
            out.append('{');
            for (int i = 0; i + 1 < labels.length; i += 2) {
                if (i > 0) {
                    out.append(',');
                }
                out.append(labels[i]).append("=\"");
                escapeLabel(labels[i + 1]);
                out.append('"');
            }
            out.append('}');
        }
        out.append(' ');
        appendNumber(value);
        out.append('\n');
        return this;
    }

    private void escapeLabel(String v) {
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c == '\\') {
                out.append("\\\\");
            } else if (c == '"') {
                out.append("\\\"");
            } else if (c == '\n') {
                out.append("\\n");
            } else {
                out.append(c);
            }
        }
    }

    private void appendNumber(double v) {
        if (Double.isNaN(v)) {
            out.append("NaN");
        } else if (Double.isInfinite(v)) {
            out.append(v > 0 ? "+Inf" : "-Inf");
        } else if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            out.append((long) v);
        } else {
            out.append(v);
        }
    }

    private static void checkName(String name) {
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'
                    || (i > 0 && c >= '0' && c <= '9');
            if (!ok) {
                throw new IllegalArgumentException("not a Prometheus metric name: " + name);
            }
        }
    }

    @Override
    public String toString() {
        return out.toString();
    }
}
