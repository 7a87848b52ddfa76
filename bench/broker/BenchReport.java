import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * Turns the raw measurements of bench/broker-bench.sh into Markdown tables: medians per row and
 * broker, and Strata/Kafka ratios.
 *
 * <pre>
 *   BenchReport RUNS_TSV STARTUP_TSV
 * </pre>
 *
 * RUNS_TSV columns (tab-separated, header line first): row tool size acks comp parts records
 * broker run status wall_s rec_s mib_s lat_avg lat_p50 lat_p99 lat_p999 broker_cpu_s client_cpu_s
 * other_cpu_s foreign_cpu_s note. STARTUP_TSV: broker trial format_s ready_s idle_rss_mb. Empty numeric fields
 * mean "not measured".
 */
public final class BenchReport {
    record Run(String row, String tool, int size, String acks, String comp, int parts, long records,
               String broker, int run, String status, double wall, double recS, double mibS,
               double latAvg, double latP50, double latP99, double latP999, double brokerCpu,
               double clientCpu, double otherCpu, double foreignCpu, String note) {
        double gb() {
            return records * (double) size / 1e9;
        }

        boolean latency() {
            return tool.equals("EndToEndLatency") || tool.equals("BenchE2E");
        }
    }

    public static void main(String[] args) throws IOException {
        List<Run> runs = new ArrayList<>();
        List<String> lines = Files.readAllLines(Path.of(args[0]));
        for (String line : lines.subList(1, lines.size())) {
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.split("\t", -1);
            runs.add(new Run(f[0], f[1], Integer.parseInt(f[2]), f[3], f[4], Integer.parseInt(f[5]),
                Long.parseLong(f[6]), f[7], Integer.parseInt(f[8]), f[9], num(f[10]), num(f[11]),
                num(f[12]), num(f[13]), num(f[14]), num(f[15]), num(f[16]), num(f[17]), num(f[18]),
                num(f[19]), num(f[20]), f.length > 21 ? f[21] : ""));
        }
        Map<String, List<Run>> byRow = new LinkedHashMap<>();
        for (Run r : runs) {
            byRow.computeIfAbsent(r.row(), k -> new ArrayList<>()).add(r);
        }

        StringBuilder out = new StringBuilder();
        if (args.length > 1 && Files.exists(Path.of(args[1]))) {
            startup(Files.readAllLines(Path.of(args[1])), out);
        }

        if (runs.stream().anyMatch(r -> !r.latency())) {
            out.append("\n### Throughput (median of the runs; ratio = Strata / Kafka)\n\n");
            out.append("| Row | Records | Kafka rec/s | Strata rec/s | ratio | Kafka MiB/s | Strata MiB/s "
                + "| Kafka p99 ms | Strata p99 ms | Kafka broker CPU-s/GB | Strata broker CPU-s/GB | CPU/GB ratio "
                + "| client CPU-s K / S | runs K / S |\n");
            out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        }
        for (var e : byRow.entrySet()) {
            List<Run> k = ok(e.getValue(), "kafka");
            List<Run> s = ok(e.getValue(), "strata");
            Run any = e.getValue().get(0);
            if (any.latency()) {
                continue;
            }
            double kRec = median(k, Run::recS), sRec = median(s, Run::recS);
            double kCpuGb = median(k, r -> r.brokerCpu() / r.gb()), sCpuGb = median(s, r -> r.brokerCpu() / r.gb());
            out.append("| ").append(e.getKey())
                .append(" | ").append(String.format(Locale.ROOT, "%,d", any.records()))
                .append(" | ").append(fmt(kRec, 0)).append(" | ").append(fmt(sRec, 0))
                .append(" | ").append(ratio(sRec, kRec))
                .append(" | ").append(fmt(median(k, Run::mibS), 1)).append(" | ").append(fmt(median(s, Run::mibS), 1))
                .append(" | ").append(fmt(median(k, Run::latP99), 0)).append(" | ").append(fmt(median(s, Run::latP99), 0))
                .append(" | ").append(fmt(kCpuGb, 1)).append(" | ").append(fmt(sCpuGb, 1))
                .append(" | ").append(ratio(sCpuGb, kCpuGb))
                .append(" | ").append(fmt(median(k, Run::clientCpu), 1)).append(" / ").append(fmt(median(s, Run::clientCpu), 1))
                .append(" | ").append(count(e.getValue(), "kafka")).append(" / ").append(count(e.getValue(), "strata"))
                .append(" |\n");
        }

        boolean anyE2e = runs.stream().anyMatch(Run::latency);
        if (anyE2e) {
            out.append("\n### End-to-end latency (ms; median of the runs; EndToEndLatency truncates each sample to whole ms, BenchE2E keeps µs)\n\n");
            out.append("| Row | Round trips | Kafka avg | Strata avg | Kafka p50 / p99 / p99.9 | Strata p50 / p99 / p99.9 "
                + "| p99 ratio | Kafka broker CPU-s | Strata broker CPU-s | runs K / S |\n");
            out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
            for (var e : byRow.entrySet()) {
                Run any = e.getValue().get(0);
                if (!any.latency()) {
                    continue;
                }
                int decimals = any.tool().equals("BenchE2E") ? 3 : 0;
                List<Run> k = ok(e.getValue(), "kafka");
                List<Run> s = ok(e.getValue(), "strata");
                out.append("| ").append(e.getKey())
                    .append(" | ").append(String.format(Locale.ROOT, "%,d", any.records()))
                    .append(" | ").append(fmt(median(k, Run::latAvg), 3)).append(" | ").append(fmt(median(s, Run::latAvg), 3))
                    .append(" | ").append(pcts(k, decimals)).append(" | ").append(pcts(s, decimals))
                    .append(" | ").append(ratio(median(s, Run::latP99), median(k, Run::latP99)))
                    .append(" | ").append(fmt(median(k, Run::brokerCpu), 2)).append(" | ").append(fmt(median(s, Run::brokerCpu), 2))
                    .append(" | ").append(count(e.getValue(), "kafka")).append(" / ").append(count(e.getValue(), "strata"))
                    .append(" |\n");
            }
        }

        double kTot = runs.stream().filter(r -> r.broker().equals("kafka") && r.status().equals("ok") && !r.latency()).mapToDouble(Run::brokerCpu).sum();
        double kGb = runs.stream().filter(r -> r.broker().equals("kafka") && r.status().equals("ok") && !r.latency()).mapToDouble(Run::gb).sum();
        double sTot = runs.stream().filter(r -> r.broker().equals("strata") && r.status().equals("ok") && !r.latency()).mapToDouble(Run::brokerCpu).sum();
        double sGb = runs.stream().filter(r -> r.broker().equals("strata") && r.status().equals("ok") && !r.latency()).mapToDouble(Run::gb).sum();
        if (kGb > 0 && sGb > 0) {
            out.append(String.format(Locale.ROOT,
                "%nBroker CPU over all throughput runs: Kafka %.1f CPU-s for %.1f GB (%.2f CPU-s/GB), "
                    + "Strata %.1f CPU-s for %.1f GB (%.2f CPU-s/GB); ratio %.2f.%n",
                kTot, kGb, kTot / kGb, sTot, sGb, sTot / sGb, (sTot / sGb) / (kTot / kGb)));
        }
        double kIdle = runs.stream().filter(r -> r.broker().equals("strata")).mapToDouble(Run::otherCpu).filter(d -> !Double.isNaN(d)).max().orElse(Double.NaN);
        double sIdle = runs.stream().filter(r -> r.broker().equals("kafka")).mapToDouble(Run::otherCpu).filter(d -> !Double.isNaN(d)).max().orElse(Double.NaN);
        out.append(String.format(Locale.ROOT,
            "Largest CPU used by the idle broker during a run of the other: Kafka %.2f CPU-s, Strata %.2f CPU-s.%n", kIdle, sIdle));

        double foreign = runs.stream().mapToDouble(Run::foreignCpu).filter(d -> !Double.isNaN(d)).max().orElse(Double.NaN);
        out.append(String.format(Locale.ROOT,
            "Largest CPU used by anything else on the machine during a run: %.2f CPU-s.%n", foreign));

        Set<String> notes = new LinkedHashSet<>();
        for (Run r : runs) {
            if (!r.status().equals("ok") || !r.note().isEmpty()) {
                notes.add("- " + r.broker() + ", " + r.row() + ": " + r.status() + (r.note().isEmpty() ? "" : " — `" + r.note() + "`"));
            }
        }
        if (!notes.isEmpty()) {
            out.append("\n### Failures and notes (deduplicated over runs)\n\n");
            notes.forEach(n -> out.append(n).append('\n'));
        }
        System.out.print(out);
    }

