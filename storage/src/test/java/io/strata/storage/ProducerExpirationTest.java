package io.strata.storage;

import io.strata.common.MockTime;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.EndTransactionMarker;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Producer-id expiration ({@code producer.id.expiration.ms}) on a log driven by a mock clock,
 * and the sequence rules for a producer the partition has no state for, both as in Kafka: a
 * producer idle for the expiration with no open transaction is forgotten, counted from the
 * timestamp of its last batch or marker; afterwards it may continue its sequence (KIP-360);
 * only a partition that never held a record insists on sequence 0 (KAFKA-15591).
 */
class ProducerExpirationTest {
    private static final long EXPIRATION_MS = 60_000L;
    private static final long PRODUCER_ID = 42L;
    private static final short EPOCH = 3;

    @TempDir
    Path dataDir;

    private final MockTime time = new MockTime();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final TopicPartition topicPartition = new TopicPartition("expiry", 0);
    private UnifiedLog log;

    @BeforeEach
    void open() throws IOException {
        log = UnifiedLog.load(dataDir.resolve(topicPartition.toString()), topicPartition, LogConfig.defaults(), time, scheduler,
            new UnifiedLog.LoadParams(0, 0, true, EXPIRATION_MS, false));
    }

    @AfterEach
    void close() throws IOException {
        if (log != null && !log.isClosed()) {
            log.close();
        }
        scheduler.shutdownNow();
    }

    private LogAppendInfo append(MemoryRecords records) throws IOException {
        return log.appendAsLeader(records, 0, UnifiedLog.AppendOrigin.CLIENT);
    }

    private void removeExpiredProducers() {
        log.producerState().removeExpiredProducers(time.milliseconds());
    }

    private static void assertError(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, ErrorCode expected) {
        assertThatThrownBy(call).isInstanceOf(ErrorCodeException.class)
            .extracting(e -> ((ErrorCodeException) e).error()).isEqualTo(expected);
    }

