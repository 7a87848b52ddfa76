package io.strata.coordinator.transaction;

import io.strata.common.MockTime;
import io.strata.protocol.ErrorCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The set of {@code __transaction_state} partitions led here is the whole truth: a partition
 * that leaves it is unloaded (NOT_COORDINATOR for its transactional ids), and one led at a new
 * leader epoch is reloaded so that its markers carry the new coordinator epoch.
 */
class TransactionCoordinatorResignationTest {
    private final MockTime time = new MockTime();
    private final TransactionCoordinatorTest.MemoryLog log = new TransactionCoordinatorTest.MemoryLog();
    private final AtomicLong nextProducerId = new AtomicLong(1000);
    private TransactionCoordinator coordinator;

    @AfterEach
    void close() {
        if (coordinator != null) {
            coordinator.close();
        }
    }

    private void awaitLoaded() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!coordinator.isLoaded("t") && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(coordinator.isLoaded("t")).isTrue();
    }

    @Test
    void aPartitionNoLongerLedIsUnloadedAndAnswersNotCoordinator() throws Exception {
        coordinator = new TransactionCoordinator(new TransactionCoordinatorSettings(1, 900_000, 604_800_000L, 3_600_000L),
            log, new TransactionCoordinatorTest.RecordingMarkers(), nextProducerId::getAndIncrement, time, 1);
        coordinator.onPartitionsLed(Map.of(0, 0));
        awaitLoaded();
        assertThat(coordinator.initProducerId("t", 60_000, -1, (short) -1).get(10, TimeUnit.SECONDS).error()).isEqualTo(ErrorCode.NONE);

        coordinator.onPartitionsLed(Map.of());

        assertThat(coordinator.coordinates("t")).isFalse();
        assertThat(coordinator.initProducerId("t", 60_000, -1, (short) -1).get(10, TimeUnit.SECONDS).error())
            .isEqualTo(ErrorCode.NOT_COORDINATOR);

        // Led again at a later epoch: reloaded from the log, the transactional id is known again.
        coordinator.onPartitionsLed(Map.of(0, 3));
        awaitLoaded();
        assertThat(coordinator.initProducerId("t", 60_000, -1, (short) -1).get(10, TimeUnit.SECONDS).error()).isEqualTo(ErrorCode.NONE);
    }

    @Test
    void aNewLeaderEpochReloadsThePartition() throws Exception {
        coordinator = new TransactionCoordinator(new TransactionCoordinatorSettings(1, 900_000, 604_800_000L, 3_600_000L),
            log, new TransactionCoordinatorTest.RecordingMarkers(), nextProducerId::getAndIncrement, time, 1);
        coordinator.onPartitionsLed(Map.of(0, 0));
        awaitLoaded();
        coordinator.onPartitionsLed(Map.of(0, 0));
        assertThat(coordinator.isLoaded("t")).as("same epoch: kept").isTrue();

        coordinator.onPartitionsLed(Map.of(0, 1));
        awaitLoaded();
        assertThat(coordinator.coordinates("t")).isTrue();
    }
}
