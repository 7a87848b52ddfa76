package io.strata.storage;

import io.strata.common.MockTime;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link UnifiedLog#appendAsFollower} and the leader-epoch methods a replica fetcher uses. */
class FollowerAppendTest {
    @TempDir
    Path dataDir;

    private final TopicPartition tp = new TopicPartition("orders", 0);
    private final List<ScheduledExecutorService> schedulers = new ArrayList<>();
    private final List<UnifiedLog> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws IOException {
        for (UnifiedLog log : opened) {
            if (!log.isClosed()) {
                log.close();
            }
        }
        schedulers.forEach(ScheduledExecutorService::shutdownNow);
    }

    /** A log with its own scheduler (so a test can wait for its background snapshot writes). */
    private record OpenLog(UnifiedLog log, ScheduledExecutorService scheduler) {
        /** Waits for the roll-time snapshot writes and flushes, then closes the log cleanly. */
        void quiesceAndClose() throws Exception {
            scheduler.shutdown();
            assertThat(scheduler.awaitTermination(30, TimeUnit.SECONDS)).as("background work of %s ended", log).isTrue();
            log.close();
        }
    }

    private OpenLog open(String name, LogConfig config, MockTime time, boolean cleanShutdown) throws IOException {
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        schedulers.add(scheduler);
        UnifiedLog log = UnifiedLog.load(dataDir.resolve(name).resolve(tp.toString()), tp, config, time, scheduler,
            new UnifiedLog.LoadParams(0L, 0L, cleanShutdown, 86_400_000L, false));
        opened.add(log);
        return new OpenLog(log, scheduler);
    }

    /** Copies the leader's batches from {@code from} to its end into the follower, in reads of random size as fetches are. */
    private static void replicate(UnifiedLog leader, UnifiedLog follower, Random random) throws IOException {
        while (follower.logEndOffset() < leader.logEndOffset()) {
            FetchDataInfo info = leader.read(follower.logEndOffset(), 100 + random.nextInt(6000), FetchIsolation.LOG_END, true);
            follower.appendAsFollower(MemoryRecords.of(info.records()));
        }
    }

    private static Map<String, byte[]> files(Path dir) throws IOException {
        Map<String, byte[]> files = new TreeMap<>();
        try (var entries = Files.list(dir)) {
            for (Path file : entries.toList()) {
                files.put(file.getFileName().toString(), Files.readAllBytes(file));
            }
        }
        return files;
    }

    private static List<String> producers(UnifiedLog log) {
        return log.producerStateSnapshot().stream().map(ProducerStateEntry::toString).sorted().toList();
    }

