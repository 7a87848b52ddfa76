package io.strata.storage;

import io.strata.common.MockTime;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Damaged and half-finished partition directories, made deterministically: random bytes
 * after the active segment's log and index (Kafka's own loader test), torn tails, truncated,
 * deleted, zeroed and garbage indexes, and the leftovers of interrupted deletes and
 * compactions. Each case reopens the log and checks that every record that was written is
 * there and nothing else, that lookups by offset and by timestamp are right, and that appends
 * continue at the log end.
 *
 * <p>A "crash image" is a copy of the directory taken while the log is open: indexes still
 * preallocated and untrimmed, no final producer snapshot, as a killed process leaves them.
 * A "closed" directory is one after a clean close.
 */
class LogCorruptionRecoveryTest {
    private static final int SEGMENT_BYTES = 16 * 1024;
    private static final int INDEX_INTERVAL_BYTES = 1024;
    private static final int RECORDS = 3_000;
    private static final int RECORDS_PER_EPOCH = 700;
    private static final int LOOKUP_SAMPLES = 200;
    private static final int MAX_RECORDS_PER_BATCH = 16;
    private static final TopicPartition TOPIC_PARTITION = new TopicPartition("damaged", 0);

    @TempDir
    Path tempDir;

    private final MockTime time = new MockTime(SequenceRecords.NOW_MS);
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final List<UnifiedLog> opened = new ArrayList<>();

    @AfterEach
    void closeLogs() throws IOException {
        for (UnifiedLog log : opened) {
            if (!log.isClosed()) {
                log.close();
            }
        }
        scheduler.shutdownNow();
    }

    private static LogConfig config() {
        return config(Map.of());
    }

    private static LogConfig config(Map<String, String> extra) {
        Map<String, String> overrides = new HashMap<>(Map.of(
            LogConfig.SEGMENT_BYTES, Integer.toString(SEGMENT_BYTES),
            LogConfig.INDEX_INTERVAL_BYTES, Integer.toString(INDEX_INTERVAL_BYTES)));
        overrides.putAll(extra);
        return LogConfig.of(Map.of(), overrides);
    }

    private UnifiedLog open(Path dir, LogConfig config, long checkpointedRecoveryPoint, boolean cleanShutdown) throws IOException {
        UnifiedLog log = UnifiedLog.load(dir, TOPIC_PARTITION, config, time, scheduler,
            new UnifiedLog.LoadParams(0L, checkpointedRecoveryPoint, cleanShutdown, 86_400_000L, false));
        opened.add(log);
        return log;
    }

    /** Appends records 0..count-1 in seeded-random batches, moving to a new leader epoch every {@link #RECORDS_PER_EPOCH} records. */
    private static void appendSequence(UnifiedLog log, long count, CompressionType compression, Random random) throws IOException {
        while (log.logEndOffset() < count) {
            long next = log.logEndOffset();
            int batchRecords = (int) Math.min(count - next, 1 + random.nextInt(MAX_RECORDS_PER_BATCH));
            log.appendAsLeader(SequenceRecords.batch(compression, next, batchRecords, false), (int) (next / RECORDS_PER_EPOCH),
                UnifiedLog.AppendOrigin.CLIENT);
        }
    }

    /** A closed log of {@link #RECORDS} records in many segments. */
    private Path closedLog(Random random) throws IOException {
        Path dir = tempDir.resolve("closed");
        UnifiedLog log = open(dir, config(), 0L, true);
        appendSequence(log, RECORDS, CompressionType.NONE, random);
        assertThat(log.numberOfSegments()).isGreaterThan(5);
        log.close();
        return dir;
    }

    /**
     * A crash image of a log of {@link #RECORDS} records, flushed up to {@code flushedUpTo}:
     * the files as the page cache holds them while the log is open.
     */
    private Path crashImage(Random random, long flushedUpTo) throws IOException {
        Path dir = tempDir.resolve("live");
        UnifiedLog log = open(dir, config(), 0L, true);
        appendSequence(log, RECORDS, CompressionType.NONE, random);
        log.flush(flushedUpTo);
        Path image = tempDir.resolve("image");
        copyDirectory(dir, image);
        log.close();
        return image;
    }

