package io.strata.coordinator.group;

import io.strata.common.BackgroundErrors;
import io.strata.common.MockTime;
import io.strata.coordinator.SteppedCoordinatorTimers;
import io.strata.coordinator.group.consumer.ConsumerGroupSettings;
import io.strata.coordinator.group.consumer.TopicsView;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.OffsetCommitRequestData;
import io.strata.protocol.records.MemoryRecords;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The group coordinator's offset expiration pass runs on the shard's coordinator timer (stepped
 * here on a mock clock) and survives a pass that throws: the failure is counted, the next pass
 * expires the offsets.
 */
class GroupCoordinatorBackgroundTest {
    private static final long RETENTION_MS = TimeUnit.DAYS.toMillis(7);
    private static final long CHECK_INTERVAL_MS = TimeUnit.MINUTES.toMillis(10);

    /** The in-memory partition, whose next appends can be made to throw. */
    static final class FailingLog implements CoordinatorLog {
        final OffsetExpirationTest.MemoryLog delegate = new OffsetExpirationTest.MemoryLog();
        final AtomicInteger failNext = new AtomicInteger();

        @Override
        public void append(int partition, MemoryRecords records, Consumer<ErrorCode> callback) {
            if (failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new IllegalStateException("injected append failure");
            }
            delegate.append(partition, records, callback);
        }

        @Override
        public void replay(int partition, BiConsumer<ByteBuffer, ByteBuffer> records) {
            delegate.replay(partition, records);
        }

        @Override
        public void replayTransactional(int partition, TransactionalReplay replay) {
            delegate.replayTransactional(partition, replay);
        }
    }

    private final MockTime time = new MockTime();
    private final FailingLog log = new FailingLog();
    private final SteppedCoordinatorTimers timers = new SteppedCoordinatorTimers(time);
    private final BackgroundErrors errors = new BackgroundErrors();
    private GroupCoordinator coordinator;

    @AfterEach
    void stop() {
        if (coordinator != null) {
            coordinator.close();
        }
    }

    private static <T> T get(CompletableFuture<T> future) throws Exception {
        return future.get(10, TimeUnit.SECONDS);
    }

    private void start() throws Exception {
        coordinator = new GroupCoordinator(new GroupCoordinatorSettings(1, 1, 3_600_000, 0, 100, 4096, 1, RETENTION_MS, CHECK_INTERVAL_MS),
            log, time, timers, errors);
        coordinator.configureConsumerGroups(new ConsumerGroupSettings(1000, 3_600_000, 100, ConsumerGroupSettings.DEFAULT_ASSIGNORS),
            () -> TopicsView.EMPTY);
        coordinator.onPartitionsLed(Set.of(0));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!coordinator.isLoaded() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(coordinator.isLoaded()).isTrue();
    }

    private Map<String, Long> committed(String group) throws Exception {
        Map<String, Long> offsets = new TreeMap<>();
        get(coordinator.fetchOffsets(group, null)).offsets().forEach((topic, partitions) ->
            partitions.forEach((partition, offset) -> offsets.put(topic + "-" + partition, offset.offset())));
        return offsets;
    }

    @Test
    void theExpirationPassRunsOnTheCoordinatorTimerAndSurvivesAPassThatThrew() throws Exception {
        start();
        OffsetCommitRequestData request = new OffsetCommitRequestData().setGroupId("simple").setGenerationIdOrMemberEpoch(-1).setMemberId("");
        request.topics().add(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("orders")
            .setPartitions(new ArrayList<>(List.of(new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0)
                .setCommittedOffset(42).setCommittedMetadata("")))));
        assertThat(get(coordinator.commitOffsets(request, (short) 8))).extracting(GroupCoordinator.CommitResult::error)
            .containsOnly(ErrorCode.NONE);

        // Every pass up to the retention finds nothing; the one at the retention fails writing its tombstones.
        timers.advance(RETENTION_MS - CHECK_INTERVAL_MS);
        assertThat(committed("simple")).containsEntry("orders-0", 42L);
        log.failNext.set(1);
        timers.advance(CHECK_INTERVAL_MS);
        assertThat(errors.count(GroupShard.EXPIRATION_TASK)).isEqualTo(1);
        assertThat(committed("simple")).containsEntry("orders-0", 42L);

        timers.advance(CHECK_INTERVAL_MS);
        assertThat(committed("simple")).isEmpty();
        assertThat(log.delegate.offsetTombstones("simple")).containsExactly("orders-0");
        assertThat(errors.count(GroupShard.EXPIRATION_TASK)).isEqualTo(1);
    }
}
