import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Exactly-once produce load for bench/eos-bench.sh: the same client code (kafka-clients, the
 * version bench/broker/pom.xml resolves) against Apache Kafka and Strata. Each command prints one
 * {@code RESULT key=value ...} line on stdout (the script stores it verbatim) and exits non-zero if
 * the measurement failed.
 *
 * <pre>
 *   BenchEos produce BOOTSTRAP TOPIC MODE RECORD_BYTES RECORDS RECORDS_PER_TRANSACTION TRANSACTIONAL_ID BROKER_PID
 *   BenchEos features BOOTSTRAP
 *   BenchEos report RUNS_TSV
 * </pre>
 *
 * <b>produce</b>: one KafkaProducer with acks=all and otherwise the client's defaults (batch.size
 * 16384, linger.ms 5, max.in.flight 5, no compression, the default partitioner: without keys it
 * sticks to one partition per batch), writing RECORDS values of RECORD_BYTES random bytes, no key.
 * MODE is
 * <ul>
 *   <li>{@code plain}: enable.idempotence=false;</li>
 *   <li>{@code idempotent}: enable.idempotence=true (the client's default);</li>
 *   <li>{@code transactional}: transactional.id=TRANSACTIONAL_ID; beginTransaction, RECORDS_PER_TRANSACTION
 *       sends, commitTransaction, repeated. commitTransaction's duration (it flushes the
 *       transaction's last batches, then EndTxn) is recorded per transaction.</li>
 * </ul>
 * Before the clock starts the producer has fetched the topic's metadata ({@code partitionsFor}) and,
 * if transactional, run initTransactions, so neither start-up round trip is in the figures. The
 * clock stops when every record is acknowledged (flush, or the last commit). Broker CPU is
 * utime+stime of BROKER_PID from /proc over that window; client CPU is this JVM's process CPU.
 * {@code txn_v2} tells whether the client ran transactions v2 (KIP-890: no AddPartitionsToTxn, the
 * epoch bumped on every commit), read from its TransactionManager after the first commit.
 *
 * <b>features</b>: the broker's finalized feature levels (Admin.describeFeatures), one line.
 *
 * <b>report</b>: medians per row and broker, Strata/Kafka ratios, and each broker's idempotent
 * and transactional throughput relative to its own non-idempotent throughput, as Markdown.
 */
public final class BenchEos {
    private static final int RUN_TIMEOUT_SECONDS = 240;
    private static final List<String> MODES = List.of("plain", "idempotent", "transactional");

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            usage();
        }
        switch (args[0]) {
            case "produce" -> {
                if (args.length != 9) {
                    usage();
                }
                System.exit(produce(args[1], args[2], args[3], Integer.parseInt(args[4]), Integer.parseInt(args[5]),
                    Integer.parseInt(args[6]), args[7], Long.parseLong(args[8])));
            }
            case "features" -> {
                if (args.length != 2) {
                    usage();
                }
                features(args[1]);
            }
            case "report" -> {
                if (args.length != 2) {
                    usage();
                }
                report(Path.of(args[1]));
            }
            default -> usage();
        }
    }

    private static void usage() {
        System.err.println("usage: BenchEos produce BOOTSTRAP TOPIC plain|idempotent|transactional RECORD_BYTES RECORDS "
            + "RECORDS_PER_TRANSACTION TRANSACTIONAL_ID BROKER_PID\n"
            + "       BenchEos features BOOTSTRAP\n"
            + "       BenchEos report RUNS_TSV");
        System.exit(2);
    }

    private static long clientCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    }

    // --- produce ---------------------------------------------------------------------------------

    static int produce(String bootstrap, String topic, String mode, int recordBytes, int records, int recordsPerTransaction,
                       String transactionalId, long brokerPid) throws Exception {
        if (!MODES.contains(mode)) {
            throw new IllegalArgumentException("mode must be one of " + MODES + ": mode=" + mode);
        }
        if (recordsPerTransaction <= 0 || records % recordsPerTransaction != 0) {
            throw new IllegalArgumentException("records must be a multiple of records per transaction: records=" + records
                + " recordsPerTransaction=" + recordsPerTransaction);
        }
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, Boolean.toString(!mode.equals("plain")));
        if (mode.equals("transactional")) {
            props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        }
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "eos-bench-" + mode);

        byte[] value = new byte[recordBytes];
        new Random(42).nextBytes(value);
        AtomicLong acknowledged = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        AtomicReference<Exception> firstFailure = new AtomicReference<>();
        Callback callback = (metadata, exception) -> {
            if (exception == null) {
                acknowledged.incrementAndGet();
            } else {
                failed.incrementAndGet();
                firstFailure.compareAndSet(null, exception);
            }
        };
        boolean transactional = mode.equals("transactional");
        int transactions = transactional ? records / recordsPerTransaction : 0;
        long[] commitNanos = new long[transactions];
        Boolean transactionsV2 = null;

        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.partitionsFor(topic);
            if (transactional) {
                producer.initTransactions();
            }
            long cpuBefore = BenchRuns.cpuTicks(brokerPid);
            long clientCpuBefore = clientCpuNanos();
            long startNanos = System.nanoTime();
            long deadline = startNanos + TimeUnit.SECONDS.toNanos(RUN_TIMEOUT_SECONDS);
            if (transactional) {
                for (int t = 0; t < transactions; t++) {
                    producer.beginTransaction();
                    for (int i = 0; i < recordsPerTransaction; i++) {
                        producer.send(new ProducerRecord<>(topic, value), callback);
                    }
                    long commitStart = System.nanoTime();
                    producer.commitTransaction();
                    commitNanos[t] = System.nanoTime() - commitStart;
                    if (t == 0) {
                        transactionsV2 = transactionsV2Enabled(producer);
                    }
                    if (System.nanoTime() > deadline) {
                        System.err.println("only " + (t + 1) + " of " + transactions + " transactions in " + RUN_TIMEOUT_SECONDS + " s");
                        return 1;
                    }
                }
            } else {
                for (int i = 0; i < records; i++) {
                    producer.send(new ProducerRecord<>(topic, value), callback);
                }
                producer.flush();
            }
            long endNanos = System.nanoTime();
            long cpuAfter = BenchRuns.cpuTicks(brokerPid);
            long clientCpuAfter = clientCpuNanos();

            double seconds = (endNanos - startNanos) / 1e9;
            double bytes = (double) records * recordBytes;
            double brokerCpuSeconds = cpuBefore < 0 || cpuAfter < 0 ? Double.NaN : (cpuAfter - cpuBefore) / (double) BenchRuns.CLOCK_TICKS_PER_SECOND;
            StringBuilder result = new StringBuilder("RESULT")
                .append(" mode=").append(mode)
                .append(" record_bytes=").append(recordBytes)
                .append(" records=").append(records)
                .append(" wall_s=").append(BenchRuns.fmt(seconds))
                .append(" records_s=").append(String.format(Locale.ROOT, "%.0f", records / seconds))
                .append(" mb_s=").append(BenchRuns.fmt(bytes / 1e6 / seconds))
                .append(" broker_cpu_s=").append(BenchRuns.fmt(brokerCpuSeconds))
                .append(" broker_cpu_s_per_gb=").append(BenchRuns.fmt(brokerCpuSeconds / (bytes / 1e9)))
                .append(" client_cpu_s=").append(BenchRuns.fmt((clientCpuAfter - clientCpuBefore) / 1e9))
                .append(" acknowledged=").append(acknowledged.get())
                .append(" failed=").append(failed.get());
            appendMetric(result, producer, "request-latency-avg", "request_latency_avg_ms");
            appendMetric(result, producer, "batch-size-avg", "batch_bytes_avg");
            appendMetric(result, producer, "records-per-request-avg", "records_per_request_avg");
            appendMetric(result, producer, "request-rate", "requests_s");
            appendMetric(result, producer, "record-retry-total", "record_retries");
            if (transactional) {
                Arrays.sort(commitNanos);
                result.append(" transactions=").append(transactions)
                    .append(" transactions_s=").append(BenchRuns.fmt(transactions / seconds))
                    .append(" commit_p50_ms=").append(BenchRuns.fmt(percentile(commitNanos, 0.50) / 1e6))
                    .append(" commit_p99_ms=").append(BenchRuns.fmt(percentile(commitNanos, 0.99) / 1e6))
                    .append(" commit_max_ms=").append(BenchRuns.fmt(commitNanos[commitNanos.length - 1] / 1e6))
                    .append(" txn_v2=").append(transactionsV2 == null ? "unknown" : transactionsV2.toString());
            }
            System.out.println(result);
            if (failed.get() > 0 || acknowledged.get() != records) {
                System.err.println("acknowledged " + acknowledged.get() + " of " + records + " records, " + failed.get()
                    + " failed; first failure: " + firstFailure.get());
                return 1;
            }
            return 0;
        }
    }

    /** The producer's own metric (producer-metrics group), in the RESULT line as KEY. */
    private static void appendMetric(StringBuilder result, KafkaProducer<?, ?> producer, String name, String key) {
        for (Map.Entry<MetricName, ? extends Metric> entry : producer.metrics().entrySet()) {
            if (entry.getKey().name().equals(name) && entry.getKey().group().equals("producer-metrics")) {
                Object value = entry.getValue().metricValue();
                if (value instanceof Double d && !d.isNaN()) {
                    result.append(' ').append(key).append('=').append(BenchRuns.fmt(d));
                }
                return;
            }
        }
    }

    /** Whether the producer's TransactionManager runs transactions v2; null if the client does not say. */
    private static Boolean transactionsV2Enabled(KafkaProducer<?, ?> producer) {
        try {
            Field field = KafkaProducer.class.getDeclaredField("transactionManager");
            field.setAccessible(true);
            Object transactionManager = field.get(producer);
            return (Boolean) transactionManager.getClass().getMethod("isTransactionV2Enabled").invoke(transactionManager);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private static long percentile(long[] sorted, double quantile) {
        int index = (int) Math.ceil(quantile * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    // --- features --------------------------------------------------------------------------------

    static void features(String bootstrap) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        try (Admin admin = Admin.create(props)) {
            FeatureMetadata metadata = admin.describeFeatures().featureMetadata().get(30, TimeUnit.SECONDS);
            StringBuilder line = new StringBuilder();
            for (Map.Entry<String, FinalizedVersionRange> entry : new java.util.TreeMap<>(metadata.finalizedFeatures()).entrySet()) {
                line.append(line.length() == 0 ? "" : ", ").append(entry.getKey()).append('=').append(entry.getValue().maxVersionLevel());
            }
            System.out.println(line.length() == 0 ? "(no finalized features)" : line);
        }
    }

    // --- report ----------------------------------------------------------------------------------

    /** "transactions v2" / "v1" / "—" from the runs' txn_v2 values (all runs of a broker should agree). */
    static String transactionVersion(List<BenchRuns.Run> runs) {
        List<String> seen = runs.stream().map(r -> r.values().get("txn_v2")).filter(v -> v != null).distinct().toList();
        if (seen.isEmpty()) {
            return "—";
        }
        return String.join("/", seen.stream().map(v -> v.equals("true") ? "v2" : v.equals("false") ? "v1" : v).toList());
    }

    /** The row's name without its mode, e.g. "100 B, 1p" for "100 B, 1p, transactional". */
    static String group(String row) {
        return row.substring(0, row.lastIndexOf(", "));
    }

    static String mode(String row) {
        return row.substring(row.lastIndexOf(", ") + 2);
    }

    static void report(Path runsTsv) throws IOException {
        List<BenchRuns.Run> runs = BenchRuns.readRuns(runsTsv);
        List<String> rows = runs.stream().map(BenchRuns.Run::row).distinct().toList();

        System.out.println("**Throughput** (acks=all; median of the runs; ratio = Strata / Kafka, above 1 means Strata is faster; "
            + "MB = 10^6 bytes of record values; CPU = broker utime+stime while producing, per GB of values):");
        System.out.println();
        System.out.println("| Row | Kafka rec/s | Strata rec/s | ratio | Kafka MB/s | Strata MB/s | broker CPU-s/GB K / S | CPU/GB ratio "
            + "| client CPU-s K / S | runs ok K / S |");
        System.out.println("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for (String row : rows) {
            List<BenchRuns.Run> k = BenchRuns.select(runs, row, "kafka");
            List<BenchRuns.Run> s = BenchRuns.select(runs, row, "strata");
            Double kRate = BenchRuns.median(k, "records_s");
            Double sRate = BenchRuns.median(s, "records_s");
            Double kCpu = BenchRuns.median(k, "broker_cpu_s_per_gb");
            Double sCpu = BenchRuns.median(s, "broker_cpu_s_per_gb");
            System.out.println("| " + row + " | " + BenchRuns.show(kRate, "%,.0f") + " | " + BenchRuns.show(sRate, "%,.0f") + " | **" + BenchRuns.ratio(sRate, kRate) + "**"
                + " | " + BenchRuns.show(BenchRuns.median(k, "mb_s"), "%.1f") + " | " + BenchRuns.show(BenchRuns.median(s, "mb_s"), "%.1f")
                + " | " + BenchRuns.show(kCpu, "%.1f") + " / " + BenchRuns.show(sCpu, "%.1f") + " | " + BenchRuns.ratio(sCpu, kCpu)
                + " | " + BenchRuns.show(BenchRuns.median(k, "client_cpu_s"), "%.1f") + " / " + BenchRuns.show(BenchRuns.median(s, "client_cpu_s"), "%.1f")
                + " | " + BenchRuns.okCount(k) + " / " + BenchRuns.okCount(s) + " |");
        }
        System.out.println();

        System.out.println("**Transactions** (one producer, 1,000 records per transaction; commit = the time commitTransaction() "
            + "took, which includes flushing the transaction's last batches; median of the runs):");
        System.out.println();
        System.out.println("| Row | Kafka txn/s | Strata txn/s | ratio | Kafka commit p50 / p99 ms | Strata commit p50 / p99 ms "
            + "| produce retries on CONCURRENT_TRANSACTIONS K / S | transactions version K / S |");
        System.out.println("|---|--:|--:|--:|--:|--:|--:|--:|");
        for (String row : rows) {
            if (!mode(row).equals("transactional")) {
                continue;
            }
            List<BenchRuns.Run> k = BenchRuns.select(runs, row, "kafka");
            List<BenchRuns.Run> s = BenchRuns.select(runs, row, "strata");
            Double kRate = BenchRuns.median(k, "transactions_s");
            Double sRate = BenchRuns.median(s, "transactions_s");
            System.out.println("| " + row + " | " + BenchRuns.show(kRate, "%,.1f") + " | " + BenchRuns.show(sRate, "%,.1f") + " | **" + BenchRuns.ratio(sRate, kRate) + "**"
                + " | " + BenchRuns.show(BenchRuns.median(k, "commit_p50_ms"), "%.2f") + " / " + BenchRuns.show(BenchRuns.median(k, "commit_p99_ms"), "%.2f")
                + " | " + BenchRuns.show(BenchRuns.median(s, "commit_p50_ms"), "%.2f") + " / " + BenchRuns.show(BenchRuns.median(s, "commit_p99_ms"), "%.2f")
                + " | " + BenchRuns.show(BenchRuns.median(k, "concurrent_transactions_retries"), "%.0f") + " / " + BenchRuns.show(BenchRuns.median(s, "concurrent_transactions_retries"), "%.0f")
                + " | " + transactionVersion(k) + " / " + transactionVersion(s) + " |");
        }
        System.out.println();

        System.out.println("**Overhead against the non-idempotent producer** (each broker's median records/s of the mode divided by "
            + "its own non-idempotent median in the same run; 1.00 = no cost):");
        System.out.println();
        System.out.println("| Records, partitions | Kafka idempotent | Strata idempotent | Kafka transactional | Strata transactional |");
        System.out.println("|---|--:|--:|--:|--:|");
        for (String group : rows.stream().map(BenchEos::group).distinct().toList()) {
            Map<String, Double> kafka = new LinkedHashMap<>();
            Map<String, Double> strata = new LinkedHashMap<>();
            for (String mode : List.of("non-idempotent", "idempotent", "transactional")) {
                String row = group + ", " + mode;
                kafka.put(mode, BenchRuns.median(BenchRuns.select(runs, row, "kafka"), "records_s"));
                strata.put(mode, BenchRuns.median(BenchRuns.select(runs, row, "strata"), "records_s"));
            }
            System.out.println("| " + group
                + " | " + BenchRuns.ratio(kafka.get("idempotent"), kafka.get("non-idempotent"))
                + " | " + BenchRuns.ratio(strata.get("idempotent"), strata.get("non-idempotent"))
                + " | " + BenchRuns.ratio(kafka.get("transactional"), kafka.get("non-idempotent"))
                + " | " + BenchRuns.ratio(strata.get("transactional"), strata.get("non-idempotent")) + " |");
        }
        System.out.println();

        List<BenchRuns.Run> failed = runs.stream().filter(r -> !r.status().equals("ok")).toList();
        if (failed.isEmpty()) {
            System.out.println("Every run succeeded.");
        } else {
            System.out.println("Failed runs:");
            System.out.println();
            for (BenchRuns.Run run : failed) {
                System.out.println("* " + run.row() + ", " + run.broker() + ", run " + run.run() + ": " + run.note());
            }
        }
    }
}
