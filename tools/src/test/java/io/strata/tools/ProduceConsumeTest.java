package io.strata.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatch;
import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.KafkaConnection;
import io.strata.tools.client.TopicInfo;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code strata produce} and {@code strata consume} against a real in-process broker, checked
 * against each other and against Kafka's own Java client.
 */
class ProduceConsumeTest {
    @RegisterExtension
    static final TestBroker BROKER = new TestBroker();

    /** Generous: a safety net so a broken test fails instead of hanging; passing tests never wait for it. */
    private static final String IDLE_TIMEOUT_MS = "15000";
    private static final ObjectMapper JSON = new ObjectMapper();

    private static void createTopic(String name, int partitions) {
        CliRunner.Result result = CliRunner.run("topics", "create", name, "--partitions", String.valueOf(partitions),
            "--bootstrap-server", BROKER.bootstrap());
        assertThat(result.exitCode()).as(result.toString()).isZero();
    }

    private static CliRunner.Result produce(String input, String topic, String... options) {
        List<String> args = new ArrayList<>(List.of("produce", topic, "--bootstrap-server", BROKER.bootstrap()));
        args.addAll(List.of(options));
        return CliRunner.runWithInput(input, args.toArray(String[]::new));
    }

    private static CliRunner.Result consume(String topic, String... options) {
        List<String> args = new ArrayList<>(List.of("consume", topic, "--bootstrap-server", BROKER.bootstrap()));
        args.addAll(List.of(options));
        return CliRunner.run(args.toArray(String[]::new));
    }

