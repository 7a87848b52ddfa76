package io.strata.coordinator.group;

import io.strata.common.MockTime;
import io.strata.coordinator.CoordinatorPlacement;
import io.strata.coordinator.group.consumer.ConsumerGroupSettings;
import io.strata.coordinator.group.consumer.TopicsView;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka's placement of groups and transactional ids, and the move of what Strata's earlier
 * placement put in another partition: a legacy layout loads under Kafka's placement with every
 * committed offset, a Kafka layout is left as it is, and a second run moves nothing.
 */
class CoordinatorPlacementTest {
    private static final int PARTITIONS = 3;
    /** hashCode -1532647967: legacy partition 0, Kafka's 2. */
    private static final String MOVING = "compat-consumer";
    /** hashCode -145821487: partition 1 by both rules. */
    private static final String NEGATIVE_STAYING = "compat-txn-group";
    /** hashCode 1653779783: partition 2 by both rules. */
    private static final String POSITIVE = "compat-classic";

    private final MockTime time = new MockTime();
    private final PartitionedLog log = new PartitionedLog(PARTITIONS);
    private GroupCoordinator coordinator;

    @AfterEach
    void stop() {
        if (coordinator != null) {
            coordinator.close();
        }
    }

    @Test
    void kafkasPlacementIsAbsOfTheHashWithMinValueAtZero() {
        assertThat(MOVING.hashCode()).isNegative();
        assertThat(CoordinatorPlacement.legacyPartitionFor(MOVING, PARTITIONS)).isEqualTo(0);
        assertThat(CoordinatorPlacement.partitionFor(MOVING, PARTITIONS)).isEqualTo(2);
        assertThat(CoordinatorPlacement.partitionFor(NEGATIVE_STAYING, PARTITIONS)).isEqualTo(1)
            .isEqualTo(CoordinatorPlacement.legacyPartitionFor(NEGATIVE_STAYING, PARTITIONS));
        assertThat(CoordinatorPlacement.partitionFor(POSITIVE, PARTITIONS)).isEqualTo(2);
        // "polygenelubricants".hashCode() == Integer.MIN_VALUE: Kafka's Utils.abs gives 0.
        assertThat("polygenelubricants".hashCode()).isEqualTo(Integer.MIN_VALUE);
        assertThat(CoordinatorPlacement.partitionFor("polygenelubricants", 7)).isZero();
        for (int i = 0; i < 10_000; i++) {
            String id = "group-" + i;
            assertThat(CoordinatorPlacement.partitionFor(id, 50)).isEqualTo(kafkaUtilsAbs(id.hashCode()) % 50);
        }
    }

    /** Kafka's org.apache.kafka.common.utils.Utils.abs, restated. */
    private static int kafkaUtilsAbs(int n) {
        return n == Integer.MIN_VALUE ? 0 : Math.abs(n);
    }

    @Test
    void theGroupCoordinatorUsesKafkasPlacement() {
        GroupCoordinator coordinator = newCoordinator();
        assertThat(coordinator.partitionFor(MOVING)).isEqualTo(2);
        assertThat(coordinator.partitionFor(POSITIVE)).isEqualTo(2);
        coordinator.close();
    }

