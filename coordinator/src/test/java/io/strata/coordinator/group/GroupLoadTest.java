package io.strata.coordinator.group;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.strata.common.MockTime;
import io.strata.coordinator.group.consumer.ConsumerGroupSettings;
import io.strata.coordinator.group.consumer.TopicsView;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Loading a {@code __consumer_offsets} partition that holds records this coordinator cannot
 * apply (corrupt bytes, an unknown record type): each is skipped with a warning naming the
 * partition and the offset, and the records after it still load.
 */
class GroupLoadTest {
    private final MockTime time = new MockTime();
    private final OffsetExpirationTest.MemoryLog log = new OffsetExpirationTest.MemoryLog();
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    private final Logger storeLogger = (Logger) LoggerFactory.getLogger(GroupStore.class);
    private GroupCoordinator coordinator;

    @BeforeEach
    void captureLogs() {
        logged.start();
        storeLogger.addAppender(logged);
    }

    @AfterEach
    void stop() {
        storeLogger.detachAppender(logged);
        if (coordinator != null) {
            coordinator.close();
        }
    }

    private void add(byte[] key, byte[] value) {
        log.entries.add(new OffsetExpirationTest.MemoryLog.Entry(ByteBuffer.wrap(key), value == null ? null : ByteBuffer.wrap(value), -1, false,
            null));
    }

    private static byte[] offset(long offset) {
        return GroupStore.offsetValue(new OffsetAndMetadata(offset, -1, "", 1_700_000_000_000L, -1));
    }

    private Map<String, Long> committed(String group) throws Exception {
        Map<String, Long> offsets = new TreeMap<>();
        coordinator.fetchOffsets(group, null).get(10, TimeUnit.SECONDS).offsets().forEach((topic, partitions) ->
            partitions.forEach((partition, offset) -> offsets.put(topic + "-" + partition, offset.offset())));
        return offsets;
    }

    private List<String> warnings() {
        return logged.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Test
    void unreadableRecordsAreLoggedWithPartitionAndOffsetAndTheLoadGoesOn() throws Exception {
        add(GroupStore.offsetKey("before", "orders", 0), offset(10));
        byte[] key = GroupStore.offsetKey("corrupt", "orders", 0);
        add(Arrays.copyOf(key, key.length - 3), offset(11));          // offset 1: the key is cut short
        add(GroupStore.offsetKey("corrupt-value", "orders", 0), new byte[] {0, 3, 1});  // offset 2: a value cut short
        add(new byte[] {0, 99, 0, 0}, new byte[] {0, 0});             // offset 3: a record type nobody defines
        add(GroupStore.offsetKey("after", "orders", 0), offset(12));

        coordinator = new GroupCoordinator(new GroupCoordinatorSettings(1, 1, 3_600_000, 0, 100, 4096, 1, TimeUnit.DAYS.toMillis(7),
            TimeUnit.DAYS.toMillis(365)), log, time);
        coordinator.configureConsumerGroups(new ConsumerGroupSettings(1000, 3_600_000, 100, ConsumerGroupSettings.DEFAULT_ASSIGNORS),
            () -> TopicsView.EMPTY);
        coordinator.onPartitionsLed(Set.of(0));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!coordinator.isLoaded() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(coordinator.isLoaded()).isTrue();

        assertThat(committed("before")).containsExactly(Map.entry("orders-0", 10L));
        assertThat(committed("after")).containsExactly(Map.entry("orders-0", 12L));
        assertThat(committed("corrupt-value")).isEmpty();
        assertThat(warnings()).hasSize(3);
        assertThat(warnings().get(0)).contains("offset 1 of __consumer_offsets-0").contains("key type 1");
        assertThat(warnings().get(1)).contains("offset 2 of __consumer_offsets-0");
        assertThat(warnings().get(2)).contains("unknown type 99").contains("offset 3 of __consumer_offsets-0");
        GroupShard shard = coordinator.shard(0);
        assertThat(CompletableFuture.supplyAsync(shard::skippedRecords, shard.executor()).get(10, TimeUnit.SECONDS)).isEqualTo(3);
    }
}
