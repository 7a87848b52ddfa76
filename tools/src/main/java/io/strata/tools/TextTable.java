package io.strata.tools;

import java.util.ArrayList;
import java.util.List;

/**
 * Left-aligned columns separated by one space, as Kafka's command-line tools print their
 * tables: each column is as wide as its widest cell, but at least its minimum width (Kafka's
 * widths, so the output lines up with kafka-consumer-groups.sh); the last column is not padded
 * and no line ends in spaces. Null cells print as "-", Kafka's missing value.
 */
final class TextTable {
    static final String MISSING = "-";

    private final List<String> headers = new ArrayList<>();
    private final List<Integer> minWidths = new ArrayList<>();
    private final List<List<String>> rows = new ArrayList<>();

    /** Adds a column; all columns must be added before the first row. */
    TextTable column(String header, int minWidth) {
        if (!rows.isEmpty()) {
            throw new IllegalStateException("columns must be added before rows: column=" + header + ", rows=" + rows.size());
        }
        headers.add(header);
        minWidths.add(minWidth);
        return this;
    }

    TextTable row(Object... cells) {
        if (cells.length != headers.size()) {
            throw new IllegalArgumentException("a row needs one cell per column: cells=" + cells.length + ", columns=" + headers.size());
        }
        List<String> row = new ArrayList<>(cells.length);
        for (Object cell : cells) {
            row.add(cell == null ? MISSING : cell.toString());
        }
        rows.add(row);
        return this;
    }

    boolean isEmpty() {
        return rows.isEmpty();
    }

    /** The header line followed by the rows. */
    List<String> lines() {
        int[] widths = new int[headers.size()];
        for (int column = 0; column < widths.length; column++) {
            widths[column] = Math.max(minWidths.get(column), headers.get(column).length());
            for (List<String> row : rows) {
                widths[column] = Math.max(widths[column], row.get(column).length());
            }
        }
        List<String> lines = new ArrayList<>(rows.size() + 1);
        lines.add(format(headers, widths));
        for (List<String> row : rows) {
            lines.add(format(row, widths));
        }
        return lines;
    }

    private static String format(List<String> cells, int[] widths) {
        StringBuilder line = new StringBuilder();
        for (int column = 0; column < cells.size(); column++) {
            if (column > 0) {
                line.append(' ');
            }
            String cell = cells.get(column);
            line.append(cell);
            if (column < cells.size() - 1) {
                line.append(" ".repeat(widths[column] - cell.length()));
            }
        }
        int end = line.length();
        while (end > 0 && line.charAt(end - 1) == ' ') {
            end--;
        }
        return line.substring(0, end);
    }
}
