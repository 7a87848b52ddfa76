import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The runs.tsv format of group-bench.sh and eos-bench.sh and the helpers their reports share:
 * medians over the successful runs of a row and broker, ratios and number formatting, and the
 * broker CPU time the harnesses read from /proc.
 */
final class BenchRuns {
    /** USER_HZ, the unit of /proc/PID/stat times on Linux. */
    static final long CLOCK_TICKS_PER_SECOND = 100;

    private BenchRuns() {
    }

    /** utime + stime of a process in clock ticks, or -1 if it cannot be read. */
    static long cpuTicks(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            // The command name (field 2) may contain spaces; the fields after its closing parenthesis are fixed.
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    static String fmt(double value) {
        return String.format(Locale.ROOT, "%.3f", value);
    }

    /** A line of runs.tsv: row, broker, run, status, the RESULT pairs, note. */
    record Run(String row, String broker, int run, String status, Map<String, String> values, String note) {
        Double number(String key) {
            String value = values.get(key);
            if (value == null || value.isEmpty()) {
                return null;
            }
            try {
                double d = Double.parseDouble(value);
                return Double.isNaN(d) ? null : d;
            } catch (NumberFormatException e) {
                return null;
            }
        }
    }

    static List<Run> readRuns(Path tsv) throws IOException {
        List<Run> runs = new ArrayList<>();
        List<String> lines = Files.readAllLines(tsv);
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split("\t", -1);
            Map<String, String> values = new LinkedHashMap<>();
            for (String pair : f[4].split(" ")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    values.put(pair.substring(0, eq), pair.substring(eq + 1));
                }
            }
            runs.add(new Run(f[0], f[1], Integer.parseInt(f[2]), f[3], values, f.length > 5 ? f[5] : ""));
        }
        return runs;
    }

    static Double median(List<Run> runs, String key) {
        List<Double> values = new ArrayList<>();
        for (Run run : runs) {
            Double value = run.number(key);
            if (run.status().equals("ok") && value != null) {
                values.add(value);
            }
        }
        if (values.isEmpty()) {
            return null;
        }
        values.sort(Double::compare);
        int n = values.size();
        return n % 2 == 1 ? values.get(n / 2) : (values.get(n / 2 - 1) + values.get(n / 2)) / 2;
    }

    static String show(Double value, String format) {
        return value == null ? "—" : String.format(Locale.ROOT, format, value);
    }

    static String ratio(Double numerator, Double denominator) {
        return numerator == null || denominator == null || denominator == 0 ? "—" : String.format(Locale.ROOT, "%.2f×", numerator / denominator);
    }

    static List<Run> select(List<Run> runs, String row, String broker) {
        return runs.stream().filter(r -> r.row().equals(row) && r.broker().equals(broker)).toList();
    }

    static String okCount(List<Run> runs) {
        return runs.stream().filter(r -> r.status().equals("ok")).count() + "/" + runs.size();
    }
}
