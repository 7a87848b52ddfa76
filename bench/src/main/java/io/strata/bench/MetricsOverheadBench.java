package io.strata.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The produce path with metrics on and off, in the same run: two Strata brokers started by
 * {@code bench/metrics-bench.sh} from the same jar, one with {@code metrics.enabled=true} (and a
 * scraper reading its {@code /metrics} every {@code --scrape-ms}, as Prometheus would), one with
 * {@code metrics.enabled=false}. For each row (record size, acks, partitions, batching), a Kafka
 * producer in this JVM writes {@code --records} records as fast as the broker takes them, to each
 * broker in turn, alternating which goes first, after one unmeasured warm-up run per broker. A
 * run reports records/s and the CPU time the broker process used per record (utime + stime from
 * {@code /proc/PID/stat}); the row reports the medians, and the median over runs of the on/off
 * ratio of each adjacent pair of runs (the two runs of a pair are seconds apart, so they share
 * whatever else the machine was doing: this is the figure to read on a shared machine).
 *
 * <p>Two JVMs differ by their JIT's luck as much as by what they run (10% either way on the
 * produce path is common), so the script runs several rounds, each with a fresh pair of brokers,
 * and this class appends every run to a raw file; {@code --aggregate RAW --out FILE} then
 * reports over all rounds.
 *
 * <p>Options: {@code --on HOST:PORT}, {@code --on-pid PID}, {@code --on-metrics URL},
 * {@code --off HOST:PORT}, {@code --off-pid PID}, {@code --runs N} (7), {@code --round N} (1),
 * {@code --raw FILE} (runs appended as TSV), {@code --scale F} (1.0, multiplies every row's
 * record count), {@code --only REGEX} (rows whose name matches), {@code --scrape-ms MS} (1000),
 * {@code --out FILE} (results in Markdown); or {@code --aggregate RAW --out FILE}.
 *
 * <p>Scraping every second is pessimistic (Prometheus usually scrapes every 15-60 s): a scrape
 * of a broker with a few hundred series costs it a few milliseconds of CPU.
 */
public final class MetricsOverheadBench {
    private static final double CLOCK_TICKS_PER_SECOND = 100.0;

    private MetricsOverheadBench() {
    }

    /** One kind of load. */
    record Row(String name, int records, int valueBytes, String acks, int partitions, int batchBytes, int lingerMs) {
    }

    /** One measured run. */
    record Run(double recordsPerSecond, double brokerCpuMicrosPerRecord) {
    }

    static List<Row> rows(double scale) {
        return List.of(
            new Row("100 B, acks=1, 1 partition, batches up to 16 KiB", scaled(3_000_000, scale), 100, "1", 1, 16_384, 5),
            new Row("1 KiB, acks=all, 8 partitions, batches up to 64 KiB", scaled(600_000, scale), 1024, "all", 8, 65_536, 5),
            new Row("100 B, acks=1, 1 partition, one record per request", scaled(150_000, scale), 100, "1", 1, 1, 0));
    }

