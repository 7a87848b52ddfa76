package io.strata.storage;

import io.strata.common.MockTime;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.EndTransactionMarker;
import io.strata.protocol.records.Header;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile;
import org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile;
import org.apache.kafka.storage.internals.checkpoint.PartitionMetadataFile;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Apache Kafka's own {@code kafka-dump-log} ({@code org.apache.kafka.tools.DumpLogSegments},
 * run in a child JVM because it calls {@code System.exit}) as the oracle for our on-disk
 * format: it must read every segment, index, time index, transaction index and producer
 * snapshot Strata writes, report no error, and see exactly the batches, records and index
 * entries that Strata wrote. Kafka's checkpoint readers check the leader-epoch-checkpoint,
 * the offset checkpoints and partition.metadata, which the tool does not read.
 *
 * <p>The log: several segments; batches with every compression type, keys, headers and a null
 * value; an idempotent producer; a transaction committed and one aborted (with their
 * markers); a late batch with an older timestamp; three leader epochs. It is written through
 * {@link LogManager} and shut down cleanly.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DumpLogSegmentsCompatibilityTest {
    private static final String DUMP_LOG_SEGMENTS = "org.apache.kafka.tools.DumpLogSegments";
    private static final long TOOL_DEADLINE_MS = 120_000L;
    private static final TopicPartition TOPIC_PARTITION = new TopicPartition("compat", 0);
    private static final UUID TOPIC_ID = UUID.fromString("5e0f4a62-9d4b-4f3c-8a0e-3b1c2d4e5f60");
    private static final long IDEMPOTENT_PRODUCER = 1_001L;
    private static final long COMMITTED_PRODUCER = 2_002L;
    private static final long ABORTED_PRODUCER = 3_003L;
    private static final int COORDINATOR_EPOCH = 7;
    /** Small segments and dense indexes: many segments, many index entries. */
    private static final LogConfig CONFIG = LogConfig.of(Map.of(), Map.of(
        LogConfig.SEGMENT_BYTES, "3000",
        LogConfig.INDEX_INTERVAL_BYTES, "200"));

    @TempDir
    static Path tempDir;

    private Path dataDir;
    private Path partitionDir;
    private long logEndOffset;
    private List<EpochEntry> epochs;
    private List<AbortedTxn> abortedTxns;
    private Map<Long, ProducerStateEntry> producers;
    private ToolRun dataDump;
    private ToolRun sanityCheck;
    private ToolRun indexDump;

    /** What one run of the tool printed. */
    private record ToolRun(int exitCode, List<String> stdout, String stderr) {
        /** The lines printed for {@code file}: from its "Dumping" line to the next one. */
        List<String> section(Path file) {
            int start = stdout.indexOf("Dumping " + file);
            assertThat(start).as("the tool dumped %s; it printed:%n%s", file, String.join("\n", stdout)).isNotNegative();
            int end = start + 1;
            while (end < stdout.size() && !stdout.get(end).startsWith("Dumping ")) {
                end++;
            }
            return stdout.subList(start + 1, end);
        }
    }

    @BeforeAll
    void writeLogAndRunTheTool() throws Exception {
        dataDir = tempDir.resolve("data");
        writeLog();
        partitionDir = dataDir.resolve(TOPIC_PARTITION.toString());
        List<Path> logs = files(LogSegment.LOG_SUFFIX);
        List<Path> indexes = files(LogSegment.INDEX_SUFFIX);
        List<Path> timeIndexes = files(LogSegment.TIME_INDEX_SUFFIX);
        assertThat(logs).hasSizeGreaterThan(5);

        List<Path> dataFiles = concat(List.of(logs, files(ProducerStateManager.SNAPSHOT_SUFFIX), files(LogSegment.TXN_INDEX_SUFFIX)));
        dataDump = runTool("data", List.of("--files", joined(dataFiles), "--deep-iteration", "--print-data-log"));
        sanityCheck = runTool("sanity", List.of("--files", joined(concat(List.of(logs, indexes, timeIndexes))), "--deep-iteration",
            "--index-sanity-check"));
        indexDump = runTool("indexes", List.of("--files", joined(concat(List.of(indexes, timeIndexes)))));
    }

    private void writeLog() throws IOException {
        MockTime time = new MockTime(SequenceRecords.NOW_MS);
        LogManager manager = new LogManager(new LogManager.Settings(List.of(dataDir), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L,
            600_000L, false), time);
        manager.startup(topic -> CONFIG);
        UnifiedLog log = manager.getOrCreateLog(TOPIC_PARTITION, Optional.of(TOPIC_ID), CONFIG);
        new LogContents(log, SequenceRecords.BASE_TIMESTAMP_MS).write();
        logEndOffset = log.logEndOffset();
        epochs = log.leaderEpochCache().epochEntries();
        abortedTxns = log.collectAbortedTransactions(0, logEndOffset);
        producers = new LinkedHashMap<>(log.producerState().activeProducers());
        manager.close();
        assertThat(abortedTxns).hasSize(1);
        assertThat(epochs).hasSize(3);
    }

    /** Appends the batches described in the class javadoc. */
    private static final class LogContents {
        private final UnifiedLog log;
        private long timestampMs;
        private int idempotentSequence;
        private int committedSequence;
        private int abortedSequence;

        LogContents(UnifiedLog log, long firstTimestampMs) {
            this.log = log;
            this.timestampMs = firstTimestampMs;
        }

        void write() throws IOException {
            for (int round = 0; round < 12; round++) {
                int epoch = round / 4;
                for (CompressionType compression : CompressionType.values()) {
                    append(plainBatch(compression, round), epoch);
                }
                append(producerBatch(CompressionType.values()[round % CompressionType.values().length], IDEMPOTENT_PRODUCER,
                    idempotentSequence, false, 3), epoch);
                idempotentSequence += 3;
                if (round == 2) {
                    runTransaction(COMMITTED_PRODUCER, ControlRecordType.COMMIT, epoch);
                }
                if (round == 6) {
                    runTransaction(ABORTED_PRODUCER, ControlRecordType.ABORT, epoch);
                }
                if (round == 9) {
                    // A late batch: its timestamps are older than what the log already holds.
                    MemoryRecords late = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L)
                        .append(timestampMs - 5_000, bytes("late-key"), bytes("late-value")).build();
                    append(late, epoch);
                }
            }
        }

        private void runTransaction(long producerId, ControlRecordType outcome, int epoch) throws IOException {
            for (int i = 0; i < 3; i++) {
                int sequence = producerId == COMMITTED_PRODUCER ? committedSequence : abortedSequence;
                append(producerBatch(CompressionType.values()[i + 1], producerId, sequence, true, 2), epoch);
                if (producerId == COMMITTED_PRODUCER) {
                    committedSequence += 2;
                } else {
                    abortedSequence += 2;
                }
                append(plainBatch(CompressionType.NONE, 100 + i), epoch);
            }
            log.appendMarker(RecordBatchBuilder.endTransactionMarker(0L, nextTimestamp(), epoch, producerId, (short) 0,
                new EndTransactionMarker(outcome, COORDINATOR_EPOCH)), epoch);
        }

        private MemoryRecords plainBatch(CompressionType compression, int round) {
            RecordBatchBuilder builder = new RecordBatchBuilder(compression, TimestampType.CREATE_TIME, 0L);
            int records = 1 + round % 4;
            for (int i = 0; i < records; i++) {
                String name = compression.name().toLowerCase(Locale.ROOT) + "-" + round + "-" + i;
                List<Header> headers = i % 2 == 0 ? List.of(Header.of("trace", bytes("t-" + name))) : List.of();
                byte[] value = round == 5 && i == 0 ? null : bytes("value-" + name + "-" + "x".repeat(round * 10));
                builder.append(nextTimestamp(), bytes("key-" + name), value, headers);
            }
            return builder.build();
        }

        private MemoryRecords producerBatch(CompressionType compression, long producerId, int baseSequence, boolean transactional,
                                            int records) {
            RecordBatchBuilder builder = new RecordBatchBuilder(compression, TimestampType.CREATE_TIME, 0L)
                .producerState(producerId, (short) 0, baseSequence, transactional);
            for (int i = 0; i < records; i++) {
                builder.append(nextTimestamp(), null, bytes("producer-" + producerId + "-seq-" + (baseSequence + i)));
            }
            return builder.build();
        }

        private void append(MemoryRecords records, int epoch) throws IOException {
            log.appendAsLeader(records, epoch, UnifiedLog.AppendOrigin.CLIENT);
        }

        private long nextTimestamp() {
            return timestampMs++;
        }
    }

    // ---------------------------------------------------------------- the tool

    private ToolRun runTool(String name, List<String> args) throws Exception {
        List<String> stdout = Collections.synchronizedList(new ArrayList<>());
        try (ChildJvm child = ChildJvm.start(DUMP_LOG_SEGMENTS, args, tempDir.resolve(name + ".stderr"), stdout::add, () -> { })) {
            int exitCode = child.awaitExit(TOOL_DEADLINE_MS);
            return new ToolRun(exitCode, List.copyOf(stdout), child.stderr());
        }
    }

    private List<Path> files(String suffix) throws IOException {
        try (Stream<Path> files = Files.list(partitionDir)) {
            return files.filter(file -> file.getFileName().toString().endsWith(suffix)).sorted().toList();
        }
    }

    private static List<Path> concat(List<List<Path>> lists) {
        return lists.stream().flatMap(List::stream).toList();
    }

    private static String joined(List<Path> files) {
        return files.stream().map(Path::toString).collect(Collectors.joining(","));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** The tool's stderr holds none of the reports it makes when something does not match. */
    private static void assertNoErrorsReported(ToolRun run) {
        assertThat(run.exitCode()).as("exit code; stderr:%n%s", run.stderr()).isZero();
        assertThat(run.stderr()).doesNotContain("Mismatches in", "Found timestamp mismatch", "Found out of order timestamp",
            "indexed offsets are not found", "Exception", "exception", "corrupt", "Corrupt", "invalid");
        assertThat(run.stdout()).noneMatch(line -> line.contains("invalid bytes") || line.contains("isvalid: false"));
    }

    /**
     * The negative control: the same checks fail on damaged copies, so a silent tool cannot
     * pass for an approving one. A flipped byte in a record makes the batch fail its CRC; an
     * index entry pointing at the wrong batch is reported as a mismatch.
     */
    @Test
    void theChecksCatchDamageTheToolReports() throws Exception {
        Path damaged = Files.createDirectories(tempDir.resolve("damaged"));
        Path log = damaged.resolve(LogSegment.filenamePrefixFromOffset(0) + LogSegment.LOG_SUFFIX);
        Path index = damaged.resolve(LogSegment.filenamePrefixFromOffset(0) + LogSegment.INDEX_SUFFIX);
        Files.copy(partitionDir.resolve(log.getFileName()), log);
        Files.copy(partitionDir.resolve(index.getFileName()), index);
        int firstBatchSize;
        try (FileRecords records = FileRecords.open(log)) {
            firstBatchSize = records.batchesFrom(0).iterator().next().sizeInBytes();
        }
        byte[] logBytes = Files.readAllBytes(log);
        logBytes[firstBatchSize - 1] ^= 0x01; // the last byte of the first batch: a header value character
        Files.write(log, logBytes);
        byte[] indexBytes = Files.readAllBytes(index);
        assertThat(indexBytes.length).isGreaterThanOrEqualTo(OffsetIndex.ENTRY_SIZE_BYTES);
        ByteBuffer.wrap(indexBytes).putInt(4, 0); // the first entry now points at the first batch, not the one it names
        Files.write(index, indexBytes);

        ToolRun run = runTool("damaged", List.of("--files", log + "," + index, "--deep-iteration", "--print-data-log"));
        assertThat(run.stdout()).anyMatch(line -> line.startsWith("baseOffset: 0 ") && line.endsWith("isvalid: false"));
        assertThat(run.stderr()).contains("Mismatches in :" + index);
        assertThatThrownBy(() -> assertNoErrorsReported(run)).isInstanceOf(AssertionError.class);
    }

    // ---------------------------------------------------------------- segments

    @Test
    void everySegmentReadsBackBatchByBatchAndRecordByRecord() throws IOException {
        assertNoErrorsReported(dataDump);
        long batchesChecked = 0;
        for (Path file : files(LogSegment.LOG_SUFFIX)) {
            long baseOffset = Long.parseLong(file.getFileName().toString().substring(0, 20));
            List<String> section = dataDump.section(file);
            assertThat(section.get(0)).isEqualTo("Log starting offset: " + baseOffset);
            List<String> expected = expectedDump(file);
            assertThat(section.subList(1, section.size())).as("dump of %s", file).containsExactlyElementsOf(expected);
            batchesChecked += expected.stream().filter(line -> line.startsWith("baseOffset: ")).count();
        }
        assertThat(batchesChecked).isGreaterThan(80);
    }

    /** Kafka reports a jump from offset -1 at the start of every file whose base is not 0; any other gap is an error. */
    @Test
    void offsetsAreConsecutiveAcrossEachSegment() throws IOException {
        String stderr = dataDump.stderr();
        List<String> reported = stderr.lines().filter(line -> line.startsWith("  ") && line.contains(" is followed by ")).toList();
        List<String> allowed = new ArrayList<>();
        for (Path file : files(LogSegment.LOG_SUFFIX)) {
            long baseOffset = Long.parseLong(file.getFileName().toString().substring(0, 20));
            if (baseOffset > 0) {
                allowed.add("  -1 is followed by " + baseOffset);
            }
        }
        assertThat(reported).containsExactlyInAnyOrderElementsOf(allowed);
    }

    /**
     * The lines the tool must print for a segment, built from Strata's own reading of it:
     * a summary per batch, then a line per record (key and payload as UTF-8 text, control
     * records with their marker).
     */
    private static List<String> expectedDump(Path file) throws IOException {
        List<String> lines = new ArrayList<>();
        try (FileRecords records = FileRecords.open(file)) {
            for (FileRecords.FileBatch header : records.batchesFrom(0)) {
                DefaultRecordBatch batch = header.load();
                lines.add(batchLine(batch, header.position()));
                for (Record record : batch.records()) {
                    lines.add(recordLine(batch, record));
                }
            }
        }
        return lines;
    }

    private static String batchLine(DefaultRecordBatch batch, int position) {
        return "baseOffset: " + batch.baseOffset() + " lastOffset: " + batch.lastOffset() + " count: " + batch.recordCount()
            + " baseSequence: " + batch.baseSequence() + " lastSequence: " + batch.lastSequence() + " producerId: " + batch.producerId()
            + " producerEpoch: " + batch.producerEpoch() + " partitionLeaderEpoch: " + batch.partitionLeaderEpoch()
            + " isTransactional: " + batch.isTransactional() + " isControl: " + batch.isControlBatch()
            + " deleteHorizonMs: " + batch.deleteHorizonMs() + " position: " + position + " CreateTime: " + batch.maxTimestamp()
            + " size: " + batch.sizeInBytes() + " magic: 2 compresscodec: " + batch.compressionType().name().toLowerCase(Locale.ROOT)
            + " crc: " + batch.checksum() + " isvalid: true";
    }

    private static String recordLine(DefaultRecordBatch batch, Record record) {
        StringBuilder line = new StringBuilder("| offset: " + record.offset() + " CreateTime: " + record.timestamp()
            + " keySize: " + record.keySize() + " valueSize: " + record.valueSize() + " sequence: " + record.sequence()
            + " headerKeys: " + record.headers().stream().map(Header::key).collect(Collectors.joining(",", "[", "]")));
        if (batch.isControlBatch()) {
            EndTransactionMarker marker = EndTransactionMarker.fromRecord(record);
            line.append(" endTxnMarker: ").append(marker.type()).append(" coordinatorEpoch: ").append(marker.coordinatorEpoch());
            return line.toString();
        }
        String prefix = " ";
        if (record.hasKey()) {
            line.append(prefix).append("key: ").append(StandardCharsets.UTF_8.decode(record.key()));
        }
        if (record.hasValue()) {
            line.append(" payload: ").append(StandardCharsets.UTF_8.decode(record.value()));
        }
        return line.toString();
    }

    // ---------------------------------------------------------------- indexes

    @Test
    void everyIndexPassesKafkasSanityCheck() throws IOException {
        assertNoErrorsReported(sanityCheck);
        for (Path index : concat(List.of(files(LogSegment.INDEX_SUFFIX), files(LogSegment.TIME_INDEX_SUFFIX)))) {
            List<String> section = sanityCheck.section(index);
            if (Files.size(index) == 0 && index.toString().endsWith(LogSegment.INDEX_SUFFIX)) {
                assertThat(section).containsExactly(index + " is empty.");
            } else {
                assertThat(section).containsExactly(index + " passed sanity check.");
            }
        }
    }

    @Test
    void offsetIndexEntriesPointAtTheBatchesTheyName() throws IOException {
        assertNoErrorsReported(indexDump);
        int entriesChecked = 0;
        for (Path index : files(LogSegment.INDEX_SUFFIX)) {
            long baseOffset = Long.parseLong(index.getFileName().toString().substring(0, 20));
            ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(index));
            List<String> expected = new ArrayList<>();
            while (bytes.remaining() >= OffsetIndex.ENTRY_SIZE_BYTES) {
                expected.add("offset: " + (baseOffset + bytes.getInt()) + " position: " + bytes.getInt());
            }
            List<String> section = indexDump.section(index);
            assertThat(section).as("dump of %s", index).containsExactlyElementsOf(expected.isEmpty() ? List.of(index + " is empty.") : expected);
            entriesChecked += expected.size();
        }
        assertThat(entriesChecked).isGreaterThan(20);
    }

    @Test
    void timeIndexEntriesMatchTheMaxTimestampsOfTheirBatches() throws IOException {
        assertNoErrorsReported(indexDump);
        int entriesChecked = 0;
        for (Path index : files(LogSegment.TIME_INDEX_SUFFIX)) {
            long baseOffset = Long.parseLong(index.getFileName().toString().substring(0, 20));
            ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(index));
            List<String> expected = new ArrayList<>();
            while (bytes.remaining() >= TimeIndex.ENTRY_SIZE_BYTES) {
                long timestamp = bytes.getLong();
                expected.add("timestamp: " + timestamp + " offset: " + (baseOffset + bytes.getInt()));
            }
            assertThat(indexDump.section(index)).as("dump of %s", index).containsExactlyElementsOf(expected);
            entriesChecked += expected.size();
        }
        assertThat(entriesChecked).isGreaterThan(20);
    }

    // ---------------------------------------------------------------- transactions and producer state

    @Test
    void theTransactionIndexHoldsTheAbortedTransaction() throws IOException {
        List<String> lines = new ArrayList<>();
        for (Path txnIndex : files(LogSegment.TXN_INDEX_SUFFIX)) {
            lines.addAll(dataDump.section(txnIndex));
        }
        List<String> expected = abortedTxns.stream().map(txn -> "version: 0 producerId: " + txn.producerId() + " firstOffset: "
            + txn.firstOffset() + " lastOffset: " + txn.lastOffset() + " lastStableOffset: " + txn.lastStableOffset()).toList();
        assertThat(lines).containsExactlyElementsOf(expected);
    }

    @Test
    void producerSnapshotsAreReadByKafka() throws IOException {
        List<Path> snapshots = files(ProducerStateManager.SNAPSHOT_SUFFIX);
        assertThat(snapshots).isNotEmpty();
        for (Path snapshot : snapshots) {
            assertThat(dataDump.section(snapshot)).allMatch(line -> line.startsWith("producerId: "));
        }
        Path last = snapshots.get(snapshots.size() - 1);
        assertThat(last.getFileName().toString()).isEqualTo(LogSegment.filenamePrefixFromOffset(logEndOffset)
            + ProducerStateManager.SNAPSHOT_SUFFIX);
        List<String> expected = producers.values().stream().map(DumpLogSegmentsCompatibilityTest::snapshotLine).toList();
        assertThat(dataDump.section(last)).containsExactlyInAnyOrderElementsOf(expected);
    }

    /** A snapshot keeps one timestamp per producer, its last; Kafka reads it back as the last batch's too. */
    private static String snapshotLine(ProducerStateEntry entry) {
        BatchMetadata lastBatch = null;
        for (BatchMetadata batch : entry.batches()) {
            lastBatch = batch;
        }
        String line = "producerId: " + entry.producerId() + " producerEpoch: " + entry.producerEpoch() + " coordinatorEpoch: "
            + entry.coordinatorEpoch() + " currentTxnFirstOffset: " + entry.currentTxnFirstOffset() + " lastTimestamp: "
            + entry.lastTimestamp();
        if (lastBatch != null) {
            line += " firstSequence: " + lastBatch.firstSeq() + " lastSequence: " + lastBatch.lastSeq() + " lastOffset: "
                + lastBatch.lastOffset() + " offsetDelta: " + lastBatch.offsetDelta() + " timestamp: " + entry.lastTimestamp();
        }
        return line;
    }

    // ---------------------------------------------------------------- checkpoint files (read with Kafka's own classes)

    @Test
    void checkpointFilesAreReadByKafka() throws IOException {
        LogDirFailureChannel failures = new LogDirFailureChannel(1);
        List<org.apache.kafka.storage.internals.log.EpochEntry> kafkaEpochs =
            new LeaderEpochCheckpointFile(partitionDir.resolve(UnifiedLog.LEADER_EPOCH_CHECKPOINT).toFile(), failures).read();
        assertThat(kafkaEpochs).containsExactlyElementsOf(epochs.stream()
            .map(entry -> new org.apache.kafka.storage.internals.log.EpochEntry(entry.epoch(), entry.startOffset())).toList());

        org.apache.kafka.common.TopicPartition kafkaPartition =
            new org.apache.kafka.common.TopicPartition(TOPIC_PARTITION.topic(), TOPIC_PARTITION.partition());
        assertThat(new OffsetCheckpointFile(dataDir.resolve(LogManager.RECOVERY_POINT_CHECKPOINT).toFile(), failures).read())
            .isEqualTo(Map.of(kafkaPartition, logEndOffset));
        assertThat(new OffsetCheckpointFile(dataDir.resolve(LogManager.LOG_START_OFFSET_CHECKPOINT).toFile(), failures).read())
            .isEqualTo(Map.of(kafkaPartition, 0L));
        assertThat(new PartitionMetadataFile(partitionDir.resolve("partition.metadata").toFile(), failures).read().topicId())
            .isEqualTo(new Uuid(TOPIC_ID.getMostSignificantBits(), TOPIC_ID.getLeastSignificantBits()));
        assertThat(dataDir.resolve(LogManager.CLEAN_SHUTDOWN_FILE)).exists();
    }
}
