package io.strata.it.compat;

import io.strata.common.Time;
import io.strata.it.compat.CompatManifest.Partition;
import io.strata.it.compat.CompatManifest.RecordEntry;
import io.strata.it.compat.CompatManifest.Topic;
import io.strata.it.compat.CompatManifest.Transaction;
import io.strata.storage.LogManager;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static io.strata.it.compat.ClusterSnapshot.TIMEOUT_MS;
import static io.strata.it.compat.ClusterSnapshot.crc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A data directory written by an earlier release (a fixture in {@code src/test/resources/compat},
 * made by {@link MakeCompatFixture}) starts under the current code with everything its manifest
 * lists: topics with their ids and configs, log start and end offsets, every record by checksum,
 * transactions (aborted data invisible to read_committed, visible to read_uncommitted), both
 * groups' committed offsets, the transactional id's state and the dynamic broker configs; and the
 * node keeps writing on it. Every fixture found there runs; old ones are never replaced.
 *
 * <p>The server runs on a clock that starts just after the fixture was written. Committed
 * offsets, producer ids, transactional ids and retention all expire by wall-clock age (as in
 * Kafka); a fixture is months old by the time it matters, and this test is about reading old
 * data, not about expiry.
 */
class DataDirectoryCompatibilityTest {
    private static final String MANIFEST_SUFFIX = "-manifest.json";
    private static final String ARCHIVE_SUFFIX = "-datadir.tar.gz";

    @TempDir
    Path tempDir;

