package io.strata.tools;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code strata perf produce|consume} against a real broker: what they report matches what they did. */
class PerfCommandTest {
    @RegisterExtension
    static final TestBroker BROKER = new TestBroker();

    /** The final line, in kafka-producer-perf-test's layout. */
    private static final Pattern TOTAL = Pattern.compile("(\\d+) records (sent|received), ([\\d.]+) records/sec \\(([\\d.]+) MB/sec\\), "
        + "([\\d.]+) ms avg latency, ([\\d.]+) ms max latency, (\\d+) ms 50th, (\\d+) ms 95th, (\\d+) ms 99th, (\\d+) ms 99.9th\\.");
    private static final Pattern INTERVAL = Pattern.compile("(\\d+) records sent, ([\\d.]+) records/sec \\(([\\d.]+) MB/sec\\), "
        + "([\\d.]+) ms avg latency, ([\\d.]+) ms max latency\\.");

    private static Matcher total(CliRunner.Result result) {
        List<String> lines = result.lines();
        assertThat(lines).as(result.toString()).isNotEmpty();
        Matcher matcher = TOTAL.matcher(lines.get(lines.size() - 1));
        assertThat(matcher.matches()).as(result.toString()).isTrue();
        return matcher;
    }

    @Test
    void produceWritesWhatItReportsAndConsumeReadsItBack() {
        String topic = "perf-roundtrip";
        CliRunner.Result created = CliRunner.run("topics", "create", topic, "--partitions", "3", "--bootstrap-server", BROKER.bootstrap());
        assertThat(created.exitCode()).as(created.toString()).isZero();

        CliRunner.Result produced = CliRunner.run("perf", "produce", topic, "--num-records", "20000", "--record-size", "100",
            "--batch-size", "4096", "--reporting-interval-ms", "50", "--bootstrap-server", BROKER.bootstrap());
        assertThat(produced.exitCode()).as(produced.toString()).isZero();
        Matcher total = total(produced);
        assertThat(total.group(1)).isEqualTo("20000");
        double recordsPerSecond = Double.parseDouble(total.group(3));
        double megabytesPerSecond = Double.parseDouble(total.group(4));
        assertThat(recordsPerSecond).isPositive();
        // 100-byte records: MB/s is records/s x 100 / 2^20 (rounded to two decimals in the output).
        assertThat(megabytesPerSecond).isCloseTo(recordsPerSecond * 100 / (1024 * 1024), org.assertj.core.data.Offset.offset(0.01));
        long p50 = Long.parseLong(total.group(7));
        long p99 = Long.parseLong(total.group(9));
        double max = Double.parseDouble(total.group(6));
        assertThat(p50).isLessThanOrEqualTo(p99);
        assertThat((double) p99).isLessThanOrEqualTo(Math.ceil(max) + 1);
        // Interval lines add up to at most the total (the last partial interval is only in the total).
        long intervalRecords = 0;
        for (String line : produced.lines()) {
            Matcher interval = INTERVAL.matcher(line);
            if (interval.matches()) {
                intervalRecords += Long.parseLong(interval.group(1));
            }
        }
        assertThat(intervalRecords).isLessThanOrEqualTo(20000);

        // What Kafka's consumer finds: 20,000 records of 100 capital letters, no keys, over the partitions.
        List<ConsumerRecord<byte[], byte[]>> records = readAll(topic, 3, 20000);
        assertThat(records).hasSize(20000);
        for (ConsumerRecord<byte[], byte[]> record : records) {
            assertThat(record.key()).isNull();
            assertThat(record.value()).hasSize(100);
            for (byte b : record.value()) {
                assertThat((char) b).isBetween('A', 'Z');
            }
        }

        CliRunner.Result consumed = CliRunner.run("perf", "consume", topic, "--num-records", "20000", "--timeout-ms", "15000",
            "--bootstrap-server", BROKER.bootstrap());
        assertThat(consumed.exitCode()).as(consumed.toString()).isZero();
        Matcher read = total(consumed);
        assertThat(read.group(1)).isEqualTo("20000");
        assertThat(read.group(2)).isEqualTo("received");
    }

    @Test
    void throughputLimitIsHonoured() {
        String topic = "perf-throttled";
        CliRunner.Result created = CliRunner.run("topics", "create", topic, "--bootstrap-server", BROKER.bootstrap());
        assertThat(created.exitCode()).as(created.toString()).isZero();
        CliRunner.Result produced = CliRunner.run("perf", "produce", topic, "--num-records", "1000", "--throughput", "2000",
            "--bootstrap-server", BROKER.bootstrap());
        assertThat(produced.exitCode()).as(produced.toString()).isZero();
        // Record i is not sent before i/2000 s: 1,000 records cannot take less than 0.4995 s.
        assertThat(Double.parseDouble(total(produced).group(3))).isLessThanOrEqualTo(2010.0);
    }

    @Test
    void badOptionsAreRefused() {
        CliRunner.Result result = CliRunner.run("perf", "produce", "t", "--num-records", "0", "--bootstrap-server", BROKER.bootstrap());
        assertThat(result.exitCode()).isNotZero();
        assertThat(result.err()).contains("--num-records must be positive");
        result = CliRunner.run("perf", "produce", "t", "--num-records", "10", "--throughput", "-5", "--bootstrap-server", BROKER.bootstrap());
        assertThat(result.exitCode()).isNotZero();
        assertThat(result.err()).contains("--throughput must be positive, or -1");
    }

    private static List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int partitions, int expected) {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrap());
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(properties)) {
            List<TopicPartition> assigned = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                assigned.add(new TopicPartition(topic, p));
            }
            consumer.assign(assigned);
            consumer.seekToBeginning(assigned);
            long deadline = System.currentTimeMillis() + 60_000;
            while (records.size() < expected && System.currentTimeMillis() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        return records;
    }
}