    private static void startup(List<String> lines, StringBuilder out) {
        Map<String, List<double[]>> by = new LinkedHashMap<>();
        for (String line : lines.subList(1, lines.size())) {
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.split("\t", -1);
            by.computeIfAbsent(f[0], k -> new ArrayList<>()).add(new double[] {num(f[2]), num(f[3]), num(f[4])});
        }
        if (by.isEmpty()) {
            return;
        }
        out.append("### Start-up (median of the trials; a fresh, empty data directory each time)\n\n");
        out.append("| Broker | Format s | Launch to first Metadata response s | Total s | Idle RSS MB (5 s after ready) | trials |\n");
        out.append("|---|--:|--:|--:|--:|--:|\n");
        for (var e : by.entrySet()) {
            List<double[]> v = e.getValue();
            double fmt = medianOf(v.stream().mapToDouble(a -> a[0]).toArray());
            double ready = medianOf(v.stream().mapToDouble(a -> a[1]).toArray());
            double total = medianOf(v.stream().mapToDouble(a -> (Double.isNaN(a[0]) ? 0 : a[0]) + a[1]).toArray());
            double rss = medianOf(v.stream().mapToDouble(a -> a[2]).toArray());
            out.append("| ").append(e.getKey()).append(" | ").append(Double.isNaN(fmt) ? "— (formats itself)" : fmt(fmt, 2))
                .append(" | ").append(fmt(ready, 2)).append(" | ").append(fmt(total, 2))
                .append(" | ").append(fmt(rss, 0)).append(" | ").append(v.size()).append(" |\n");
        }
    }