    private static List<JsonNode> consumeJson(String topic, int count, String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of("--format", "json", "-n", String.valueOf(count), "--timeout-ms", IDLE_TIMEOUT_MS));
        args.addAll(List.of(options));
        CliRunner.Result result = consume(topic, args.toArray(String[]::new));
        assertThat(result.exitCode()).as(result.toString()).isZero();
        List<JsonNode> records = new ArrayList<>();
        for (String line : result.lines()) {
            records.add(JSON.readTree(line));
        }
        assertThat(records).as(result.toString()).hasSize(count);
        return records;
    }

    @Test
    void keyedLinesWithHeadersComeBackInEveryFormat() throws Exception {
        createTopic("round-trip", 3);
        String input = "alpha:first\nbeta:second\ngamma:third with: colon\ndelta:\n";

        CliRunner.Result produced = produce(input, "round-trip", "--key-separator", ":", "--header", "app=cli", "--header", "trace=42");

        assertThat(produced.exitCode()).as(produced.toString()).isZero();
        assertThat(produced.out()).isEmpty();
        assertThat(produced.err()).containsPattern("strata: produced 4 records to \\d partitions? of round-trip in \\d+ ms");

        CliRunner.Result values = consume("round-trip", "--from-beginning", "-n", "4", "--timeout-ms", IDLE_TIMEOUT_MS);
        assertThat(values.exitCode()).as(values.toString()).isZero();
        assertThat(values.lines()).containsExactlyInAnyOrder("first", "second", "third with: colon", "");
        assertThat(values.err()).contains("strata: consumed 4 records");

        CliRunner.Result keyValues = consume("round-trip", "--from-beginning", "-n", "4", "--timeout-ms", IDLE_TIMEOUT_MS, "--format", "key-value");
        assertThat(keyValues.lines()).containsExactlyInAnyOrder("alpha\tfirst", "beta\tsecond", "gamma\tthird with: colon", "delta\t");

        List<JsonNode> records = consumeJson("round-trip", 4, "--from-beginning");
        Map<String, JsonNode> byKey = records.stream().collect(Collectors.toMap(node -> node.get("key").asText(), node -> node));
        assertThat(byKey).containsOnlyKeys("alpha", "beta", "gamma", "delta");
        JsonNode gamma = byKey.get("gamma");
        assertThat(gamma.get("topic").asText()).isEqualTo("round-trip");
        assertThat(gamma.get("value").asText()).isEqualTo("third with: colon");
        assertThat(gamma.get("partition").asInt()).isEqualTo(BuiltInPartitioner.partitionForKey("gamma".getBytes(StandardCharsets.UTF_8), 3));
        assertThat(gamma.get("offset").isIntegralNumber()).isTrue();
        assertThat(gamma.get("timestamp").asLong()).isPositive();
        assertThat(gamma.get("timestampType").asText()).isEqualTo("CreateTime");
        assertThat(gamma.get("headers").toString()).isEqualTo("[{\"key\":\"app\",\"value\":\"cli\"},{\"key\":\"trace\",\"value\":\"42\"}]");
    }

    @Test
    void recordsWithoutKeyPrintNullKeys() throws Exception {
        createTopic("unkeyed", 1);
        produce("one\ntwo\n", "unkeyed");

        CliRunner.Result keyValues = consume("unkeyed", "--from-beginning", "-n", "2", "--timeout-ms", IDLE_TIMEOUT_MS, "--format", "key-value");
        assertThat(keyValues.lines()).containsExactly("null\tone", "null\ttwo");
        List<JsonNode> records = consumeJson("unkeyed", 2, "--from-beginning");
        assertThat(records.get(0).get("key").isNull()).isTrue();
        assertThat(records.get(0).get("headers").size()).isZero();
        assertThat(records).extracting(node -> node.get("offset").asLong()).containsExactly(0L, 1L);
    }

    @Test
    void keyedRecordsGoWhereKafkasDefaultPartitionerPutsThem() throws Exception {
        createTopic("hashed", 5);
        List<String> keys = IntStream.range(0, 40).mapToObj(i -> "key-" + i).toList();
        String input = keys.stream().map(key -> key + "=v").collect(Collectors.joining("\n"));

        assertThat(produce(input, "hashed", "--key-separator", "=").exitCode()).isZero();

        for (JsonNode record : consumeJson("hashed", keys.size(), "--from-beginning")) {
            byte[] key = record.get("key").asText().getBytes(StandardCharsets.UTF_8);
            assertThat(record.get("partition").asInt()).as(record.toString()).isEqualTo(BuiltInPartitioner.partitionForKey(key, 5));
        }
    }

    @Test
    void unkeyedRecordsSpreadOverPartitionsInStickyBatches() throws Exception {
        createTopic("sticky", 4);
        String input = IntStream.range(0, 400).mapToObj(i -> "value-" + i).collect(Collectors.joining("\n"));

        assertThat(produce(input, "sticky", "--batch-size", "512").exitCode()).isZero();

        Set<Integer> partitions = new HashSet<>();
        for (JsonNode record : consumeJson("sticky", 400, "--from-beginning")) {
            partitions.add(record.get("partition").asInt());
        }
        assertThat(partitions).hasSizeGreaterThan(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"none", "gzip", "snappy", "lz4", "zstd"})
    void everyCompressionRoundTripsAndKafkasConsumerReadsIt(String compression) throws Exception {
        String topic = "compressed-" + compression;
        createTopic(topic, 2);
        List<String> lines = IntStream.range(0, 50).mapToObj(i -> "k" + i + "|value number " + i).toList();

        CliRunner.Result produced = produce(String.join("\n", lines), topic, "--key-separator", "|", "--compression", compression,
            "--header", "origin=strata");
        assertThat(produced.exitCode()).as(produced.toString()).isZero();

        CliRunner.Result consumed = consume(topic, "--from-beginning", "-n", "50", "--timeout-ms", IDLE_TIMEOUT_MS, "--format", "key-value");
        assertThat(consumed.lines()).containsExactlyInAnyOrderElementsOf(lines.stream().map(line -> line.replace('|', '\t')).toList());

        List<ConsumerRecord<String, String>> kafkaRecords = readWithKafkaConsumer(topic, 2, 50);
        for (ConsumerRecord<String, String> record : kafkaRecords) {
            assertThat(record.value()).isEqualTo("value number " + record.key().substring(1));
            assertThat(new String(record.headers().lastHeader("origin").value(), StandardCharsets.UTF_8)).isEqualTo("strata");
            assertThat(record.partition()).isEqualTo(BuiltInPartitioner.partitionForKey(record.key().getBytes(StandardCharsets.UTF_8), 2));
        }
    }

    @Test
    void whatKafkasProducerWritesIsReadByStrataConsume() throws Exception {
        createTopic("from-kafka", 1);
        Properties properties = new Properties();
        properties.put("bootstrap.servers", BROKER.bootstrap());
        properties.put("key.serializer", StringSerializer.class.getName());
        properties.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            RecordHeaders headers = new RecordHeaders();
            headers.add("h", "x".getBytes(StandardCharsets.UTF_8));
            headers.add("h", "y".getBytes(StandardCharsets.UTF_8));
            producer.send(new ProducerRecord<>("from-kafka", 0, 1_700_000_000_000L, "key \"quoted\"", "line\nbreak", headers)).get();
            producer.send(new ProducerRecord<String, String>("from-kafka", 0, 1_700_000_000_001L, null, null)).get();
        }

        List<JsonNode> records = consumeJson("from-kafka", 2, "--from-beginning");

        assertThat(records.get(0).get("key").asText()).isEqualTo("key \"quoted\"");
        assertThat(records.get(0).get("value").asText()).isEqualTo("line\nbreak");
        assertThat(records.get(0).get("timestamp").asLong()).isEqualTo(1_700_000_000_000L);
        assertThat(records.get(0).get("headers").toString()).isEqualTo("[{\"key\":\"h\",\"value\":\"x\"},{\"key\":\"h\",\"value\":\"y\"}]");
        assertThat(records.get(1).get("key").isNull()).isTrue();
        assertThat(records.get(1).get("value").isNull()).isTrue();
        CliRunner.Result values = consume("from-kafka", "--from-beginning", "-n", "2", "--timeout-ms", IDLE_TIMEOUT_MS);
        assertThat(values.out()).isEqualTo("line\nbreak\nnull\n");
    }

    @Test
    void consumeStartsAtAGivenOffsetOfAPartition() {
        createTopic("offsets", 2);
        String input = IntStream.rangeClosed(1, 10).mapToObj(i -> "line-" + i).collect(Collectors.joining("\n"));
        assertThat(produce(input, "offsets", "--partition", "1").exitCode()).isZero();

        CliRunner.Result result = consume("offsets", "--partition", "1", "--offset", "7", "-n", "3", "--timeout-ms", IDLE_TIMEOUT_MS);

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.lines()).containsExactly("line-8", "line-9", "line-10");
    }

    @Test
    void consumeOfAnOtherwiseEmptyPartitionEndsAtTheIdleTimeout() {
        createTopic("quiet", 2);
        assertThat(produce("only\n", "quiet", "--partition", "1").exitCode()).isZero();

        CliRunner.Result result = consume("quiet", "--partition", "0", "--from-beginning", "--timeout-ms", "300");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.out()).isEmpty();
        assertThat(result.err()).contains("strata: consumed 0 records");
    }

    @Test
    void consumeByDefaultStartsAtTheEnd() {
        createTopic("tail", 1);
        assertThat(produce("old\n", "tail").exitCode()).isZero();

        CliRunner.Result result = consume("tail", "--timeout-ms", "300");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.out()).isEmpty();
    }

    @Test
    void consumeFromATimestampSkipsOlderRecords() throws Exception {
        createTopic("timed", 3);
        assertThat(produce("k1:old-1\nk2:old-2\nk3:old-3\n", "timed", "--key-separator", ":").exitCode()).isZero();
        long newestOld = consumeJson("timed", 3, "--from-beginning").stream().mapToLong(node -> node.get("timestamp").asLong()).max().orElseThrow();
        long cutoff = newestOld + 1;
        awaitClockAtLeast(cutoff);
        assertThat(produce("k1:new-1\nk2:new-2\nk3:new-3\nk4:new-4\n", "timed", "--key-separator", ":").exitCode()).isZero();

        CliRunner.Result result = consume("timed", "--from-timestamp", String.valueOf(cutoff), "-n", "4", "--timeout-ms", IDLE_TIMEOUT_MS);

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.lines()).containsExactlyInAnyOrder("new-1", "new-2", "new-3", "new-4");
    }

    /** Waits until the wall clock, which stamps produced records, reaches {@code timestampMs} (a few milliseconds at most). */
    private static void awaitClockAtLeast(long timestampMs) {
        long deadlineNanos = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.currentTimeMillis() < timestampMs) {
            assertThat(System.nanoTime()).as("wall clock stuck below " + timestampMs).isLessThan(deadlineNanos);
            Thread.onSpinWait();
        }
    }

    @Test
    void readCommittedReadsNonTransactionalRecords() {
        createTopic("committed", 1);
        assertThat(produce("a\nb\n", "committed").exitCode()).isZero();

        CliRunner.Result result = consume("committed", "--from-beginning", "--isolation", "read_committed", "-n", "2",
            "--timeout-ms", IDLE_TIMEOUT_MS);

        assertThat(result.lines()).containsExactly("a", "b");
    }

    @Test
    void idempotentProduceBatchesLinesWithProducerIdAndSequences() {
        createTopic("idempotent", 1);
        String input = IntStream.range(0, 100).mapToObj(i -> "line " + i).collect(Collectors.joining("\n"));

        assertThat(produce(input, "idempotent").exitCode()).isZero();
        assertThat(produce("one more\n", "idempotent").exitCode()).isZero();

        List<DefaultRecordBatch> batches = fetchBatches("idempotent", 0);
        assertThat(batches).hasSize(2);
        DefaultRecordBatch first = batches.get(0);
        assertThat(first.recordCount()).isEqualTo(100);
        assertThat(first.hasProducerId()).isTrue();
        assertThat(first.baseSequence()).isZero();
        assertThat(first.isTransactional()).isFalse();
        DefaultRecordBatch second = batches.get(1);
        assertThat(second.producerId()).as("each run is a new producer").isNotEqualTo(first.producerId());
        assertThat(second.baseSequence()).isZero();
    }

    @Test
    void fullBatchesAreClosedAndCarryConsecutiveSequences() {
        createTopic("many-batches", 1);
        String input = IntStream.range(0, 200).mapToObj(i -> "a somewhat longer line number " + i).collect(Collectors.joining("\n"));

        assertThat(produce(input, "many-batches", "--batch-size", "1024", "--compression", "lz4").exitCode()).isZero();

        List<DefaultRecordBatch> batches = fetchBatches("many-batches", 0);
        assertThat(batches).hasSizeGreaterThan(5);
        int expectedSequence = 0;
        long records = 0;
        for (DefaultRecordBatch batch : batches) {
            assertThat(batch.producerId()).isEqualTo(batches.get(0).producerId());
            assertThat(batch.baseSequence()).isEqualTo(expectedSequence);
            expectedSequence += batch.recordCount();
            records += batch.recordCount();
        }
        assertThat(records).isEqualTo(200);
    }

    @Test
    void withoutIdempotenceBatchesHaveNoProducerId() {
        createTopic("plain", 1);

        assertThat(produce("x\ny\n", "plain", "--no-idempotence").exitCode()).isZero();

        assertThat(fetchBatches("plain", 0)).singleElement().satisfies(batch -> {
            assertThat(batch.hasProducerId()).isFalse();
            assertThat(batch.recordCount()).isEqualTo(2);
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "1", "all"})
    void everyAcksSettingDelivers(String acks) {
        String topic = "acks-" + acks;
        createTopic(topic, 1);

        CliRunner.Result produced = produce("p\nq\n", topic, "--acks", acks);

        assertThat(produced.exitCode()).as(produced.toString()).isZero();
        assertThat(produced.err()).contains(acks.equals("0") ? "sent 2 records" : "produced 2 records");
        // acks=0 gets no answer, so the records may land a moment after produce returns; consume waits for them.
        CliRunner.Result consumed = consume(topic, "--from-beginning", "-n", "2", "--timeout-ms", IDLE_TIMEOUT_MS);
        assertThat(consumed.lines()).containsExactly("p", "q");
    }

    @Test
    void produceToAMissingPartitionFails() {
        createTopic("narrow", 2);

        CliRunner.Result result = produce("x\n", "narrow", "--partition", "9");

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.err()).contains("strata: topic narrow has no partition 9 (it has 2 partitions)");
    }

    @Test
    void aLineWithoutTheKeySeparatorFailsAfterSendingTheLinesBeforeIt() {
        createTopic("separated", 1);

        CliRunner.Result result = produce("k:v\nno separator here\nk:w\n", "separated", "--key-separator", ":");

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.err()).contains("strata: line 2 has no key separator ':': no separator here");
        assertThat(result.err()).contains("produced 1 record to 1 partition");
        CliRunner.Result consumed = consume("separated", "--from-beginning", "--timeout-ms", "300", "--format", "key-value");
        assertThat(consumed.lines()).containsExactly("k\tv");
    }

    @Test
    void consumeOfAnUnknownTopicFailsWithoutCreatingIt() {
        CliRunner.Result result = consume("not-there", "--timeout-ms", "300");

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.err()).doesNotContain("consumed");
        assertThat(result.err()).contains("strata: cannot find topic not-there: UNKNOWN_TOPIC_OR_PARTITION: This server does not host this topic-partition.");
        CliRunner.Result list = CliRunner.run("topics", "list", "--bootstrap-server", BROKER.bootstrap());
        assertThat(list.lines()).doesNotContain("not-there");
    }

    @Test
    void consumeOfAMissingPartitionFails() {
        createTopic("one-partition", 1);

        CliRunner.Result result = consume("one-partition", "--partition", "3", "--timeout-ms", "300");

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.err()).contains("strata: topic one-partition has no partition 3 (it has 1 partition)");
    }

    private static List<ConsumerRecord<String, String>> readWithKafkaConsumer(String topic, int partitions, int count) {
        Properties properties = new Properties();
        properties.put("bootstrap.servers", BROKER.bootstrap());
        properties.put("key.deserializer", StringDeserializer.class.getName());
        properties.put("value.deserializer", StringDeserializer.class.getName());
        properties.put("enable.auto.commit", "false");
        List<TopicPartition> assignment = IntStream.range(0, partitions).mapToObj(p -> new TopicPartition(topic, p)).toList();
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
            consumer.assign(assignment);
            consumer.seekToBeginning(assignment);
            long deadlineNanos = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (records.size() < count && System.nanoTime() < deadlineNanos) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        assertThat(records).hasSize(count);
        return records;
    }

    /** Every batch of a partition, read with a raw Fetch so producer ids and sequences can be checked. */
    private static List<DefaultRecordBatch> fetchBatches(String topicName, int partition) {
        try (ClusterClient client = BROKER.client()) {
            TopicInfo topic = client.topic(topicName, false);
            KafkaConnection connection = client.connection(topic.partition(partition).leaderId());
            short version = connection.versions().version(ApiMessageType.FETCH);
            FetchRequestData.FetchTopic fetchTopic = new FetchRequestData.FetchTopic();
            if (version >= 13) {
                fetchTopic.setTopicId(topic.topicId());
            } else {
                fetchTopic.setTopic(topicName);
            }
            fetchTopic.partitions().add(new FetchRequestData.FetchPartition().setPartition(partition).setFetchOffset(0)
                .setPartitionMaxBytes(1 << 20));
            FetchRequestData request = new FetchRequestData().setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1 << 20)
                .setSessionEpoch(-1).setTopics(new ArrayList<>(List.of(fetchTopic)));
            FetchResponseData response = connection.send(request, FetchResponseData.class);
            FetchResponseData.PartitionData data = response.responses().get(0).partitions().get(0);
            assertThat(data.errorCode()).isZero();
            List<DefaultRecordBatch> batches = new ArrayList<>();
            for (RecordBatch batch : ((MemoryRecords) data.records()).batches()) {
                batches.add((DefaultRecordBatch) batch);
            }
            return batches;
        }
    }
}
