package io.poyang.benchmark;

import java.util.Locale;

/** A time given on a command line ("60", "60s", "500ms", "10m", "1h"), shared by bench and chaos options. */
public final class TimeArgument {

    private TimeArgument() {
    }

    /**
     * The time {@code v} of option {@code --name} in seconds: a plain number is seconds; suffixes ms, s, m, h.
     *
     * @throws UsageException naming the option and the accepted forms when {@code v} is not a non-negative time
     */
    public static double seconds(String name, String v) throws UsageException {
        String s = v.trim().toLowerCase(Locale.ROOT);
        double scale = 1;
        if (s.endsWith("ms")) {
            scale = 0.001;
            s = s.substring(0, s.length() - 2);
        } else if (s.endsWith("s")) {
            s = s.substring(0, s.length() - 1);
        } else if (s.endsWith("m")) {
            scale = 60;
            s = s.substring(0, s.length() - 1);
        } else if (s.endsWith("h")) {
            scale = 3600;
            s = s.substring(0, s.length() - 1);
        }
        try {
            // digits only: Double.parseDouble would also take "1d", "2f" or "0x1p3" (1 day read as 1 s)
            if (!s.matches("[0-9]+(\\.[0-9]+)?|\\.[0-9]+")) {
                throw new NumberFormatException();
            }
            double d = Double.parseDouble(s) * scale;
            if (d < 0 || Double.isNaN(d) || Double.isInfinite(d)) {
                throw new NumberFormatException();
            }
            return d;
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " takes a time such as 60, 60s, 500ms, 10m or 1h, got '" + v + "'");
        }
    }
}
