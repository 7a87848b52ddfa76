package io.strata.tools;

import io.strata.common.Time;
import io.strata.protocol.records.CompressionType;
import io.strata.tools.client.ClientLimits;
import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.Partitioner;
import io.strata.tools.client.RecordProducer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;

/**
 * {@code strata perf produce TOPIC}: writes {@code --num-records} generated records of
 * {@code --record-size} bytes (random capital letters, no key, as kafka-producer-perf-test
 * makes them), optionally throttled to {@code --throughput} records/s, and prints throughput
 * and latency every reporting interval and for the whole run.
 *
 * <p>A record's latency runs from handing it to the producer to the broker acknowledging its
 * batch, as Kafka's tool measures from {@code send} to the callback; it includes the time the
 * record waited for its batch to fill. The producer is the CLI's own: it sends one request per
 * leader at a time, so this measures a single synchronous client, not a pipelined one.
 */
@Command(name = "produce", description = "Write generated records and report throughput and latency (like kafka-producer-perf-test).")
final class PerfProduceCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Mixin
    ProducerOptions producerOptions;

    @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic to write to.")
    String topic;

    @Option(names = "--num-records", paramLabel = "N", required = true, description = "How many records to write.")
    long numRecords;

    @Option(names = "--record-size", paramLabel = "BYTES", defaultValue = "100", description = "The size of each record's value (default: ${DEFAULT-VALUE}).")
    int recordSize;

    @Option(names = "--throughput", paramLabel = "N", defaultValue = "-1",
        description = "At most N records per second; -1 for no limit (default: ${DEFAULT-VALUE}).")
    double throughput;

    @Option(names = "--reporting-interval-ms", paramLabel = "MS", defaultValue = "5000",
        description = "Print a line about the last interval this often (default: ${DEFAULT-VALUE}).")
    long reportingIntervalMs;

    @Override
    public Integer call() {
        RecordProducer.Settings settings = settings();
        Time time = Time.SYSTEM;
        Random random = new Random();
        byte[] payload = new byte[recordSize];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) ('A' + random.nextInt(26));
        }
        try (ClusterClient cluster = connection.connect()) {
            RecordProducer producer = new RecordProducer(cluster, topic, settings, new Partitioner(producerOptions.batchSizeBytes, random));
            PerfStats stats = new PerfStats(time, System.out, "sent", reportingIntervalMs);
            Map<Integer, AppendTimes> appended = new HashMap<>();
            producer.onAcknowledged((partition, recordCount) -> {
                long nowNs = time.nanoseconds();
                AppendTimes times = appended.get(partition);
                for (int i = 0; i < recordCount; i++) {
                    stats.latencyNs(nowNs - times.removeFirst());
                }
                stats.records(recordCount, (long) recordCount * recordSize);
            });
            long startNs = time.nanoseconds();
            for (long i = 0; i < numRecords; i++) {
                throttle(producer, time, startNs, i);
                long appendNs = time.nanoseconds();
                int partition = producer.append(null, time.milliseconds(), null, payload, List.of());
                appended.computeIfAbsent(partition, p -> new AppendTimes()).add(appendNs);
                if (producer.hasReadyBatches()) {
                    producer.sendReadyBatches();
                }
                stats.maybeReport();
            }
            producer.flush();
            stats.printTotal();
        }
        return 0;
    }

    /** Waits until record {@code index} is due under {@code --throughput}, sending what waits meanwhile. */
    private void throttle(RecordProducer producer, Time time, long startNs, long index) {
        if (throughput <= 0) {
            return;
        }
        long dueNs = startNs + (long) (index * 1e9 / throughput);
        long aheadNs = dueNs - time.nanoseconds();
        if (aheadNs <= 0) {
            return;
        }
        producer.flush(); // nothing waits in a half-full batch while the run sleeps
        aheadNs = dueNs - time.nanoseconds();
        if (aheadNs >= 1_000_000) {
            try {
                time.sleep(aheadNs / 1_000_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private RecordProducer.Settings settings() {
        if (numRecords <= 0) {
            throw usage("--num-records must be positive, got " + numRecords);
        }
        if (recordSize < 0 || recordSize > ClientLimits.MAX_REQUEST_BYTES - 1024) {
            throw usage("--record-size must be 0.." + (ClientLimits.MAX_REQUEST_BYTES - 1024) + ", got " + recordSize);
        }
        if (throughput == 0 || (throughput < 0 && throughput != -1)) {
            throw usage("--throughput must be positive, or -1 for no limit, got " + throughput);
        }
        if (reportingIntervalMs <= 0) {
            throw usage("--reporting-interval-ms must be positive, got " + reportingIntervalMs);
        }
        return producerOptions.settings(spec.commandLine(), ClientLimits.DEFAULT_DELIVERY_TIMEOUT_MS);
    }

    private CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    /** The append times of one partition's unacknowledged records, oldest first: a growable ring of longs. */
    static final class AppendTimes {
        private long[] times = new long[1024];
        private int head;
        private int size;

        void add(long timeNs) {
            if (size == times.length) {
                long[] grown = new long[times.length * 2];
                for (int i = 0; i < size; i++) {
                    grown[i] = times[(head + i) % times.length];
                }
                times = grown;
                head = 0;
            }
            times[(head + size) % times.length] = timeNs;
            size++;
        }

        long removeFirst() {
            if (size == 0) {
                throw new IllegalStateException("more records acknowledged than appended");
            }
            long time = times[head];
            head = (head + 1) % times.length;
            size--;
            return time;
        }

        int size() {
            return size;
        }
    }
}