    private static void copyDirectory(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path file : files.toList()) {
                try {
                    Files.copy(file, to.resolve(file.getFileName()));
                } catch (java.nio.file.NoSuchFileException renamedMeanwhile) {
                    // A producer snapshot's temp file, renamed or removed by the log's background write
                    // while the directory is copied: a crash at that moment leaves either state.
                }
            }
        }
    }

    private static List<LogSegment> segments(UnifiedLog log) {
        return new ArrayList<>(log.logSegments());
    }

    private static Path segmentFile(Path dir, long baseOffset, String suffix) {
        return dir.resolve(LogSegment.filenamePrefixFromOffset(baseOffset) + suffix);
    }

    /** Base offsets of the segments in {@code dir}, from the .log file names. */
    private static List<Long> baseOffsets(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(file -> file.getFileName().toString()).filter(name -> name.endsWith(LogSegment.LOG_SUFFIX))
                .map(name -> Long.parseLong(name.substring(0, name.length() - LogSegment.LOG_SUFFIX.length()))).sorted().toList();
        }
    }

    private static byte[] randomBytes(Random random, int length) {
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    private static void append(Path file, byte[] bytes) throws IOException {
        Files.write(file, bytes, StandardOpenOption.APPEND);
    }

    /** Every record is there and nothing else, lookups are right, and appends continue at the end and survive a restart. */
    private void assertIntactAndWritable(UnifiedLog log, long expectedRecords, Random random) throws IOException {
        assertThat(SequenceRecords.verifyPrefix(log)).isEqualTo(expectedRecords);
        SequenceRecords.verifyLookups(log, random, LOOKUP_SAMPLES);
        LogAppendInfo appended = log.appendAsLeader(SequenceRecords.batch(CompressionType.NONE, expectedRecords, 2, false),
            log.leaderEpochCache().latestEpoch().orElse(0), UnifiedLog.AppendOrigin.CLIENT);
        assertThat(appended.firstOffset()).isEqualTo(expectedRecords);
        Path dir = log.dir();
        log.close();
        UnifiedLog reopened = open(dir, log.config(), 0L, true);
        assertThat(SequenceRecords.verifyPrefix(reopened)).isEqualTo(expectedRecords + 2);
        SequenceRecords.verifyLookups(reopened, random, LOOKUP_SAMPLES / 4);
    }

    // ---------------------------------------------------------------- random bytes after the active segment

    static Stream<Long> seeds() {
        return Stream.iterate(31L, seed -> seed + 1).limit(8);
    }

    /** Kafka's LogLoaderTest.testCorruptLog: 1-1024 random bytes after the active .log and .index, reopened as after a crash. */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void randomBytesAfterTheActiveLogAndIndexAreDiscarded(long seed) throws IOException {
        Random random = new Random(seed);
        boolean fromCrashImage = random.nextBoolean();
        long flushedUpTo = random.nextInt(RECORDS + 1);
        Path dir = fromCrashImage ? crashImage(random, flushedUpTo) : closedLog(random);
        long activeBase = baseOffsets(dir).get(baseOffsets(dir).size() - 1);
        append(segmentFile(dir, activeBase, LogSegment.LOG_SUFFIX), randomBytes(random, 1 + random.nextInt(1024)));
        append(segmentFile(dir, activeBase, LogSegment.INDEX_SUFFIX), randomBytes(random, 1 + random.nextInt(1024)));

        UnifiedLog log = open(dir, config(), fromCrashImage ? flushedUpTo : RECORDS, false);
        assertIntactAndWritable(log, RECORDS, random);
    }

    @Test
    void aTornLastBatchIsTruncatedAway() throws IOException {
        Random random = new Random(41);
        Path dir = crashImage(random, 0);
        long activeBase = baseOffsets(dir).get(baseOffsets(dir).size() - 1);
        Path activeLog = segmentFile(dir, activeBase, LogSegment.LOG_SUFFIX);
        long lastBatchBase;
        int lastBatchPosition;
        try (FileRecords records = FileRecords.open(activeLog)) {
            FileRecords.FileBatch last = null;
            for (FileRecords.FileBatch batch : records.batchesFrom(0)) {
                last = batch;
            }
            lastBatchBase = last.baseOffset();
            lastBatchPosition = last.position();
            // Cut the last batch in the middle, as a crash during its write would.
            records.truncateTo(last.position() + last.sizeInBytes() / 2);
        }

        UnifiedLog log = open(dir, config(), 0L, false);
        assertThat(log.activeSegment().size()).isEqualTo(lastBatchPosition);
        assertIntactAndWritable(log, lastBatchBase, random);
    }

    // ---------------------------------------------------------------- damaged indexes

    @Test
    void aTruncatedIndexIsRebuilt() throws IOException {
        Path dir = closedLog(new Random(42));
        List<Long> bases = baseOffsets(dir);
        Path partialEntry = segmentFile(dir, bases.get(1), LogSegment.INDEX_SUFFIX);
        Path fewerEntries = segmentFile(dir, bases.get(3), LogSegment.INDEX_SUFFIX);
        Path activeIndex = segmentFile(dir, bases.get(bases.size() - 1), LogSegment.INDEX_SUFFIX);
        truncateBy(partialEntry, 3);
        truncateBy(fewerEntries, OffsetIndex.ENTRY_SIZE_BYTES * 2);
        truncateBy(activeIndex, 5);

        // Detected by the sanity check alone: the shutdown was clean, nothing else is recovered.
        UnifiedLog log = open(dir, config(), RECORDS, true);
        assertThat(Files.size(partialEntry) % OffsetIndex.ENTRY_SIZE_BYTES).isZero();
        assertIntactAndWritable(log, RECORDS, new Random(42));
    }

    private static void truncateBy(Path file, int bytes) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            assertThat(channel.size()).as("size of %s", file).isGreaterThan(bytes);
            channel.truncate(channel.size() - bytes);
        }
    }

    @Test
    void deletedIndexesAreRebuilt() throws IOException {
        Path dir = closedLog(new Random(43));
        List<Long> bases = baseOffsets(dir);
        Files.delete(segmentFile(dir, bases.get(0), LogSegment.INDEX_SUFFIX));
        Files.delete(segmentFile(dir, bases.get(2), LogSegment.TIME_INDEX_SUFFIX));
        Files.delete(segmentFile(dir, bases.get(bases.size() - 1), LogSegment.INDEX_SUFFIX));

        UnifiedLog log = open(dir, config(), RECORDS, true);
        for (LogSegment segment : segments(log)) {
            if (segment.size() > INDEX_INTERVAL_BYTES * 2) {
                assertThat(segment.offsetIndex().entries()).as("index entries of %s", segment).isPositive();
                assertThat(segment.timeIndex().entries()).as("time index entries of %s", segment).isPositive();
            }
        }
        assertIntactAndWritable(log, RECORDS, new Random(43));
    }

    @Test
    void zeroedTimeIndexesAreRebuiltAfterACrash() throws IOException {
        Path dir = crashImage(new Random(44), RECORDS);
        List<Long> bases = baseOffsets(dir);
        for (long base : List.of(bases.get(1), bases.get(bases.size() / 2), bases.get(bases.size() - 1))) {
            Path timeIndex = segmentFile(dir, base, LogSegment.TIME_INDEX_SUFFIX);
            Files.write(timeIndex, new byte[(int) Files.size(timeIndex)]);
        }

        UnifiedLog log = open(dir, config(), 0L, false);
        assertIntactAndWritable(log, RECORDS, new Random(44));
    }

    @Test
    void garbageTimeIndexesAreRebuiltAfterACrash() throws IOException {
        Random random = new Random(45);
        Path dir = closedLog(random);
        List<Long> bases = baseOffsets(dir);
        Path overwritten = segmentFile(dir, bases.get(2), LogSegment.TIME_INDEX_SUFFIX);
        Files.write(overwritten, randomBytes(random, (int) Files.size(overwritten)));
        append(segmentFile(dir, bases.get(4), LogSegment.TIME_INDEX_SUFFIX), randomBytes(random, 1 + random.nextInt(1024)));
        append(segmentFile(dir, bases.get(bases.size() - 1), LogSegment.TIME_INDEX_SUFFIX), randomBytes(random, 24));

        UnifiedLog log = open(dir, config(), 0L, false);
        assertIntactAndWritable(log, RECORDS, random);
    }

    @Test
    void garbageTimeIndexOfTheActiveSegmentIsRebuiltAfterACrashPastTheRecoveryPoint() throws IOException {
        Random random = new Random(46);
        Path dir = crashImage(random, RECORDS);
        List<Long> bases = baseOffsets(dir);
        Path activeTimeIndex = segmentFile(dir, bases.get(bases.size() - 1), LogSegment.TIME_INDEX_SUFFIX);
        Files.write(activeTimeIndex, randomBytes(random, (int) Files.size(activeTimeIndex)));

        // Only the active segment is recovered: it holds the checkpointed recovery point.
        UnifiedLog log = open(dir, config(), RECORDS, false);
        assertIntactAndWritable(log, RECORDS, random);
    }

    /**
     * A crash while a reopened log runs: the indexes of its inactive segments must still pass
     * their sanity checks, or every restart after a crash rebuilds every index of the log (a
     * full scan) instead of recovering from the recovery point. Opening re-extends each index
     * to its preallocated size; only the active segment's may stay that way, as in Kafka.
     */
    @Test
    void inactiveSegmentIndexesOfAReopenedLogSurviveACrashIntact() throws IOException {
        Path dir = closedLog(new Random(52));
        UnifiedLog log = open(dir, config(), RECORDS, true);
        List<Long> bases = baseOffsets(dir);
        Path image = tempDir.resolve("reopened-image");
        copyDirectory(dir, image);
        log.close();

        for (long base : bases.subList(0, bases.size() - 1)) {
            try (OffsetIndex index = new OffsetIndex(segmentFile(image, base, LogSegment.INDEX_SUFFIX), base, -1, false);
                 TimeIndex timeIndex = new TimeIndex(segmentFile(image, base, LogSegment.TIME_INDEX_SUFFIX), base, -1, false)) {
                index.sanityCheck();
                timeIndex.sanityCheck();
                assertThat(index.lengthBytes()).as("length of %s", index.file()).isEqualTo(index.sizeInBytes());
            }
        }
        assertIntactAndWritable(open(image, config(), RECORDS, false), RECORDS, new Random(52));
    }

    // ---------------------------------------------------------------- leader epochs

    /**
     * Recovery that starts in the middle of the log (at the segment holding the recovery
     * point) sees only epochs that began in earlier segments; the cache must keep their start
     * offsets. Found by {@link CrashRecoveryTest}: recovery re-assigned them at the first batch
     * it read, which dropped every later epoch and moved the older one's start.
     */
    @Test
    void recoveryFromTheMiddleOfTheLogKeepsTheLeaderEpochStartOffsets() throws IOException {
        Path dir = closedLog(new Random(47));
        UnifiedLog first = open(dir, config(), RECORDS, true);
        List<EpochEntry> before = first.leaderEpochCache().epochEntries();
        first.close();
        assertThat(before).hasSize((RECORDS + RECORDS_PER_EPOCH - 1) / RECORDS_PER_EPOCH);

        long recoveryPoint = RECORDS_PER_EPOCH + RECORDS_PER_EPOCH / 2;
        UnifiedLog log = open(dir, config(), recoveryPoint, false);
        assertThat(log.leaderEpochCache().epochEntries()).isEqualTo(before);
        assertIntactAndWritable(log, RECORDS, new Random(47));
    }

    // ---------------------------------------------------------------- leftovers of interrupted operations

    @Test
    void segmentsMarkedDeletedByRetentionAreRemovedOnLoad() throws IOException {
        Path dir = tempDir.resolve("retention");
        // A long file.delete.delay.ms: the crash comes after the rename to .deleted, before the removal.
        LogConfig config = config(Map.of(LogConfig.RETENTION_BYTES, Integer.toString(RECORDS * 60),
            LogConfig.FILE_DELETE_DELAY_MS, "3600000"));
        UnifiedLog log = open(dir, config, 0L, true);
        appendSequence(log, RECORDS, CompressionType.NONE, new Random(48));
        log.updateHighWatermark(log.logEndOffset());
        assertThat(log.deleteOldSegments()).isPositive();
        long logStart = log.logStartOffset();
        Path image = tempDir.resolve("retention-image");
        copyDirectory(dir, image);
        log.close();
        assertThat(fileNames(image)).anyMatch(name -> name.endsWith(LogSegment.LOG_SUFFIX + LogSegment.DELETED_SUFFIX))
            .anyMatch(name -> name.endsWith(LogSegment.INDEX_SUFFIX + LogSegment.DELETED_SUFFIX));

        UnifiedLog reopened = open(image, config, 0L, false);
        assertThat(fileNames(image)).noneMatch(name -> name.endsWith(LogSegment.DELETED_SUFFIX));
        assertThat(SequenceRecords.verifyRange(reopened, logStart)).isEqualTo(RECORDS);
        SequenceRecords.verifyLookups(reopened, new Random(48), LOOKUP_SAMPLES);
        assertThat(reopened.appendAsLeader(SequenceRecords.batch(CompressionType.NONE, RECORDS, 1, false), 9,
            UnifiedLog.AppendOrigin.CLIENT).firstOffset()).isEqualTo(RECORDS);
    }

    @Test
    void cleanedFilesOfAnUncommittedCompactionAreRemovedAndTheOriginalsKept() throws IOException {
        Random random = new Random(49);
        Path dir = closedLog(random);
        List<Long> bases = baseOffsets(dir);
        long base = bases.get(1);
        for (String suffix : List.of(LogSegment.LOG_SUFFIX, LogSegment.INDEX_SUFFIX, LogSegment.TIME_INDEX_SUFFIX)) {
            Files.write(segmentFile(dir, base, suffix + LogSegment.CLEANED_SUFFIX), randomBytes(random, 4096));
        }

        UnifiedLog log = open(dir, config(), RECORDS, true);
        assertThat(fileNames(dir)).noneMatch(name -> name.endsWith(LogSegment.CLEANED_SUFFIX));
        assertIntactAndWritable(log, RECORDS, random);
    }

    /**
     * A committed compaction: the new segment's files were renamed to .swap and the old
     * segment to .deleted, then the process died. The swap must be completed.
     */
    @Test
    void swapFilesOfACommittedCompactionAreRenamedIntoPlace() throws IOException {
        Path dir = closedLog(new Random(50));
        long base = baseOffsets(dir).get(1);
        List<DefaultRecordBatch> compacted = writeCompactedSwapSegment(dir, base, true);
        for (String suffix : List.of(LogSegment.LOG_SUFFIX, LogSegment.INDEX_SUFFIX, LogSegment.TIME_INDEX_SUFFIX,
            LogSegment.TXN_INDEX_SUFFIX)) {
            Path file = segmentFile(dir, base, suffix);
            if (Files.exists(file)) {
                Files.move(file, segmentFile(dir, base, suffix + LogSegment.DELETED_SUFFIX));
            }
        }

        UnifiedLog log = open(dir, config(), RECORDS, false);
        assertThat(fileNames(dir)).noneMatch(name -> name.endsWith(LogSegment.SWAP_SUFFIX) || name.endsWith(LogSegment.DELETED_SUFFIX));
        assertCompactedSegment(log, base, compacted);
    }

    /**
     * The process died after the compacted log file was renamed to .swap but before its
     * indexes were: the old segment's indexes are still in place and describe the old file.
     * They must not be trusted once the swap is completed.
     */
    @Test
    void aSwappedLogFileDoesNotKeepTheOldSegmentsIndexes() throws IOException {
        Path dir = closedLog(new Random(51));
        long base = baseOffsets(dir).get(1);
        List<DefaultRecordBatch> compacted = writeCompactedSwapSegment(dir, base, false);

        UnifiedLog log = open(dir, config(), RECORDS, true);
        assertThat(fileNames(dir)).noneMatch(name -> name.endsWith(LogSegment.SWAP_SUFFIX));
        assertCompactedSegment(log, base, compacted);
    }

    /**
     * Writes {@code <base>.log.swap}: the segment at {@code base} with every other batch
     * removed (offsets keep their gaps, as after compaction), and, with {@code withIndexes},
     * matching {@code .index.swap} and {@code .timeindex.swap} files. Returns the batches kept.
     */
    private List<DefaultRecordBatch> writeCompactedSwapSegment(Path dir, long base, boolean withIndexes) throws IOException {
        List<DefaultRecordBatch> kept = new ArrayList<>();
        try (FileRecords original = FileRecords.open(segmentFile(dir, base, LogSegment.LOG_SUFFIX))) {
            int index = 0;
            for (FileRecords.FileBatch batch : original.batchesFrom(0)) {
                if (index++ % 2 == 0) {
                    kept.add(batch.load());
                }
            }
        }
        Path swapDir = tempDir.resolve("swap-build");
        UnifiedLog builder = open(swapDir, config(Map.of(LogConfig.SEGMENT_BYTES, Integer.toString(1 << 30))), base, true);
        builder.truncateFullyAndStartAt(base);
        for (DefaultRecordBatch batch : kept) {
            ByteBuffer copy = ByteBuffer.allocate(batch.sizeInBytes()).put(batch.buffer()).flip();
            builder.activeSegment().append(batch.lastOffset(), MemoryRecords.readableRecords(copy));
        }
        builder.close();
        Files.move(segmentFile(swapDir, base, LogSegment.LOG_SUFFIX), segmentFile(dir, base, LogSegment.LOG_SUFFIX + LogSegment.SWAP_SUFFIX));
        if (withIndexes) {
            for (String suffix : List.of(LogSegment.INDEX_SUFFIX, LogSegment.TIME_INDEX_SUFFIX)) {
                Files.move(segmentFile(swapDir, base, suffix), segmentFile(dir, base, suffix + LogSegment.SWAP_SUFFIX));
            }
        }
        return kept;
    }

    /** The swapped segment holds exactly {@code compacted}; reads find each kept batch, and the next one for a removed offset. */
    private static void assertCompactedSegment(UnifiedLog log, long base, List<DefaultRecordBatch> compacted) {
        LogSegment segment = log.logSegments().stream().filter(s -> s.baseOffset() == base).findFirst().orElseThrow();
        List<Long> stored = new ArrayList<>();
        for (FileRecords.FileBatch batch : segment.log().batchesFrom(0)) {
            batch.load().ensureValid();
            stored.add(batch.baseOffset());
        }
        assertThat(stored).isEqualTo(compacted.stream().map(DefaultRecordBatch::baseOffset).toList());
        for (int i = 0; i < compacted.size(); i++) {
            DefaultRecordBatch batch = compacted.get(i);
            for (long offset = batch.baseOffset(); offset <= batch.lastOffset(); offset++) {
                SequenceRecords.verifyReadAt(log, offset);
            }
            long removed = batch.lastOffset() + 1;
            if (i + 1 < compacted.size() && removed < compacted.get(i + 1).baseOffset()) {
                FetchDataInfo info = log.read(removed, 1, FetchIsolation.LOG_END, true);
                ByteBuffer bytes = ((FileRecords) info.records()).readAll();
                assertThat(DefaultRecordBatch.wrap(bytes).baseOffset()).as("read at removed offset %d", removed)
                    .isEqualTo(compacted.get(i + 1).baseOffset());
            }
        }
        long first = compacted.get(0).baseOffset();
        UnifiedLog.OffsetAndTimestamp byTime = log.fetchOffsetByTimestamp(SequenceRecords.timestampOf(first));
        assertThat(byTime.offset()).isEqualTo(first);
        assertThat(log.logEndOffset()).isEqualTo(RECORDS);
    }

    private static List<String> fileNames(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(file -> file.getFileName().toString()).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
