package io.strata.coordinator.transaction;

import io.strata.common.BackgroundErrors;
import io.strata.common.MockTime;
import io.strata.coordinator.SteppedCoordinatorTimers;
import io.strata.coordinator.group.CoordinatorLog;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.MemoryRecords;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The transaction coordinator's periodic passes (timeout scan, transactional id expiration)
 * survive a pass that throws: the failure is counted and the next pass does the work. Stepped on
 * a mock clock through the coordinator's timers, plus one run on the real scheduler.
 */
class TransactionCoordinatorBackgroundTest {
    private static final TransactionMetadata.TxnPartition P0 = new TransactionMetadata.TxnPartition("orders", 0);
    private static final int TXN_TIMEOUT_MS = 5_000;
    private static final long SCAN_INTERVAL_MS = 1_000;
    private static final long EXPIRATION_MS = 60_000;

    /** The in-memory state log, whose next appends can be made to throw (a bug or an I/O error below the coordinator). */
    static final class FailingLog implements CoordinatorLog {
        final TransactionCoordinatorTest.MemoryLog delegate = new TransactionCoordinatorTest.MemoryLog();
        final AtomicInteger failNext = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();

        @Override
        public void append(int partition, MemoryRecords records, Consumer<ErrorCode> callback) {
            if (failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                failed.incrementAndGet();
                throw new IllegalStateException("injected append failure");
            }
            delegate.append(partition, records, callback);
        }

        @Override
        public void replay(int partition, BiConsumer<ByteBuffer, ByteBuffer> records) {
            delegate.replay(partition, records);
        }
    }

    private final MockTime time = new MockTime();
    private final FailingLog log = new FailingLog();
    private final TransactionCoordinatorTest.RecordingMarkers markers = new TransactionCoordinatorTest.RecordingMarkers();
    private final AtomicLong nextProducerId = new AtomicLong(1000);
    private final List<TransactionCoordinator> started = new ArrayList<>();

    @AfterEach
    void close() {
        started.forEach(TransactionCoordinator::close);
    }

    private static <T> T get(CompletableFuture<T> future) throws Exception {
        return future.get(10, TimeUnit.SECONDS);
    }

    private TransactionCoordinator start(TransactionCoordinator coordinator) throws Exception {
        started.add(coordinator);
        coordinator.onPartitionsLed(Map.of(0, 0));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!coordinator.isLoaded("t") && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(coordinator.isLoaded("t")).isTrue();
        return coordinator;
    }

    /** Opens a transaction of "t" on P0 at the current time; returns its producer id. */
    private TransactionCoordinator.InitResult openTransaction(TransactionCoordinator coordinator) throws Exception {
        TransactionCoordinator.InitResult init = get(coordinator.initProducerId("t", TXN_TIMEOUT_MS, -1, (short) -1));
        assertThat(init.error()).isEqualTo(ErrorCode.NONE);
        assertThat(get(coordinator.addPartitions("t", init.producerId(), init.producerEpoch(), Set.of(P0)))).isEqualTo(ErrorCode.NONE);
        assertThat(get(coordinator.describe("t")).state()).isEqualTo("Ongoing");
        return init;
    }

    @Test
    void theTimeoutScanAbortsAtItsNextIntervalAfterAScanThrew() throws Exception {
        SteppedCoordinatorTimers timers = new SteppedCoordinatorTimers(time);
        BackgroundErrors errors = new BackgroundErrors();
        TransactionCoordinator coordinator = start(new TransactionCoordinator(new TransactionCoordinatorSettings(1, 900_000, EXPIRATION_MS,
            SCAN_INTERVAL_MS, 3_600_000L), log, markers, nextProducerId::getAndIncrement, time, 1, timers, errors));
        TransactionCoordinator.InitResult init = openTransaction(coordinator);

        // Scans at 1 s .. 5 s find nothing; the scan at 6 s (past the 5 s timeout) fails writing PrepareAbort.
        log.failNext.set(1);
        timers.advance(TXN_TIMEOUT_MS + SCAN_INTERVAL_MS);
        assertThat(log.failed.get()).isEqualTo(1);
        assertThat(errors.count(TransactionCoordinator.TIMEOUT_TASK)).isEqualTo(1);
        // The failed write left no pending state behind: the id is not stuck answering CONCURRENT_TRANSACTIONS.
        assertThat(get(coordinator.describe("t")).state()).isEqualTo("Ongoing");

        timers.advance(SCAN_INTERVAL_MS);
        // The abort's PrepareAbort write, markers and CompleteAbort write finish on the coordinator's thread after the scan.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!"CompleteAbort".equals(get(coordinator.describe("t")).state()) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(get(coordinator.describe("t")).state()).isEqualTo("CompleteAbort");
        assertThat(markers.written).containsExactly("ABORT orders-0 pid=" + init.producerId() + " epoch=" + (init.producerEpoch() + 1));
        assertThat(errors.count(TransactionCoordinator.TIMEOUT_TASK)).isEqualTo(1);
    }

    @Test
    void theExpirationPassRemovesTheIdAtItsNextIntervalAfterAPassThrew() throws Exception {
        SteppedCoordinatorTimers timers = new SteppedCoordinatorTimers(time);
        BackgroundErrors errors = new BackgroundErrors();
        long expirationIntervalMs = 10_000;
        TransactionCoordinator coordinator = start(new TransactionCoordinator(new TransactionCoordinatorSettings(1, 900_000, EXPIRATION_MS,
            3_600_000L, expirationIntervalMs), log, markers, nextProducerId::getAndIncrement, time, 1, timers, errors));
        assertThat(get(coordinator.initProducerId("t", TXN_TIMEOUT_MS, -1, (short) -1)).error()).isEqualTo(ErrorCode.NONE);

        // Passes up to 50 s find nothing idle long enough; the pass at 60 s fails writing the tombstone.
        timers.advance(EXPIRATION_MS - expirationIntervalMs);
        log.failNext.set(1);
        timers.advance(expirationIntervalMs);
        assertThat(errors.count(TransactionCoordinator.EXPIRATION_TASK)).isEqualTo(1);
        assertThat(get(coordinator.describe("t"))).isNotNull();

        timers.advance(expirationIntervalMs);
        assertThat(get(coordinator.describe("t"))).isNull();
    }

    /** The production scheduler (real time, a 10 ms scan interval) keeps the scan after it threw; waits on the outcome with a deadline. */
    @Test
    void theTimeoutScanOnTheRealSchedulerSurvivesAScanThatThrew() throws Exception {
        TransactionCoordinator coordinator = start(new TransactionCoordinator(new TransactionCoordinatorSettings(1, 900_000, EXPIRATION_MS, 10L,
            3_600_000L), log, markers, nextProducerId::getAndIncrement, time, 1));
        openTransaction(coordinator);
        log.failNext.set(1);
        time.advance(TXN_TIMEOUT_MS + 1);

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        String state = get(coordinator.describe("t")).state();
        while (!state.equals("CompleteAbort") && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            state = get(coordinator.describe("t")).state();
        }
        assertThat(log.failed.get()).isEqualTo(1);
        assertThat(state).isEqualTo("CompleteAbort");
    }
}
