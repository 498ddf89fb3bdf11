package io.poyang.server.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Rows printed in aligned columns (two spaces apart), the first row a header; for the tools' tables. */
final class TextTable {

    private final List<String[]> rows = new ArrayList<>();

    TextTable(String... header) {
        rows.add(header);
    }

    TextTable row(String... cells) {
        rows.add(Arrays.copyOf(cells, rows.get(0).length, String[].class));
        return this;
    }

    int size() {
        return rows.size() - 1;
    }

    void print(PrintStream out) {
        int columns = rows.get(0).length;
        int[] width = new int[columns];
        for (String[] r : rows) {
            for (int i = 0; i < columns; i++) {
                width[i] = Math.max(width[i], r[i] == null ? 0 : r[i].length());
            }
        }
        for (String[] r : rows) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < columns; i++) {
                String c = r[i] == null ? "" : r[i];
                sb.append(c);
                if (i < columns - 1) {
                    for (int k = c.length(); k < width[i] + 2; k++) {
                        sb.append(' ');
                    }
                }
            }
            out.println(sb.toString().trim());
        }
    }
}