    @Test
    void idleProducerIsForgottenAtTheExpirationAndMayThenContinueItsSequence() throws IOException {
        MemoryRecords first = TestRecords.idempotentBatch(PRODUCER_ID, EPOCH, 0, time.milliseconds(), "a", "b");
        MemoryRecords retry = TestRecords.copy(first);
        append(first);

        time.advance(EXPIRATION_MS - 1);
        removeExpiredProducers();
        assertThat(log.producerState().lastEntry(PRODUCER_ID)).isNotNull();
        LogAppendInfo duplicate = append(retry);
        assertThat(duplicate.duplicate()).isTrue();
        assertThat(duplicate.firstOffset()).isZero();

        time.advance(1);
        removeExpiredProducers();
        assertThat(log.producerState().lastEntry(PRODUCER_ID)).isNull();
        assertThat(log.producerState().activeProducers()).isEmpty();

        // The idle producer still has its id and epoch and sends its next sequence; Kafka accepts it.
        LogAppendInfo continued = append(TestRecords.idempotentBatch(PRODUCER_ID, EPOCH, 2, time.milliseconds(), "c"));
        assertThat(continued.duplicate()).isFalse();
        assertThat(continued.firstOffset()).isEqualTo(2);
        ProducerStateEntry entry = log.producerState().lastEntry(PRODUCER_ID);
        assertThat(entry.producerEpoch()).isEqualTo(EPOCH);
        assertThat(entry.lastSeq()).isEqualTo(2);
        // From there the usual rules hold again.
        assertError(() -> append(TestRecords.idempotentBatch(PRODUCER_ID, EPOCH, 5, time.milliseconds(), "gap")),
            ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
        assertThat(append(TestRecords.idempotentBatch(PRODUCER_ID, EPOCH, 3, time.milliseconds(), "d")).firstOffset()).isEqualTo(3);
    }

    @Test
    void producersThatExpiredWhileTheLogWasClosedAreGoneWhenItOpens() throws IOException {
        append(TestRecords.idempotentBatch(PRODUCER_ID, EPOCH, 0, time.milliseconds(), "a"));
        append(TestRecords.idempotentBatch(PRODUCER_ID + 1, EPOCH, 0, time.milliseconds() + EXPIRATION_MS / 2, "b"));
        log.close(); // clean shutdown: both producers are in the snapshot
        time.advance(EXPIRATION_MS);
        open();
        assertThat(log.producerState().lastEntry(PRODUCER_ID)).as("idle for the whole expiration").isNull();
        assertThat(log.producerState().lastEntry(PRODUCER_ID + 1)).as("idle for half of it").isNotNull();
    }

    @Test
    void expirationCountsFromTheLastBatchTimestampNotFromTheAppend() throws IOException {
        long createTimeMs = time.milliseconds() - (EXPIRATION_MS - 10);
        append(TestRecords.idempotentBatch(PRODUCER_ID, EPOCH, 0, createTimeMs, "old"));
        time.advance(9);
        removeExpiredProducers();
        assertThat(log.producerState().lastEntry(PRODUCER_ID)).isNotNull();
        time.advance(1);
        removeExpiredProducers();
        assertThat(log.producerState().lastEntry(PRODUCER_ID)).isNull();
    }

    @Test
    void producerWithAnOpenTransactionIsKeptUntilItsMarkerIsExpirationOld() throws IOException {
        append(TestRecords.transactionalBatch(PRODUCER_ID, EPOCH, 0, time.milliseconds(), "t"));
        time.advance(10 * EXPIRATION_MS);
        removeExpiredProducers();
        assertThat(log.producerState().lastEntry(PRODUCER_ID)).isNotNull();
        assertThat(log.producerState().firstUnstableOffset()).hasValue(0);

        log.appendMarker(RecordBatchBuilder.endTransactionMarker(0, time.milliseconds(), 0, PRODUCER_ID, EPOCH,
            new EndTransactionMarker(ControlRecordType.COMMIT, 0)), 0);
        time.advance(EXPIRATION_MS - 1);
        removeExpiredProducers();
        assertThat(log.producerState().lastEntry(PRODUCER_ID)).isNotNull();
        time.advance(1);
        removeExpiredProducers();
        assertThat(log.producerState().lastEntry(PRODUCER_ID)).isNull();
        assertThat(log.producerState().firstUnstableOffset()).isEmpty();
    }

    @Test
    void nonZeroFirstSequenceIsRefusedOnlyWhereTheLogNeverHeldARecord() throws IOException {
        assertError(() -> append(TestRecords.idempotentBatch(PRODUCER_ID, EPOCH, 17, time.milliseconds(), "overtook")),
            ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
        assertThat(log.logEndOffset()).isZero();
        append(TestRecords.idempotentBatch(PRODUCER_ID, EPOCH, 0, time.milliseconds(), "first"));

        long otherProducerId = 43L;
        LogAppendInfo unknown = append(TestRecords.idempotentBatch(otherProducerId, (short) 0, 17, time.milliseconds(), "any"));
        assertThat(unknown.firstOffset()).isEqualTo(1);
        assertThat(log.producerState().lastEntry(otherProducerId).lastSeq()).isEqualTo(17);
    }

    @Test
    void logManagerExpiresIdleProducersEveryCheckInterval() throws Exception {
        long checkIntervalMs = 5;
        LogManager manager = new LogManager(new LogManager.Settings(List.of(dataDir.resolve("managed")), 1, 300_000L, Long.MAX_VALUE, 0L,
            EXPIRATION_MS, checkIntervalMs, false), time);
        try {
            manager.startup(topic -> LogConfig.defaults());
            UnifiedLog managed = manager.getOrCreateLog(topicPartition, Optional.empty(), LogConfig.defaults());
            managed.appendAsLeader(TestRecords.idempotentBatch(PRODUCER_ID, EPOCH, 0, time.milliseconds(), "a"), 0,
                UnifiedLog.AppendOrigin.CLIENT);
            // A task on the log manager's single scheduler thread, due after a few check intervals: once it has run, so have checks.
            manager.scheduler().schedule(() -> { }, 4 * checkIntervalMs, TimeUnit.MILLISECONDS).get(30, TimeUnit.SECONDS);
            synchronized (managed.lock()) {
                assertThat(managed.producerState().lastEntry(PRODUCER_ID)).as("expired before its time").isNotNull();
            }
            time.advance(EXPIRATION_MS);
            assertThat(waitForProducerToGo(managed, Duration.ofSeconds(30))).as("expired by the scheduled check").isTrue();
        } finally {
            manager.close();
        }
    }

    /** Polls (under the partition lock, as the expiry task runs) until the producer is gone or the timeout passes. */
    private static boolean waitForProducerToGo(UnifiedLog managed, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            synchronized (managed.lock()) {
                if (managed.producerState().lastEntry(PRODUCER_ID) == null) {
                    return true;
                }
            }
            if (System.nanoTime() >= deadline) {
                return false;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }
}