    private static List<Run> ok(List<Run> runs, String broker) {
        return runs.stream().filter(r -> r.broker().equals(broker) && r.status().equals("ok")).toList();
    }

    private static String count(List<Run> runs, String broker) {
        long all = runs.stream().filter(r -> r.broker().equals(broker)).count();
        long ok = ok(runs, broker).size();
        return ok == all ? Long.toString(ok) : ok + " of " + all;
    }

    private static String pcts(List<Run> runs, int decimals) {
        if (runs.isEmpty()) {
            return "—";
        }
        return fmt(median(runs, Run::latP50), decimals) + " / " + fmt(median(runs, Run::latP99), decimals)
            + " / " + fmt(median(runs, Run::latP999), decimals);
    }

    private static double median(List<Run> runs, ToDoubleFunction<Run> f) {
        return medianOf(runs.stream().mapToDouble(f).filter(d -> !Double.isNaN(d) && !Double.isInfinite(d)).toArray());
    }

    private static double medianOf(double[] v) {
        v = java.util.Arrays.stream(v).filter(d -> !Double.isNaN(d)).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static String ratio(double a, double b) {
        if (Double.isNaN(a) || Double.isNaN(b) || b == 0) {
            return "—";
        }
        return String.format(Locale.ROOT, "%.2f×", a / b);
    }

    private static String fmt(double d, int decimals) {
        if (Double.isNaN(d)) {
            return "—";
        }
        return String.format(Locale.ROOT, decimals == 0 ? "%,.0f" : "%,." + decimals + "f", d);
    }

    private static double num(String s) {
        return s == null || s.isBlank() ? Double.NaN : Double.parseDouble(s);
    }
}
