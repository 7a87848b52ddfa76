package io.strata.it.compat;

import io.strata.common.Time;
import io.strata.it.compat.CompatManifest.Transaction;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;

import static io.strata.it.compat.ClusterSnapshot.TIMEOUT_MS;
import static io.strata.it.compat.ClusterSnapshot.header;

/**
 * Writes a data-directory fixture with this checkout's server: starts it on a fresh directory,
 * fills it through kafka-clients with every kind of state a node keeps (below), shuts it down
 * cleanly, and writes {@code strata-<commit>-datadir.tar.gz} and {@code strata-<commit>-manifest.json}
 * into the output directory. See {@code it/src/test/resources/compat/README.md} for when (and when
 * not) to run it.
 *
 * <p>Usage: {@code MakeCompatFixture <output dir> <short commit of the server code>}.
 *
 * <p>Contents: topics with 1, 2 and 3 partitions, one compacted, topic config overrides at
 * creation and through IncrementalAlterConfigs; records with keys, null keys, headers, a
 * tombstone, in batches compressed with none, gzip, snappy, lz4 and zstd; a partition rolled over
 * several small segments with its log start moved by DeleteRecords; an idempotent producer's
 * batches; a transactional id with a committed transaction (with a transactional offset commit),
 * an aborted one and a second committed one; a classic and a consumer (KIP-848) group with
 * committed offsets and metadata; a dynamic per-broker and a cluster-wide broker config.
 */
public final class MakeCompatFixture {
    static final int NODE_ID = 1;
    static final String CLUSTER_ID = "U3RyYXRhQ29tcGF0Rml4dA";
    /**
     * The server properties the fixture is written with, and that a server reading it uses.
     * Small internal topics keep the fixture small; the cleaner is off so that what the manifest
     * lists is exactly what a later start finds (compaction would legitimately remove records).
     */
    static final Map<String, String> SERVER_PROPERTIES = Map.of(
        "node.id", Integer.toString(NODE_ID),
        "cluster.id", CLUSTER_ID,
        "offsets.topic.num.partitions", "3",
        "transaction.state.log.num.partitions", "2",
        "group.initial.rebalance.delay.ms", "0",
        "log.cleaner.enable", "false",
        "num.io.threads", "2",
        "num.network.threads", "1");

    static final String TRANSACTIONAL_ID = "compat-txn";
    static final String CLASSIC_GROUP = "compat-classic";
    static final String CONSUMER_GROUP = "compat-consumer";
    static final String TRANSACTIONAL_GROUP = "compat-txn-group";

    private final String bootstrap;
    private final Admin admin;
    private long nextTimestampMs;