    private static int scaled(int records, double scale) {
        return Math.max(1000, (int) (records * scale));
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = StorageBenchSupport.options(args);
        if (options.containsKey("aggregate")) {
            String report = aggregate(Files.readAllLines(Path.of(options.get("aggregate"))));
            Files.writeString(Path.of(required(options, "out")), report);
            System.out.print(report);
            return;
        }
        String on = required(options, "on");
        String off = required(options, "off");
        long onPid = Long.parseLong(required(options, "on-pid"));
        long offPid = Long.parseLong(required(options, "off-pid"));
        String onMetrics = required(options, "on-metrics");
        int runs = Integer.parseInt(options.getOrDefault("runs", "7"));
        double scale = Double.parseDouble(options.getOrDefault("scale", "1.0"));
        long scrapeMs = Long.parseLong(options.getOrDefault("scrape-ms", "1000"));
        java.util.regex.Pattern only = java.util.regex.Pattern.compile(options.getOrDefault("only", ".*"));
        Path out = Path.of(options.getOrDefault("out", "metrics-bench-results.md"));
        String round = options.getOrDefault("round", "1");
        Path raw = options.containsKey("raw") ? Path.of(options.get("raw")) : null;

        Scraper scraper = new Scraper(onMetrics, scrapeMs);
        scraper.start();
        // A/A control: the "off" broker has metrics on too and is scraped the same way, so the
        // ratios show how far apart two identical brokers measure (the method's noise floor).
        Scraper offScraper = options.containsKey("off-metrics") ? new Scraper(options.get("off-metrics"), scrapeMs) : null;
        if (offScraper != null) {
            offScraper.start();
        }
        StringBuilder report = new StringBuilder();
        report.append(String.format(Locale.ROOT, "| Row | on: records/s | off: records/s | throughput on/off, median of pairs "
            + "| on: broker CPU µs/record | off: broker CPU µs/record | broker CPU on/off, median of pairs |%n|---|---|---|---|---|---|---|%n"));
        try {
            int rowIndex = 0;
            for (Row row : rows(scale)) {
                String topic = "metrics-bench-" + rowIndex++;
                if (!only.matcher(row.name()).find()) {
                    continue;
                }
                createTopic(on, topic, row.partitions());
                createTopic(off, topic, row.partitions());
                List<Run> onRuns = new ArrayList<>();
                List<Run> offRuns = new ArrayList<>();
                log("row: " + row.name() + " (" + row.records() + " records per run)");
                produce(on, onPid, topic, row);
                produce(off, offPid, topic, row);
                for (int run = 0; run < runs; run++) {
                    boolean onFirst = run % 2 == 0;
                    for (int side = 0; side < 2; side++) {
                        boolean isOn = onFirst == (side == 0);
                        Run measured = isOn ? produce(on, onPid, topic, row) : produce(off, offPid, topic, row);
                        (isOn ? onRuns : offRuns).add(measured);
                        if (raw != null) {
                            Files.writeString(raw, String.format(Locale.ROOT, "%s\t%s\t%d\t%s\t%.1f\t%.4f%n", row.name(), round, run + 1,
                                isOn ? "on" : "off", measured.recordsPerSecond(), measured.brokerCpuMicrosPerRecord()),
                                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
                        }
                        log(String.format(Locale.ROOT, "  run %d %-3s %,10.0f records/s  %6.2f µs broker CPU/record", run + 1, isOn ? "on" : "off",
                            measured.recordsPerSecond(), measured.brokerCpuMicrosPerRecord()));
                    }
                }
                double onRate = median(onRuns.stream().mapToDouble(Run::recordsPerSecond).toArray());
                double offRate = median(offRuns.stream().mapToDouble(Run::recordsPerSecond).toArray());
                double onCpu = median(onRuns.stream().mapToDouble(Run::brokerCpuMicrosPerRecord).toArray());
                double offCpu = median(offRuns.stream().mapToDouble(Run::brokerCpuMicrosPerRecord).toArray());
                double[] rateRatios = new double[runs];
                double[] cpuRatios = new double[runs];
                for (int run = 0; run < runs; run++) {
                    rateRatios[run] = onRuns.get(run).recordsPerSecond() / offRuns.get(run).recordsPerSecond();
                    cpuRatios[run] = onRuns.get(run).brokerCpuMicrosPerRecord() / offRuns.get(run).brokerCpuMicrosPerRecord();
                }
                String line = String.format(Locale.ROOT, "| %s | %,.0f | %,.0f | **%.3f** | %.2f | %.2f | **%.3f** |%n", row.name(), onRate, offRate,
                    median(rateRatios), onCpu, offCpu, median(cpuRatios));
                report.append(line);
                log(line.strip());
            }
        } finally {
            scraper.stop();
            if (offScraper != null) {
                offScraper.stop();
            }
        }
        report.append(String.format(Locale.ROOT, "%nScrapes of the metrics-on broker during the runs: %d (every %d ms), last one %,d bytes; "
            + "Produce requests it counted: %s.%n", scraper.scrapes, scrapeMs, scraper.lastBytes, scraper.produceRequests()));
        Files.writeString(out, report.toString());
        System.out.print(report);
    }

    /**
     * The report over every round: per row, the median records/s and broker CPU per record of
     * each side, and the median of the on/off ratios of the pairs (same round, same run).
     */
    static String aggregate(List<String> rawLines) {
        Map<String, Map<String, double[]>> pairs = new LinkedHashMap<>(); // row -> "round/run" -> {on rate, on cpu, off rate, off cpu}
        for (String line : rawLines) {
            String[] fields = line.split("\t");
            if (fields.length != 6) {
                continue;
            }
            double[] pair = pairs.computeIfAbsent(fields[0], row -> new LinkedHashMap<>())
                .computeIfAbsent(fields[1] + "/" + fields[2], key -> new double[] {Double.NaN, Double.NaN, Double.NaN, Double.NaN});
            int offset = fields[3].equals("on") ? 0 : 2;
            pair[offset] = Double.parseDouble(fields[4]);
            pair[offset + 1] = Double.parseDouble(fields[5]);
        }
        StringBuilder report = new StringBuilder(String.format(Locale.ROOT,
            "| Row | pairs | on: records/s | off: records/s | throughput on/off (median of pairs) | on: broker CPU µs/record "
                + "| off: broker CPU µs/record | broker CPU on/off (median of pairs) |%n|---|---|---|---|---|---|---|---|%n"));
        for (Map.Entry<String, Map<String, double[]>> row : pairs.entrySet()) {
            List<double[]> complete = row.getValue().values().stream().filter(p -> Arrays.stream(p).noneMatch(Double::isNaN)).toList();
            if (complete.isEmpty()) {
                continue;
            }
            report.append(String.format(Locale.ROOT, "| %s | %d | %,.0f | %,.0f | **%.3f** | %.2f | %.2f | **%.3f** |%n", row.getKey(), complete.size(),
                median(complete.stream().mapToDouble(p -> p[0]).toArray()), median(complete.stream().mapToDouble(p -> p[2]).toArray()),
                median(complete.stream().mapToDouble(p -> p[0] / p[2]).toArray()), median(complete.stream().mapToDouble(p -> p[1]).toArray()),
                median(complete.stream().mapToDouble(p -> p[3]).toArray()), median(complete.stream().mapToDouble(p -> p[1] / p[3]).toArray())));
        }
        return report.toString();
    }

    private static String required(Map<String, String> options, String name) {
        String value = options.get(name);
        if (value == null) {
            throw new IllegalArgumentException("--" + name + " is required");
        }
        return value;
    }

    private static void createTopic(String bootstrap, String topic, int partitions) throws Exception {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(properties)) {
            if (!admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(topic)) {
                admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Writes the row's records with a fresh producer (bounded in flight), timing from first send to last acknowledgement. */
    private static Run produce(String bootstrap, long brokerPid, String topic, Row row) throws Exception {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.ACKS_CONFIG, row.acks());
        properties.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(row.batchBytes()));
        properties.put(ProducerConfig.LINGER_MS_CONFIG, Integer.toString(row.lingerMs()));
        properties.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(64L << 20));
        byte[] value = new byte[row.valueBytes()];
        Arrays.fill(value, (byte) 'x');
        Semaphore inFlight = new Semaphore(row.batchBytes() <= 1 ? 64 : 50_000);
        AtomicReference<Exception> failure = new AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(properties)) {
            producer.partitionsFor(topic); // metadata before the clock starts
            long cpuBefore = cpuTicks(brokerPid);
            long start = System.nanoTime();
            for (int i = 0; i < row.records(); i++) {
                inFlight.acquire();
                producer.send(new ProducerRecord<>(topic, i % row.partitions(), null, value), (metadata, exception) -> {
                    if (exception != null) {
                        failure.compareAndSet(null, exception);
                    }
                    inFlight.release();
                });
            }
            producer.flush();
            long elapsed = System.nanoTime() - start;
            long cpuAfter = cpuTicks(brokerPid);
            if (failure.get() != null) {
                throw new IllegalStateException("a send to " + bootstrap + " failed", failure.get());
            }
            double seconds = elapsed / 1e9;
            return new Run(row.records() / seconds, (cpuAfter - cpuBefore) / CLOCK_TICKS_PER_SECOND * 1e6 / row.records());
        }
    }

    /** utime + stime of a process, in clock ticks. */
    static long cpuTicks(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }

    private static void log(String message) {
        System.err.println(message);
    }

    /** Scrapes the metrics-on broker periodically, as Prometheus would, so scrape cost is part of what is measured. */
    private static final class Scraper {
        private final HttpClient client = HttpClient.newHttpClient();
        private final String url;
        private final long intervalMs;
        private final Thread thread;
        private volatile boolean running = true;
        volatile int scrapes;
        volatile int lastBytes;
        private volatile String last = "";

        Scraper(String baseUrl, long intervalMs) {
            this.url = baseUrl + "/metrics";
            this.intervalMs = intervalMs;
            this.thread = new Thread(this::loop, "metrics-scraper");
            this.thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        private void loop() {
            while (running) {
                try {
                    HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create(url)).build(),
                        HttpResponse.BodyHandlers.ofString());
                    last = response.body();
                    lastBytes = last.length();
                    scrapes++;
                    Thread.sleep(intervalMs);
                } catch (InterruptedException e) {
                    return;
                } catch (IOException e) {
                    log("scrape failed: " + e);
                }
            }
        }

        void stop() throws InterruptedException {
            running = false;
            thread.interrupt();
            thread.join(5000);
        }

        /** The Produce request counts of the last scrape, per version. */
        String produceRequests() {
            Map<String, String> counts = new LinkedHashMap<>();
            for (String line : last.split("\n")) {
                if (line.startsWith("kafka_network_requestmetrics_requests_total{request=\"Produce\"")) {
                    counts.put(line.substring(line.indexOf('{'), line.indexOf('}') + 1), line.substring(line.lastIndexOf(' ') + 1));
                }
            }
            return counts.toString();
        }
    }
}