    static Stream<String> fixtures() throws IOException, URISyntaxException {
        Path directory = Path.of(DataDirectoryCompatibilityTest.class.getResource("/compat").toURI());
        try (Stream<Path> files = Files.list(directory)) {
            List<String> names = files.map(path -> path.getFileName().toString()).filter(name -> name.endsWith(MANIFEST_SUFFIX))
                .map(name -> name.substring(0, name.length() - MANIFEST_SUFFIX.length())).sorted().toList();
            assertThat(names).as("fixtures in " + directory).isNotEmpty();
            return names.stream();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void everythingTheOldReleaseWroteIsServedAfterItsCleanShutdown(String fixture) throws Exception {
        CompatManifest manifest = manifest(fixture);
        Path dataDir = unpack(fixture, tempDir.resolve("data"));
        Time clock = clockStartingJustAfter(manifest);
        try (FixtureServer server = new FixtureServer(dataDir, manifest.serverProperties(), clock)) {
            assertThat(server.server().isRecoveringFromUncleanShutdown()).isFalse();
            verify(server, manifest, Map.of(), true);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void everythingTheOldReleaseWroteSurvivesRecoveryFromItsFirstOffsetWithoutTheCleanShutdownMarker(String fixture) throws Exception {
        CompatManifest manifest = manifest(fixture);
        Path dataDir = unpack(fixture, tempDir.resolve("data"));
        Files.delete(dataDir.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        resetRecoveryPoints(dataDir);
        try (FixtureServer server = new FixtureServer(dataDir, manifest.serverProperties(), clockStartingJustAfter(manifest))) {
            assertThat(server.server().isRecoveringFromUncleanShutdown()).isTrue();
            verify(server, manifest, Map.of(), true);
        }
    }

    /**
     * Writes on the old directory (a plain record, a new transaction of the old transactional id,
     * an idempotent batch), then starts again twice: cleanly on it, and recovering on a copy
     * without the clean-shutdown marker. Both keep the old data and the new.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void theServerKeepsWritingOnTheOldDirectoryAndKeepsEverythingAcrossCleanAndRecoveringRestarts(String fixture) throws Exception {
        CompatManifest manifest = manifest(fixture);
        Path dataDir = unpack(fixture, tempDir.resolve("data"));
        Time clock = clockStartingJustAfter(manifest);
        Map<TopicPartition, Written> written;
        try (FixtureServer server = new FixtureServer(dataDir, manifest.serverProperties(), clock)) {
            verify(server, manifest, Map.of(), true);
            written = writeMore(server, manifest, clock);
            verify(server, manifest, written, false);
        }
        Path recoveringCopy = tempDir.resolve("recovering");
        copyRecursively(dataDir, recoveringCopy);
        Files.delete(recoveringCopy.resolve(LogManager.CLEAN_SHUTDOWN_FILE));

        try (FixtureServer server = new FixtureServer(dataDir, manifest.serverProperties(), clock)) {
            assertThat(server.server().isRecoveringFromUncleanShutdown()).isFalse();
            verify(server, manifest, written, false);
        }
        try (FixtureServer server = new FixtureServer(recoveringCopy, manifest.serverProperties(), clock)) {
            assertThat(server.server().isRecoveringFromUncleanShutdown()).isTrue();
            verify(server, manifest, written, false);
        }
    }

    /** Records this test added to a partition after the fixture's end offset, and how many offsets they (and their markers) took. */
    private record Written(List<RecordEntry> records, long offsets) {
    }

    private static CompatManifest manifest(String fixture) throws IOException, URISyntaxException {
        CompatManifest manifest = CompatManifest.read(Path.of(DataDirectoryCompatibilityTest.class.getResource("/compat/" + fixture + MANIFEST_SUFFIX).toURI()));
        assertThat(fixture).isEqualTo("strata-" + manifest.strataCommit());
        return manifest;
    }

    private static Path unpack(String fixture, Path target) throws IOException {
        try (InputStream archive = DataDirectoryCompatibilityTest.class.getResourceAsStream("/compat/" + fixture + ARCHIVE_SUFFIX)) {
            assertThat(archive).as(fixture + ARCHIVE_SUFFIX).isNotNull();
            TarArchive.unpack(archive, target);
        }
        assertThat(target.resolve(LogManager.CLEAN_SHUTDOWN_FILE)).as("the fixture was shut down cleanly").exists();
        return target;
    }

    /**
     * A crash image older than any flush: every recovery point back to 0 (the old release's
     * checkpoint format: a version line, a count line, then "topic partition offset" lines), so
     * that recovery reads every segment again and rebuilds their indexes and producer state.
     */
    private static void resetRecoveryPoints(Path dataDir) throws IOException {
        Path checkpoint = dataDir.resolve("recovery-point-offset-checkpoint");
        List<String> lines = Files.readAllLines(checkpoint, StandardCharsets.UTF_8);
        assertThat(lines).as(checkpoint.toString()).hasSizeGreaterThan(2);
        List<String> reset = new ArrayList<>(lines.subList(0, 2));
        for (String line : lines.subList(2, lines.size())) {
            reset.add(line.substring(0, line.lastIndexOf(' ')) + " 0");
        }
        assertThat(reset).as("recovery points moved back").isNotEqualTo(lines);
        Files.write(checkpoint, reset, StandardCharsets.UTF_8);
    }

    /** The wall clock of the servers in one test: starts one second after the fixture's last write, then runs at real speed. */
    private static Time clockStartingJustAfter(CompatManifest manifest) {
        long behindMs = Time.SYSTEM.milliseconds() - (manifest.writtenAtMs() + 1_000);
        return new Time() {
            @Override
            public long milliseconds() {
                return Time.SYSTEM.milliseconds() - behindMs;
            }

            @Override
            public long nanoseconds() {
                return Time.SYSTEM.nanoseconds();
            }

            @Override
            public void sleep(long ms) throws InterruptedException {
                Time.SYSTEM.sleep(ms);
            }
        };
    }

    private static void verify(FixtureServer server, CompatManifest manifest, Map<TopicPartition, Written> written, boolean pristine)
        throws Exception {
        try (Admin admin = Admin.create(ClusterSnapshot.clientProperties(server.bootstrap()))) {
            assertThat(admin.describeCluster().clusterId().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)).isEqualTo(manifest.clusterId());
            List<Topic> topics = ClusterSnapshot.topics(admin, server.bootstrap());
            assertThat(topics).extracting(Topic::name).containsExactlyElementsOf(manifest.topics().stream().map(Topic::name).toList());
            for (int t = 0; t < topics.size(); t++) {
                verifyTopic(topics.get(t), manifest.topics().get(t), written);
            }
            verifyTransactionRecords(manifest);
            assertThat(ClusterSnapshot.groups(admin, manifest.groups().stream().map(CompatManifest.Group::groupId).toList()))
                .as("groups").isEqualTo(manifest.groups());
            for (Transaction expected : manifest.transactions()) {
                TransactionDescription description = ClusterSnapshot.transaction(admin, expected.transactionalId());
                assertThat(description.producerId()).as(expected.transactionalId() + " producer id").isEqualTo(expected.producerId());
                assertThat(description.state().name()).as(expected.transactionalId() + " state").isEqualTo(expected.state());
                if (pristine) {
                    assertThat(description.producerEpoch()).as(expected.transactionalId() + " epoch").isEqualTo(expected.producerEpoch());
                } else {
                    assertThat(description.producerEpoch()).as(expected.transactionalId() + " epoch").isGreaterThan(expected.producerEpoch());
                }
            }
            assertThat(ClusterSnapshot.brokerConfigs(admin, manifest.nodeId())).as("dynamic broker configs").isEqualTo(manifest.brokerConfigs());
        }
    }

    private static void verifyTopic(Topic actual, Topic expected, Map<TopicPartition, Written> written) {
        assertThat(actual.topicId()).as(expected.name() + " topic id").isEqualTo(expected.topicId());
        assertThat(actual.configs()).as(expected.name() + " configs").isEqualTo(expected.configs());
        assertThat(actual.partitions()).as(expected.name() + " partitions").hasSameSizeAs(expected.partitions());
        for (int p = 0; p < expected.partitions().size(); p++) {
            Partition want = expected.partitions().get(p);
            Partition got = actual.partitions().get(p);
            String name = expected.name() + "-" + want.partition();
            Written added = written.getOrDefault(new TopicPartition(expected.name(), want.partition()), new Written(List.of(), 0));
            assertThat(got.logStartOffset()).as(name + " log start offset").isEqualTo(want.logStartOffset());
            assertThat(got.endOffset()).as(name + " end offset").isEqualTo(want.endOffset() + added.offsets());
            List<RecordEntry> expectedRecords = new ArrayList<>(want.records());
            expectedRecords.addAll(added.records());
            assertThat(got.records()).as(name + " records (read_uncommitted; aborted = absent from read_committed)").isEqualTo(expectedRecords);
            if (added.records().isEmpty()) {
                assertThat(got.producers()).as(name + " producers").isEqualTo(want.producers());
            } else {
                // Written to here: the fixture's producers are still known (a transactional one at a bumped epoch).
                assertThat(got.producers()).extracting(CompatManifest.Producer::producerId).as(name + " producer ids")
                    .containsAll(want.producers().stream().map(CompatManifest.Producer::producerId).toList());
            }
        }
    }

    /** The manifest's own consistency: what each transaction wrote is listed, flagged as the transaction ended. */
    private static void verifyTransactionRecords(CompatManifest manifest) {
        Map<String, Boolean> abortedByRecord = new HashMap<>();
        for (Topic topic : manifest.topics()) {
            for (Partition partition : topic.partitions()) {
                for (RecordEntry record : partition.records()) {
                    abortedByRecord.put(topic.name() + "-" + partition.partition() + "@" + record.offset(), record.aborted());
                }
            }
        }
        for (Transaction transaction : manifest.transactions()) {
            assertThat(transaction.committedRecords()).isNotEmpty().allSatisfy(record -> assertThat(abortedByRecord.get(record)).as(record).isFalse());
            assertThat(transaction.abortedRecords()).isNotEmpty().allSatisfy(record -> assertThat(abortedByRecord.get(record)).as(record).isTrue());
        }
        assertThat(abortedByRecord.values().stream().filter(aborted -> aborted).count()).as("aborted records in the fixture")
            .isEqualTo(manifest.transactions().stream().mapToLong(transaction -> transaction.abortedRecords().size()).sum());
    }

    /**
     * A plain record, a committed transaction of the fixture's transactional id and an idempotent
     * batch, each read back at once; returns what each partition gained.
     */
    private static Map<TopicPartition, Written> writeMore(FixtureServer server, CompatManifest manifest, Time clock) throws Exception {
        Map<TopicPartition, Written> written = new HashMap<>();
        try (KafkaProducer<String, String> producer = producer(server, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false"))) {
            RecordMetadata metadata = producer.send(new ProducerRecord<>("orders", 0, clock.milliseconds(), "after-upgrade", "plain record"))
                .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            written.put(new TopicPartition("orders", 0), new Written(List.of(entry(metadata, "after-upgrade", "plain record")), 1));
        }
        Transaction transaction = manifest.transactions().get(0);
        try (KafkaProducer<String, String> producer = producer(server, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transaction.transactionalId()))) {
            producer.initTransactions();
            producer.beginTransaction();
            RecordMetadata metadata = producer.send(new ProducerRecord<>("txn", 0, clock.milliseconds(), "after-upgrade", "transactional record"))
                .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            producer.commitTransaction();
            // The record and its commit marker.
            written.put(new TopicPartition("txn", 0), new Written(List.of(entry(metadata, "after-upgrade", "transactional record")), 2));
        }
        try (KafkaProducer<String, String> producer = producer(server, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
            ProducerConfig.LINGER_MS_CONFIG, "50"))) {
            List<java.util.concurrent.Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                futures.add(producer.send(new ProducerRecord<>("idempotent", 0, clock.milliseconds(), "after-upgrade", "idempotent " + i)));
            }
            List<RecordEntry> records = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                records.add(entry(futures.get(i).get(TIMEOUT_MS, TimeUnit.MILLISECONDS), "after-upgrade", "idempotent " + i));
            }
            written.put(new TopicPartition("idempotent", 0), new Written(records, 3));
        }
        for (Map.Entry<TopicPartition, Written> entry : written.entrySet()) {
            TopicPartition partition = entry.getKey();
            long firstNewOffset = entry.getValue().records().get(0).offset();
            List<ConsumerRecord<byte[], byte[]>> committed = ClusterSnapshot.read(server.bootstrap(), partition, "read_committed",
                firstNewOffset + entry.getValue().offsets());
            assertThat(committed.stream().filter(record -> record.offset() >= firstNewOffset).map(record -> new String(record.value(),
                StandardCharsets.UTF_8)).collect(Collectors.toList())).as("new records of " + partition + ", read_committed")
                .hasSize(entry.getValue().records().size());
        }
        return written;
    }

    private static KafkaProducer<String, String> producer(FixtureServer server, Map<String, String> overrides) {
        Properties properties = ClusterSnapshot.clientProperties(server.bootstrap());
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.putAll(overrides);
        return new KafkaProducer<>(properties);
    }

    private static RecordEntry entry(RecordMetadata metadata, String key, String value) {
        return new RecordEntry(metadata.offset(), metadata.timestamp(), crc(key.getBytes(StandardCharsets.UTF_8)),
            crc(value.getBytes(StandardCharsets.UTF_8)), List.of(), false);
    }

    private static void copyRecursively(Path source, Path target) throws IOException {
        try (Stream<Path> paths = Files.walk(source)) {
            for (Path path : paths.toList()) {
                Path copy = target.resolve(source.relativize(path).toString());
                if (Files.isDirectory(path)) {
                    Files.createDirectories(copy);
                } else {
                    Files.copy(path, copy);
                }
            }
        }
    }
}