    // ---------------------------------------------------------------- byte identity

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1L, 2L, 3L, 17L, 4242L})
    void followerFedTheLeadersBatchesEndsByteIdentical(long seed) throws Exception {
        MockTime leaderTime = new MockTime();
        OpenLog leader = open("leader", ReplicatedLogScript.CONFIG, leaderTime, true);
        new ReplicatedLogScript(seed, leaderTime).write(leader.log(), 400);
        OpenLog follower = open("follower", ReplicatedLogScript.CONFIG, new MockTime(), true);
        replicate(leader.log(), follower.log(), new Random(seed));

        assertThat(leader.log().numberOfSegments()).as("the script rolled the leader's log").isGreaterThan(10);
        assertThat(follower.log().highWatermark()).as("a follower append does not move the high watermark").isZero();
        assertThat(follower.log().leaderEpochCache().epochEntries()).isEqualTo(leader.log().leaderEpochCache().epochEntries());
        assertThat(producers(follower.log())).isEqualTo(producers(leader.log()));
        assertThat(follower.log().lastStableOffset()).isZero();
        assertThat(follower.log().producerState().firstUnstableOffset()).isEqualTo(leader.log().producerState().firstUnstableOffset());
        Path leaderDir = leader.log().dir();
        Path followerDir = follower.log().dir();
        leader.quiesceAndClose();
        follower.quiesceAndClose();

        Map<String, byte[]> leaderFiles = files(leaderDir);
        Map<String, byte[]> followerFiles = files(followerDir);
        assertThat(leaderFiles.keySet()).anyMatch(name -> name.endsWith(LogSegment.TXN_INDEX_SUFFIX))
            .anyMatch(name -> name.endsWith(ProducerStateManager.SNAPSHOT_SUFFIX));
        assertThat(followerFiles.keySet()).isEqualTo(leaderFiles.keySet());
        for (String name : leaderFiles.keySet()) {
            assertThat(followerFiles.get(name)).as("file %s", name).isEqualTo(leaderFiles.get(name));
        }
    }

    @Test
    void retriedBatchIsFoundAsDuplicateAfterTheFollowerBecomesLeader() throws Exception {
        MockTime time = new MockTime();
        OpenLog leader = open("leader", LogConfig.defaults(), time, true);
        OpenLog follower = open("follower", LogConfig.defaults(), time, true);
        for (int sequence = 0; sequence < 15; sequence += 3) {
            leader.log().appendAsLeader(TestRecords.idempotentBatch(7L, (short) 0, sequence, time.milliseconds(), "a", "b", "c"), 0,
                UnifiedLog.AppendOrigin.CLIENT);
        }
        replicate(leader.log(), follower.log(), new Random(1));

        // KAFKA-5435: the producer retries its last batch against the new leader.
        follower.log().maybeAssignEpochStartOffset(1, follower.log().logEndOffset());
        LogAppendInfo retried = follower.log().appendAsLeader(TestRecords.idempotentBatch(7L, (short) 0, 12, time.milliseconds(),
            "a", "b", "c"), 1, UnifiedLog.AppendOrigin.CLIENT);

        assertThat(retried.duplicate()).isTrue();
        assertThat(retried.firstOffset()).isEqualTo(12L);
        assertThat(follower.log().logEndOffset()).isEqualTo(15L);
    }

    // ---------------------------------------------------------------- errors

    private static MemoryRecords batchAt(long baseOffset, int epoch, String... values) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, baseOffset)
            .partitionLeaderEpoch(epoch);
        for (String value : values) {
            builder.append(1_700_000_000_000L, null, value.getBytes(StandardCharsets.UTF_8));
        }
        return builder.build();
    }

    private static MemoryRecords concat(MemoryRecords... parts) {
        int size = 0;
        for (MemoryRecords part : parts) {
            size += part.sizeInBytes();
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        for (MemoryRecords part : parts) {
            buffer.put(part.buffer());
        }
        return MemoryRecords.readableRecords(buffer.flip());
    }

    @Test
    void firstOffsetBelowTheLogEndIsAnUnexpectedAppendOffset() throws IOException {
        UnifiedLog follower = open("follower", LogConfig.defaults(), new MockTime(), true).log();
        follower.appendAsFollower(batchAt(0, 0, "a", "b", "c"));

        assertThatThrownBy(() -> follower.appendAsFollower(batchAt(2, 0, "c", "d")))
            .isInstanceOfSatisfying(UnexpectedAppendOffsetException.class, e -> {
                assertThat(e.firstOffset()).isEqualTo(2L);
                assertThat(e.lastOffset()).isEqualTo(3L);
            });
        assertThat(follower.logEndOffset()).isEqualTo(3L);
    }

    @Test
    void nonIncreasingOffsetsAppendNothing() throws IOException {
        UnifiedLog follower = open("follower", LogConfig.defaults(), new MockTime(), true).log();

        assertThatThrownBy(() -> follower.appendAsFollower(concat(batchAt(0, 0, "a", "b"), batchAt(1, 0, "c"))))
            .isInstanceOf(OffsetsOutOfOrderException.class);
        assertThat(follower.logEndOffset()).isZero();
        assertThat(follower.size()).isZero();
        assertThat(follower.latestEpoch()).isEmpty();
    }

    @Test
    void corruptBatchAppendsNothingNotEvenTheValidBatchesBeforeIt() throws IOException {
        UnifiedLog follower = open("follower", LogConfig.defaults(), new MockTime(), true).log();
        MemoryRecords corrupt = batchAt(2, 1, "c", "d");
        ByteBuffer bytes = ByteBuffer.allocate(corrupt.sizeInBytes()).put(corrupt.buffer()).flip();
        bytes.put(bytes.limit() - 1, (byte) (bytes.get(bytes.limit() - 1) ^ 0x5A));

        assertThatThrownBy(() -> follower.appendAsFollower(concat(batchAt(0, 0, "a", "b"), MemoryRecords.readableRecords(bytes))))
            .isInstanceOfSatisfying(ErrorCodeException.class, e -> assertThat(e.error()).isEqualTo(ErrorCode.CORRUPT_MESSAGE));
        assertThat(follower.logEndOffset()).isZero();
        assertThat(follower.size()).isZero();
        assertThat(follower.latestEpoch()).isEmpty();
    }

    @Test
    void batchOverMaxMessageBytesIsAcceptedAsKafkaFollowersDo() throws IOException {
        LogConfig small = LogConfig.of(Map.of(), Map.of(LogConfig.MAX_MESSAGE_BYTES, "100"));
        UnifiedLog follower = open("follower", small, new MockTime(), true).log();
        MemoryRecords large = batchAt(0, 0, "x".repeat(500));

        follower.appendAsFollower(large);

        assertThat(follower.logEndOffset()).isEqualTo(1L);
    }

    @Test
    void truncatedLastBatchIsDroppedAndEmptyRecordsAreANoOp() throws IOException {
        UnifiedLog follower = open("follower", LogConfig.defaults(), new MockTime(), true).log();
        MemoryRecords whole = concat(batchAt(0, 0, "a"), batchAt(1, 0, "b", "c"));
        ByteBuffer partial = whole.buffer();
        partial.limit(partial.limit() - 5);

        LogAppendInfo info = follower.appendAsFollower(MemoryRecords.readableRecords(partial));
        LogAppendInfo empty = follower.appendAsFollower(MemoryRecords.EMPTY);

        assertThat(info.lastOffset()).isZero();
        assertThat(follower.logEndOffset()).isEqualTo(1L);
        assertThat(empty.firstOffset()).isEqualTo(-1L);
        assertThat(follower.logEndOffset()).isEqualTo(1L);
    }

    @Test
    void gapAboveTheLogEndIsAllowedAndOffsetsBeyondTheSegmentsRangeRollAtTheBatch() throws IOException {
        UnifiedLog follower = open("follower", LogConfig.defaults(), new MockTime(), true).log();
        follower.appendAsFollower(batchAt(0, 0, "a"));
        follower.appendAsFollower(batchAt(10, 0, "b"));
        long far = 10L + Integer.MAX_VALUE + 5L;

        follower.appendAsFollower(batchAt(far, 2, "c"));

        assertThat(follower.numberOfSegments()).isEqualTo(2);
        assertThat(follower.activeSegment().baseOffset()).isEqualTo(far);
        assertThat(follower.logEndOffset()).isEqualTo(far + 1);
        assertThat(follower.leaderEpochCache().epochEntries()).containsExactly(new EpochEntry(0, 0L), new EpochEntry(2, far));
        List<Long> offsets = new ArrayList<>();
        for (LogSegment segment : follower.logSegments()) {
            for (RecordBatch batch : MemoryRecords.readableRecords(segment.log().readAll()).batches()) {
                offsets.add(((DefaultRecordBatch) batch).baseOffset());
            }
        }
        assertThat(offsets).containsExactly(0L, 10L, far);
    }

    @Test
    void batchOfAnEpochAboveTheCurrentLeaderEpochIsRefused() throws IOException {
        UnifiedLog follower = open("follower", LogConfig.defaults(), new MockTime(), true).log();

        assertThatThrownBy(() -> follower.appendAsFollower(concat(batchAt(0, 2, "a"), batchAt(1, 3, "b")), 2))
            .isInstanceOfSatisfying(ErrorCodeException.class, e -> assertThat(e.error()).isEqualTo(ErrorCode.INVALID_RECORD));
        follower.appendAsFollower(concat(batchAt(0, 2, "a"), batchAt(1, 3, "b")), 3);

        assertThat(follower.logEndOffset()).isEqualTo(2L);
        assertThat(follower.latestEpoch()).isEqualTo(OptionalInt.of(3));
    }

    @Test
    void olderEpochInABatchDoesNotRewriteTheCache() throws IOException {
        UnifiedLog follower = open("follower", LogConfig.defaults(), new MockTime(), true).log();
        follower.appendAsFollower(batchAt(0, 3, "a"));

        follower.appendAsFollower(batchAt(1, 2, "b"));

        assertThat(follower.leaderEpochCache().epochEntries()).containsExactly(new EpochEntry(3, 0L));
    }

    // ---------------------------------------------------------------- epochs

    @Test
    void epochStartOffsetIsAssignedOnlyForANewerEpochAndPersisted() throws IOException {
        OpenLog open = open("log", LogConfig.defaults(), new MockTime(), true);
        UnifiedLog log = open.log();
        log.appendAsFollower(batchAt(0, 1, "a", "b"));

        log.maybeAssignEpochStartOffset(1, 5L);
        log.maybeAssignEpochStartOffset(0, 2L);
        log.maybeAssignEpochStartOffset(4, 2L);

        assertThat(log.latestEpoch()).isEqualTo(OptionalInt.of(4));
        assertThat(log.leaderEpochCache().epochEntries()).containsExactly(new EpochEntry(1, 0L), new EpochEntry(4, 2L));
        assertThat(Files.readAllLines(log.dir().resolve(UnifiedLog.LEADER_EPOCH_CHECKPOINT))).containsExactly("0", "2", "1 0", "4 2");
    }

    @Test
    void endOffsetForEpochAnswersAsKafka() throws IOException {
        UnifiedLog log = open("log", LogConfig.defaults(), new MockTime(), true).log();
        assertThat(log.endOffsetForEpoch(0)).isEmpty();
        log.appendAsFollower(batchAt(0, 1, "a", "b"));
        log.appendAsFollower(batchAt(2, 3, "c"));
        log.appendAsFollower(batchAt(3, 5, "d", "e"));

        assertThat(log.endOffsetForEpoch(5)).contains(new EpochOffset(5, 5L));
        assertThat(log.endOffsetForEpoch(4)).contains(new EpochOffset(3, 3L));
        assertThat(log.endOffsetForEpoch(1)).contains(new EpochOffset(1, 2L));
        // Below the earliest epoch: the earliest start, as Kafka answers since 2.x.
        assertThat(log.endOffsetForEpoch(0)).contains(new EpochOffset(0, 0L));
        // Above the latest: Kafka's cache has no answer.
        assertThat(log.endOffsetForEpoch(6)).isEqualTo(Optional.empty());
        assertThat(log.endOffsetForEpoch(LeaderEpochFileCache.UNDEFINED_EPOCH)).isEmpty();
    }

    // ---------------------------------------------------------------- KIP-101 truncation

    /**
     * Old leader A wrote offsets 0..9 in epoch 0 (replicated), then 10..14 in epoch 1 that never
     * reached anyone; B became leader in epoch 2 and wrote 10..19. A, now a follower, asks B for
     * the end of its latest epoch 1: B answers (0, 10), and A truncates exactly its divergent suffix.
     */
    @Test
    void truncationToTheLeadersEpochEndRemovesOnlyTheDivergentSuffix() throws Exception {
        MockTime time = new MockTime();
        UnifiedLog oldLeader = open("a", LogConfig.defaults(), time, true).log();
        UnifiedLog newLeader = open("b", LogConfig.defaults(), time, true).log();
        for (int sequence = 0; sequence < 10; sequence += 2) {
            oldLeader.appendAsLeader(TestRecords.idempotentBatch(9L, (short) 0, sequence, time.milliseconds(), "x", "y"), 0,
                UnifiedLog.AppendOrigin.CLIENT);
        }
        replicate(oldLeader, newLeader, new Random(5));
        oldLeader.updateHighWatermark(10L);
        oldLeader.appendAsLeader(TestRecords.idempotentBatch(9L, (short) 0, 10, time.milliseconds(), "lost", "1", "2", "3", "4"), 1,
            UnifiedLog.AppendOrigin.CLIENT);
        newLeader.maybeAssignEpochStartOffset(2, newLeader.logEndOffset());
        for (int i = 0; i < 5; i++) {
            newLeader.appendAsLeader(TestRecords.batch(time.milliseconds(), "n" + i, "m" + i), 2, UnifiedLog.AppendOrigin.CLIENT);
        }

        EpochOffset divergence = newLeader.endOffsetForEpoch(oldLeader.latestEpoch().getAsInt()).orElseThrow();
        assertThat(divergence).isEqualTo(new EpochOffset(0, 10L));
        long localEnd = oldLeader.endOffsetForEpoch(divergence.epoch()).orElseThrow().endOffset();
        oldLeader.truncateTo(Math.min(divergence.endOffset(), localEnd));

        assertThat(oldLeader.logEndOffset()).isEqualTo(10L);
        assertThat(oldLeader.highWatermark()).as("nothing below the high watermark was lost").isEqualTo(10L);
        assertThat(oldLeader.leaderEpochCache().epochEntries()).containsExactly(new EpochEntry(0, 0L));
        assertThat(oldLeader.producerState().lastEntry(9L).lastSeq()).as("producer state rebuilt without the divergent batch").isEqualTo(9);
        replicate(newLeader, oldLeader, new Random(6));
        assertThat(oldLeader.leaderEpochCache().epochEntries()).isEqualTo(newLeader.leaderEpochCache().epochEntries());
        assertThat(contents(oldLeader)).isEqualTo(contents(newLeader));
    }

    /** The pre-KIP-101 rule, truncating to the high watermark, removes data the leader has too; refetching restores it. */
    @Test
    void truncationToTheHighWatermarkRemovesMoreAndRefetchingRestoresIt() throws Exception {
        MockTime time = new MockTime();
        UnifiedLog leader = open("leader", LogConfig.defaults(), time, true).log();
        UnifiedLog follower = open("follower", LogConfig.defaults(), time, true).log();
        for (int i = 0; i < 6; i++) {
            leader.appendAsLeader(TestRecords.transactionalBatch(4L, (short) 0, i * 2, time.milliseconds(), "t" + i, "u" + i), i < 3 ? 0 : 1,
                UnifiedLog.AppendOrigin.CLIENT);
        }
        replicate(leader, follower, new Random(8));
        follower.updateHighWatermark(4L);

        follower.truncateTo(follower.highWatermark());

        assertThat(follower.logEndOffset()).isEqualTo(4L);
        assertThat(follower.leaderEpochCache().epochEntries()).containsExactly(new EpochEntry(0, 0L));
        assertThat(follower.producerState().lastEntry(4L).lastSeq()).isEqualTo(3);
        assertThat(follower.producerState().firstUnstableOffset()).hasValue(0L);
        replicate(leader, follower, new Random(9));
        assertThat(contents(follower)).isEqualTo(contents(leader));
        assertThat(producers(follower)).isEqualTo(producers(leader));
    }

    private static List<String> contents(UnifiedLog log) {
        List<String> batches = new ArrayList<>();
        for (LogSegment segment : log.logSegments()) {
            for (RecordBatch entry : MemoryRecords.readableRecords(segment.log().readAll()).batches()) {
                DefaultRecordBatch batch = (DefaultRecordBatch) entry;
                batches.add(batch.baseOffset() + ":" + batch.partitionLeaderEpoch() + ":" + batch.checksum());
            }
        }
        return batches;
    }

    // ---------------------------------------------------------------- crash recovery

    /**
     * Kafka's recovery test on a follower log: cut 1-1024 random bytes off the active segment,
     * reopen after an unclean shutdown; the log ends at the last whole batch, and its epoch cache
     * and producer state are those of a follower that received exactly that prefix.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {11L, 12L, 13L, 14L, 15L, 16L, 17L, 18L})
    void followerRecoversFromATornTail(long seed) throws Exception {
        Random random = new Random(seed);
        MockTime leaderTime = new MockTime();
        LogConfig config = LogConfig.of(Map.of(), Map.of(LogConfig.SEGMENT_BYTES, "20000", LogConfig.INDEX_INTERVAL_BYTES, "150"));
        OpenLog leader = open("leader", config, leaderTime, true);
        new ReplicatedLogScript(seed, leaderTime).write(leader.log(), 150);
        OpenLog follower = open("follower", config, new MockTime(), true);
        replicate(leader.log(), follower.log(), random);
        Path segmentFile = follower.log().activeSegment().log().file();
        follower.quiesceAndClose();
        long size = Files.size(segmentFile);
        int cut = (int) Math.min(size, 1 + random.nextInt(1024));
        try (FileChannel channel = FileChannel.open(segmentFile, StandardOpenOption.WRITE)) {
            channel.truncate(size - cut);
        }

        UnifiedLog recovered = open("follower", config, new MockTime(), false).log();

        long end = recovered.logEndOffset();
        assertThat(end).as("a cut of %s bytes removed something", cut).isLessThan(leader.log().logEndOffset());
        List<String> leaderBatches = contents(leader.log());
        List<String> recoveredBatches = contents(recovered);
        assertThat(leaderBatches.subList(0, recoveredBatches.size())).isEqualTo(recoveredBatches);
        OpenLog reference = open("reference", config, new MockTime(), true);
        while (reference.log().logEndOffset() < end) {
            FetchDataInfo info = leader.log().read(reference.log().logEndOffset(), 1, FetchIsolation.LOG_END, true);
            reference.log().appendAsFollower(MemoryRecords.of(info.records()));
        }
        assertThat(reference.log().logEndOffset()).isEqualTo(end);
        assertThat(recovered.leaderEpochCache().epochEntries()).isEqualTo(reference.log().leaderEpochCache().epochEntries());
        assertThat(producers(recovered)).isEqualTo(producers(reference.log()));
        assertThat(recovered.producerState().firstUnstableOffset()).isEqualTo(reference.log().producerState().firstUnstableOffset());
        replicate(leader.log(), recovered, random);
        assertThat(contents(recovered)).isEqualTo(contents(leader.log()));
    }
}