    private MakeCompatFixture(String bootstrap, Admin admin, long firstTimestampMs) {
        this.bootstrap = bootstrap;
        this.admin = admin;
        this.nextTimestampMs = firstTimestampMs;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: MakeCompatFixture <output dir> <short commit>, got " + List.of(args));
        }
        Path outputDir = Path.of(args[0]);
        String commit = args[1];
        Path dataDir = Files.createTempDirectory("strata-compat-fixture");
        try {
            CompatManifest manifest = generate(dataDir, commit);
            Files.createDirectories(outputDir);
            Path archive = outputDir.resolve("strata-" + commit + "-datadir.tar.gz");
            pack(dataDir, archive);
            manifest.write(outputDir.resolve("strata-" + commit + "-manifest.json"));
            System.out.println("wrote " + archive + " (" + Files.size(archive) + " bytes)");
        } finally {
            deleteRecursively(dataDir);
        }
    }

    static CompatManifest generate(Path dataDir, String commit) throws Exception {
        try (FixtureServer server = new FixtureServer(dataDir, SERVER_PROPERTIES, Time.SYSTEM);
             Admin admin = Admin.create(ClusterSnapshot.clientProperties(server.bootstrap()))) {
            MakeCompatFixture fixture = new MakeCompatFixture(server.bootstrap(), admin, Time.SYSTEM.milliseconds());
            fixture.createTopics();
            fixture.writeRecords();
            fixture.trimLogStart();
            fixture.writeIdempotent();
            Transaction transaction = fixture.writeTransactions();
            fixture.commitGroupOffsets();
            fixture.alterConfigs();
            long writtenAtMs = Time.SYSTEM.milliseconds();
            CompatManifest manifest = new CompatManifest(commit, writtenAtMs, admin.describeCluster().clusterId().get(TIMEOUT_MS,
                TimeUnit.MILLISECONDS), NODE_ID, new TreeMap<>(SERVER_PROPERTIES), ClusterSnapshot.topics(admin, server.bootstrap()),
                ClusterSnapshot.groups(admin, List.of(CLASSIC_GROUP, CONSUMER_GROUP, TRANSACTIONAL_GROUP)),
                List.of(ClusterSnapshot.transaction(admin, TRANSACTIONAL_ID, transaction.committedRecords(), transaction.abortedRecords())),
                ClusterSnapshot.brokerConfigs(admin, NODE_ID));
            checkCoverage(manifest);
            return manifest;
        }
    }

    private void createTopics() throws Exception {
        admin.createTopics(List.of(
            new NewTopic("orders", 3, (short) 1),
            new NewTopic("events", 2, (short) 1).configs(Map.of("max.message.bytes", "524288", "segment.bytes", "4096")),
            new NewTopic("compacted", 2, (short) 1).configs(Map.of("cleanup.policy", "compact")),
            new NewTopic("trimmed", 1, (short) 1).configs(Map.of("segment.bytes", "1024")),
            new NewTopic("idempotent", 1, (short) 1),
            new NewTopic("txn", 2, (short) 1))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    private KafkaProducer<String, String> producer(Map<String, String> overrides) {
        Properties properties = ClusterSnapshot.clientProperties(bootstrap);
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.LINGER_MS_CONFIG, "50");
        properties.putAll(overrides);
        return new KafkaProducer<>(properties);
    }

    /** Sends a batch and waits for every acknowledgement; explicit timestamps keep them in order. */
    private List<RecordMetadata> sendAll(KafkaProducer<String, String> producer, List<ProducerRecord<String, String>> records) throws Exception {
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        for (ProducerRecord<String, String> record : records) {
            futures.add(producer.send(record));
        }
        producer.flush();
        List<RecordMetadata> acknowledged = new ArrayList<>();
        for (Future<RecordMetadata> future : futures) {
            acknowledged.add(future.get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
        }
        return acknowledged;
    }

    private ProducerRecord<String, String> record(String topic, int partition, String key, String value, Header... headers) {
        return new ProducerRecord<>(topic, partition, nextTimestampMs++, key, value, List.of(headers));
    }

    private void writeRecords() throws Exception {
        String[] compressions = {"none", "gzip", "snappy", "lz4", "zstd"};
        for (int c = 0; c < compressions.length; c++) {
            try (KafkaProducer<String, String> producer = producer(Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, compressions[c],
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false"))) {
                List<ProducerRecord<String, String>> batch = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    int partition = (c + i) % 3;
                    batch.add(record("orders", partition, "order-" + c + "-" + i, "{\"compression\":\"" + compressions[c] + "\",\"n\":" + i
                        + ",\"pad\":\"" + "x".repeat(40 * i) + "\"}", header("source", "compat-" + compressions[c]), header("n", Integer.toString(i))));
                }
                batch.add(record("events", c % 2, null, "event without a key " + c));
                batch.add(record("events", (c + 1) % 2, "event-" + c, "event " + compressions[c] + " " + "y".repeat(300),
                    header("dup", "first"), header("dup", "second")));
                sendAll(producer, batch);
            }
        }
        try (KafkaProducer<String, String> producer = producer(Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"))) {
            for (int round = 0; round < 3; round++) {
                List<ProducerRecord<String, String>> batch = new ArrayList<>();
                for (int k = 0; k < 5; k++) {
                    batch.add(record("compacted", k % 2, "key-" + k, "value-" + k + "-round-" + round));
                }
                sendAll(producer, batch);
            }
            sendAll(producer, List.of(record("compacted", 0, "key-4", null)));
            List<ProducerRecord<String, String>> trimmed = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                trimmed.add(record("trimmed", 0, "t-" + i, "trimmed record " + i + " " + "z".repeat(60)));
            }
            // One by one: small batches, so that the 1 KiB segments roll several times.
            for (ProducerRecord<String, String> record : trimmed) {
                sendAll(producer, List.of(record));
            }
        }
    }

    private void trimLogStart() throws Exception {
        TopicPartition trimmed = new TopicPartition("trimmed", 0);
        admin.deleteRecords(Map.of(trimmed, RecordsToDelete.beforeOffset(17))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    private void writeIdempotent() throws Exception {
        try (KafkaProducer<String, String> producer = producer(Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
            ProducerConfig.COMPRESSION_TYPE_CONFIG, "gzip"))) {
            for (int batch = 0; batch < 3; batch++) {
                List<ProducerRecord<String, String>> records = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    records.add(record("idempotent", 0, "idem-" + batch, "idempotent batch " + batch + " record " + i));
                }
                sendAll(producer, records);
            }
        }
    }

    /** Committed (with a transactional offset commit), aborted, committed again; returns which records each wrote. */
    private Transaction writeTransactions() throws Exception {
        List<String> committed = new ArrayList<>();
        List<String> aborted = new ArrayList<>();
        try (KafkaProducer<String, String> producer = producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TRANSACTIONAL_ID))) {
            producer.initTransactions();
            producer.beginTransaction();
            List<RecordMetadata> first = sendAll(producer, List.of(record("txn", 0, "txn-a", "committed 1"), record("txn", 0, "txn-b", "committed 2"),
                record("txn", 1, "txn-c", "committed 3", header("txn", "first")), record("txn", 1, "txn-d", "committed 4"),
                record("txn", 0, "txn-e", "committed 5")));
            producer.sendOffsetsToTransaction(Map.of(new TopicPartition("orders", 1), new OffsetAndMetadata(3, "txn-commit")),
                new ConsumerGroupMetadata(TRANSACTIONAL_GROUP));
            producer.commitTransaction();
            first.forEach(metadata -> committed.add(metadata.topic() + "-" + metadata.partition() + "@" + metadata.offset()));

            producer.beginTransaction();
            List<RecordMetadata> second = sendAll(producer, List.of(record("txn", 0, "txn-x", "aborted 1"), record("txn", 1, "txn-y", "aborted 2"),
                record("txn", 0, "txn-z", "aborted 3")));
            producer.abortTransaction();
            second.forEach(metadata -> aborted.add(metadata.topic() + "-" + metadata.partition() + "@" + metadata.offset()));

            producer.beginTransaction();
            List<RecordMetadata> third = sendAll(producer, List.of(record("txn", 0, "txn-f", "committed 6"), record("txn", 1, "txn-g", "committed 7")));
            producer.commitTransaction();
            third.forEach(metadata -> committed.add(metadata.topic() + "-" + metadata.partition() + "@" + metadata.offset()));
        }
        return new Transaction(TRANSACTIONAL_ID, -1, -1, null, committed, aborted);
    }

    private void commitGroupOffsets() throws Exception {
        commitAsMember(CLASSIC_GROUP, "classic", List.of("orders", "events"), Map.of(
            new TopicPartition("orders", 0), new OffsetAndMetadata(2, "classic orders-0"),
            new TopicPartition("orders", 1), new OffsetAndMetadata(4, ""),
            new TopicPartition("orders", 2), new OffsetAndMetadata(1, "classic orders-2"),
            new TopicPartition("events", 0), new OffsetAndMetadata(3, "classic events-0")));
        commitAsMember(CONSUMER_GROUP, "consumer", List.of("orders", "compacted"), Map.of(
            new TopicPartition("orders", 0), new OffsetAndMetadata(5, "consumer orders-0"),
            new TopicPartition("orders", 2), new OffsetAndMetadata(7, ""),
            new TopicPartition("compacted", 0), new OffsetAndMetadata(4, "consumer compacted-0"),
            new TopicPartition("compacted", 1), new OffsetAndMetadata(6, "consumer compacted-1")));
    }

    /** Joins {@code groupId} with {@code protocol}, waits until every subscribed partition is assigned, commits {@code offsets}, leaves. */
    private void commitAsMember(String groupId, String protocol, List<String> topics, Map<TopicPartition, OffsetAndMetadata> offsets)
        throws Exception {
        int partitionCount = 0;
        for (var description : admin.describeTopics(topics).allTopicNames().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).values()) {
            partitionCount += description.partitions().size();
        }
        Properties properties = ClusterSnapshot.clientProperties(bootstrap);
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        properties.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
            consumer.subscribe(topics);
            long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
            while (consumer.assignment().size() < partitionCount) {
                if (System.nanoTime() > deadlineNanos) {
                    throw new IllegalStateException(groupId + ": assigned " + consumer.assignment() + " of " + partitionCount + " partitions");
                }
                consumer.poll(Duration.ofMillis(100));
            }
            consumer.commitSync(offsets);
        }
    }

    private void alterConfigs() throws Exception {
        admin.incrementalAlterConfigs(Map.of(
            new ConfigResource(ConfigResource.Type.TOPIC, "orders"),
            List.of(new AlterConfigOp(new ConfigEntry("retention.ms", "1209600000"), AlterConfigOp.OpType.SET)),
            new ConfigResource(ConfigResource.Type.TOPIC, "events"),
            List.of(new AlterConfigOp(new ConfigEntry("max.message.bytes", "262144"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("message.timestamp.type", "CreateTime"), AlterConfigOp.OpType.SET)),
            new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(NODE_ID)),
            List.of(new AlterConfigOp(new ConfigEntry("max.connections", "1000"), AlterConfigOp.OpType.SET)),
            new ConfigResource(ConfigResource.Type.BROKER, ""),
            List.of(new AlterConfigOp(new ConfigEntry("message.max.bytes", "2097152"), AlterConfigOp.OpType.SET))))
            .all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    /** The fixture must hold every kind of state it promises, or it protects nothing. */
    private static void checkCoverage(CompatManifest manifest) {
        var trimmed = manifest.topics().stream().filter(topic -> topic.name().equals("trimmed")).findFirst().orElseThrow().partitions().get(0);
        check(trimmed.logStartOffset() == 17, "trimmed-0 log start offset is 17: " + trimmed.logStartOffset());
        check(manifest.groups().stream().map(CompatManifest.Group::type).toList().containsAll(List.of("CLASSIC", "CONSUMER")),
            "both group types: " + manifest.groups());
        check(manifest.groups().stream().allMatch(group -> !group.offsets().isEmpty()), "every group has offsets: " + manifest.groups());
        check(manifest.topics().stream().flatMap(topic -> topic.partitions().stream()).flatMap(partition -> partition.records().stream())
            .filter(CompatManifest.RecordEntry::aborted).count() == 3, "three aborted records");
        var idempotent = manifest.topics().stream().filter(topic -> topic.name().equals("idempotent")).findFirst().orElseThrow().partitions().get(0);
        check(idempotent.producers().size() == 1 && idempotent.producers().get(0).lastSequence() == 11,
            "idempotent-0 has one producer at sequence 11: " + idempotent.producers());
        check(manifest.brokerConfigs().values().stream().allMatch(configs -> !configs.isEmpty()), "dynamic broker configs: " + manifest.brokerConfigs());
        check(manifest.transactions().get(0).state().equals("COMPLETE_COMMIT"), "transaction state: " + manifest.transactions());
    }

    private static void check(boolean condition, String what) {
        if (!condition) {
            throw new IllegalStateException("fixture does not hold what it promises: " + what);
        }
    }

    /** A gzipped ustar archive of {@code dataDir}'s contents, sorted and with fixed owners, by the system's tar. */
    static void pack(Path dataDir, Path archive) throws IOException, InterruptedException {
        Process tar = new ProcessBuilder("tar", "--format=ustar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner",
            "-C", dataDir.toString(), "-cf", "-", ".").redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (InputStream in = tar.getInputStream(); OutputStream out = new GZIPOutputStream(Files.newOutputStream(archive))) {
            in.transferTo(out);
        }
        if (!tar.waitFor(60, TimeUnit.SECONDS) || tar.exitValue() != 0) {
            throw new IOException("tar failed for " + dataDir);
        }
    }

    static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