    @Test
    void aLegacyLayoutLoadsUnderKafkasPlacementWithEveryCommittedOffset() throws Exception {
        // What an earlier Strata wrote: each group in its legacy partition.
        log.add(0, GroupStore.offsetKey(MOVING, "orders", 0), offset(5));
        log.add(0, GroupStore.offsetKey(MOVING, "orders", 0), offset(7));          // the later commit wins
        log.add(0, GroupStore.offsetKey(MOVING, "orders", 1), offset(3));
        log.add(0, GroupStore.offsetKey(MOVING, "gone", 0), offset(1));
        log.add(0, GroupStore.offsetKey(MOVING, "gone", 0), null);                 // deleted: nothing to move
        log.addTransactional(0, 42L, GroupStore.offsetKey(MOVING, "txn", 0), offset(11));
        log.addTransactional(0, 43L, GroupStore.offsetKey(MOVING, "aborted", 0), offset(99));
        log.marker(0, 43L, false);
        log.add(0, GroupStore.offsetKey(MOVING, "orders", 1), offset(4));
        log.marker(0, 42L, true);
        log.addTransactional(0, 44L, GroupStore.offsetKey(MOVING, "open", 0), offset(50));   // no marker yet
        log.add(1, GroupStore.offsetKey(NEGATIVE_STAYING, "orders", 0), offset(8));
        log.add(2, GroupStore.offsetKey(POSITIVE, "orders", 2), offset(9));
        int sizeBefore1 = log.size(1);
        int sizeBefore2 = log.size(2);

        CoordinatorPlacement.Result result = CoordinatorPlacement.relocate("__consumer_offsets", log, PARTITIONS, time.milliseconds());

        assertThat(result.idsMoved()).containsExactly(MOVING);
        assertThat(result.recordsCopied()).isEqualTo(3);   // orders-0, orders-1, txn-0: the last value of each live key
        assertThat(result.openTransactionIds()).containsExactly(MOVING);
        assertThat(log.size(1)).isEqualTo(sizeBefore1);
        assertThat(log.size(2)).isEqualTo(sizeBefore2 + 3);

        coordinator = load();
        assertThat(committed(MOVING)).containsExactly(Map.entry("orders-0", 7L), Map.entry("orders-1", 4L), Map.entry("txn-0", 11L));
        assertThat(committed(NEGATIVE_STAYING)).containsExactly(Map.entry("orders-0", 8L));
        assertThat(committed(POSITIVE)).containsExactly(Map.entry("orders-2", 9L));
        // The legacy partition no longer holds the group: the tombstones came after the copies.
        assertThat(log.liveKeysOf(0, MOVING)).isEmpty();
    }

    @Test
    void aSecondRunMovesNothing() throws Exception {
        log.add(0, GroupStore.offsetKey(MOVING, "orders", 0), offset(7));
        assertThat(CoordinatorPlacement.relocate("__consumer_offsets", log, PARTITIONS, time.milliseconds()).recordsCopied()).isEqualTo(1);
        int[] sizes = {log.size(0), log.size(1), log.size(2)};

        CoordinatorPlacement.Result again = CoordinatorPlacement.relocate("__consumer_offsets", log, PARTITIONS, time.milliseconds());

        assertThat(again.movedAnything()).isFalse();
        assertThat(new int[] {log.size(0), log.size(1), log.size(2)}).containsExactly(sizes);
        coordinator = load();
        assertThat(committed(MOVING)).containsExactly(Map.entry("orders-0", 7L));
    }

    @Test
    void aLayoutWrittenByKafkaIsLeftAsItIs() throws Exception {
        // Kafka put the group in its partition 2; its legacy partition (0) has nothing of it.
        log.add(2, GroupStore.offsetKey(MOVING, "orders", 0), offset(7));
        log.add(1, GroupStore.offsetKey(NEGATIVE_STAYING, "orders", 0), offset(8));

        CoordinatorPlacement.Result result = CoordinatorPlacement.relocate("__consumer_offsets", log, PARTITIONS, time.milliseconds());

        assertThat(result.movedAnything()).isFalse();
        assertThat(log.size(0)).isZero();
        coordinator = load();
        assertThat(committed(MOVING)).containsExactly(Map.entry("orders-0", 7L));
    }

    @Test
    void keysOfEveryRecordTypeNameTheirId() {
        assertThat(CoordinatorPlacement.idOfKey(ByteBuffer.wrap(GroupStore.offsetKey("g", "t", 0)))).isEqualTo("g");
        assertThat(CoordinatorPlacement.idOfKey(ByteBuffer.wrap(GroupStore.groupKey("classic")))).isEqualTo("classic");
        assertThat(CoordinatorPlacement.idOfKey(ByteBuffer.wrap(new byte[] {0, 1, 0}))).isNull();
        assertThat(CoordinatorPlacement.idOfKey(ByteBuffer.wrap(new byte[] {0, 1, 0, 9, 'x'}))).isNull();
        assertThat(CoordinatorPlacement.idOfKey(null)).isNull();
    }

    private GroupCoordinator newCoordinator() {
        GroupCoordinator created = new GroupCoordinator(new GroupCoordinatorSettings(PARTITIONS, 1, 3_600_000, 0, 100, 4096, 1,
            TimeUnit.DAYS.toMillis(7), TimeUnit.DAYS.toMillis(365)), log, time);
        created.configureConsumerGroups(new ConsumerGroupSettings(1000, 3_600_000, 100, ConsumerGroupSettings.DEFAULT_ASSIGNORS),
            () -> TopicsView.EMPTY);
        return created;
    }

