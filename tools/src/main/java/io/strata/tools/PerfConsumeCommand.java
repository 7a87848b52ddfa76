package io.strata.tools;

import io.strata.common.Time;
import io.strata.protocol.records.TimestampType;
import io.strata.tools.client.ClientLimits;
import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.ConsumedRecord;
import io.strata.tools.client.IsolationLevel;
import io.strata.tools.client.TopicConsumer;
import io.strata.tools.client.TopicInfo;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code strata perf consume TOPIC}: reads every partition of the topic, from the beginning
 * (or only new records with {@code --from-latest}), until {@code --num-records} records or
 * {@code --timeout-ms} without a new one, and prints throughput every reporting interval and
 * for the whole run, as kafka-consumer-perf-test does.
 *
 * <p>Latency is end to end: from a record's timestamp (its producer's clock, CreateTime) to the
 * moment this consumer received it, so it means something for records produced while the
 * consumer runs on the same machine (e.g. next to {@code strata perf produce}); records with
 * LogAppendTime count from the broker's append. Bytes are key plus value bytes.
 */
@Command(name = "consume", description = "Read a topic and report throughput and end-to-end latency (like kafka-consumer-perf-test).")
final class PerfConsumeCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic to read.")
    String topic;

    @Option(names = "--num-records", paramLabel = "N", required = true, description = "Stop after N records.")
    long numRecords;

    @Option(names = "--timeout-ms", paramLabel = "MS", defaultValue = "10000",
        description = "Stop when no record has arrived for MS milliseconds (default: ${DEFAULT-VALUE}).")
    long timeoutMs;

    @Option(names = "--from-latest", description = "Read only records that arrive from now on (default: from the beginning).")
    boolean fromLatest;

    @Option(names = "--isolation", paramLabel = "LEVEL", defaultValue = "read_uncommitted", converter = ConsumeCommand.IsolationConverter.class,
        description = "read_uncommitted or read_committed (default: ${DEFAULT-VALUE}).")
    IsolationLevel isolation;

    @Option(names = "--reporting-interval-ms", paramLabel = "MS", defaultValue = "5000",
        description = "Print a line about the last interval this often (default: ${DEFAULT-VALUE}).")
    long reportingIntervalMs;

    @Override
    public Integer call() {
        if (numRecords <= 0) {
            throw usage("--num-records must be positive, got " + numRecords);
        }
        if (timeoutMs <= 0) {
            throw usage("--timeout-ms must be positive, got " + timeoutMs);
        }
        if (reportingIntervalMs <= 0) {
            throw usage("--reporting-interval-ms must be positive, got " + reportingIntervalMs);
        }
        Time time = Time.SYSTEM;
        try (ClusterClient cluster = connection.connect()) {
            TopicInfo info = cluster.topic(topic, false);
            List<Integer> partitions = new ArrayList<>();
            for (int i = 0; i < info.partitionCount(); i++) {
                partitions.add(i);
            }
            TopicConsumer consumer = new TopicConsumer(cluster, info, partitions, isolation,
                fromLatest ? TopicConsumer.OffsetReset.LATEST : TopicConsumer.OffsetReset.EARLIEST,
                notice -> System.err.println("strata: " + notice));
            if (fromLatest) {
                consumer.seekToEnd();
            } else {
                consumer.seekToBeginning();
            }
            PerfStats stats = new PerfStats(time, System.out, "received", reportingIntervalMs);
            long lastRecordMs = time.hiResClockMs();
            while (stats.records() < numRecords && time.hiResClockMs() - lastRecordMs < timeoutMs) {
                int waitMs = (int) Math.max(0, Math.min(ClientLimits.FETCH_MAX_WAIT_MS, timeoutMs - (time.hiResClockMs() - lastRecordMs)));
                List<ConsumedRecord> records = consumer.poll(waitMs);
                long nowMs = time.milliseconds();
                for (ConsumedRecord record : records) {
                    if (stats.records() >= numRecords) {
                        break;
                    }
                    long bytes = (record.key() == null ? 0 : record.key().length) + (record.value() == null ? 0 : record.value().length);
                    stats.records(1, bytes);
                    if (record.timestampType() != TimestampType.NO_TIMESTAMP_TYPE && record.timestamp() >= 0) {
                        stats.latencyNs((nowMs - record.timestamp()) * 1_000_000L);
                    }
                }
                if (!records.isEmpty()) {
                    lastRecordMs = time.hiResClockMs();
                }
                stats.maybeReport();
            }
            stats.printTotal();
            if (stats.records() < numRecords) {
                System.err.println("strata: stopped after " + timeoutMs + " ms without a new record, " + stats.records() + " of "
                    + numRecords + " records received");
            }
        }
        return 0;
    }

    private CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }
}