    private GroupCoordinator load() {
        GroupCoordinator loaded = newCoordinator();
        loaded.onPartitionsLed(Set.of(0, 1, 2));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!loaded.isLoaded() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(loaded.isLoaded()).isTrue();
        return loaded;
    }

    private Map<String, Long> committed(String group) throws Exception {
        Map<String, Long> offsets = new TreeMap<>();
        coordinator.fetchOffsets(group, null).get(10, TimeUnit.SECONDS).offsets().forEach((topic, partitions) ->
            partitions.forEach((partition, offset) -> offsets.put(topic + "-" + partition, offset.offset())));
        return offsets;
    }

    private static byte[] offset(long offset) {
        return GroupStore.offsetValue(new OffsetAndMetadata(offset, -1, "", 1_700_000_000_000L, -1));
    }

    /** A coordinator log of several partitions in memory; an entry's index is its offset. */
    static final class PartitionedLog implements CoordinatorLog {
        record Entry(ByteBuffer key, ByteBuffer value, long producerId, boolean transactional, Boolean marker) {
        }

        private final List<List<Entry>> partitions = new ArrayList<>();

        PartitionedLog(int count) {
            for (int i = 0; i < count; i++) {
                partitions.add(new CopyOnWriteArrayList<>());
            }
        }

        void add(int partition, byte[] key, byte[] value) {
            partitions.get(partition).add(new Entry(ByteBuffer.wrap(key), value == null ? null : ByteBuffer.wrap(value), -1L, false, null));
        }

        void addTransactional(int partition, long producerId, byte[] key, byte[] value) {
            partitions.get(partition).add(new Entry(ByteBuffer.wrap(key), ByteBuffer.wrap(value), producerId, true, null));
        }

        void marker(int partition, long producerId, boolean commit) {
            partitions.get(partition).add(new Entry(null, null, producerId, true, commit));
        }

        int size(int partition) {
            return partitions.get(partition).size();
        }

        /** Keys of {@code id} whose last record in the partition is not a tombstone. */
        Set<String> liveKeysOf(int partition, String id) {
            Map<ByteBuffer, Boolean> live = new java.util.LinkedHashMap<>();
            for (Entry entry : partitions.get(partition)) {
                if (entry.marker() == null && !entry.transactional() && id.equals(CoordinatorPlacement.idOfKey(entry.key()))) {
                    live.put(entry.key(), entry.value() != null);
                }
            }
            Set<String> keys = new java.util.TreeSet<>();
            live.forEach((key, present) -> {
                if (present) {
                    keys.add(StandardCharsets.ISO_8859_1.decode(key.duplicate()).toString());
                }
            });
            return keys;
        }

        @Override
        public void append(int partition, MemoryRecords batch, Consumer<ErrorCode> callback) {
            for (RecordBatch each : batch.batches()) {
                DefaultRecordBatch entry = (DefaultRecordBatch) each;
                for (Record record : entry.records()) {
                    partitions.get(partition).add(new Entry(copy(record.key()), record.value() == null ? null : copy(record.value()),
                        entry.producerId(), entry.isTransactional(), null));
                }
            }
            callback.accept(ErrorCode.NONE);
        }

        private static ByteBuffer copy(ByteBuffer buffer) {
            ByteBuffer copy = ByteBuffer.allocate(buffer.remaining());
            copy.put(buffer.duplicate()).flip();
            return copy;
        }

        @Override
        public void replay(int partition, BiConsumer<ByteBuffer, ByteBuffer> consumer) {
            for (Entry entry : partitions.get(partition)) {
                if (entry.marker() == null) {
                    consumer.accept(entry.key().duplicate(), entry.value() == null ? null : entry.value().duplicate());
                }
            }
        }

        @Override
        public void replayTransactional(int partition, TransactionalReplay replay) {
            List<Entry> entries = partitions.get(partition);
            for (int offset = 0; offset < entries.size(); offset++) {
                Entry entry = entries.get(offset);
                if (entry.marker() != null) {
                    replay.marker(entry.producerId(), entry.marker());
                } else {
                    replay.record(entry.key().duplicate(), entry.value() == null ? null : entry.value().duplicate(), entry.producerId(),
                        entry.transactional(), offset);
                }
            }
        }
    }
}
