package io.strata.coordinator.transaction;

import io.strata.common.MockTime;
import io.strata.coordinator.group.CoordinatorLog;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The transaction coordinator's state machine over an in-memory state log: epochs and fencing,
 * the two-phase commit, and resumption of prepared transactions after a restart.
 */
class TransactionCoordinatorTest {
    private static final TransactionMetadata.TxnPartition P0 = new TransactionMetadata.TxnPartition("orders", 0);
    private static final TransactionMetadata.TxnPartition P1 = new TransactionMetadata.TxnPartition("orders", 1);

    /** An in-memory __transaction_state: every appended record, replayed in order. */
    static final class MemoryLog implements CoordinatorLog {
        final List<ByteBuffer[]> records = new CopyOnWriteArrayList<>();

        @Override
        public void append(int partition, MemoryRecords batch, Consumer<ErrorCode> callback) {
            for (RecordBatch entry : batch.batches()) {
                for (Record record : ((DefaultRecordBatch) entry).records()) {
                    records.add(new ByteBuffer[] {copy(record.key()), record.value() == null ? null : copy(record.value())});
                }
            }
            callback.accept(ErrorCode.NONE);
        }

        static ByteBuffer copy(ByteBuffer buffer) {
            ByteBuffer copy = ByteBuffer.allocate(buffer.remaining());
            copy.put(buffer.duplicate()).flip();
            return copy;
        }

        @Override
        public void replay(int partition, BiConsumer<ByteBuffer, ByteBuffer> consumer) {
            for (ByteBuffer[] record : records) {
                consumer.accept(record[0].duplicate(), record[1] == null ? null : record[1].duplicate());
            }
        }
    }

    /** Records every marker request; completes them only when told to. */
    static final class RecordingMarkers implements MarkerWriter {
        final List<String> written = new CopyOnWriteArrayList<>();
        volatile boolean hold;
        final List<Runnable> held = new CopyOnWriteArrayList<>();

        @Override
        public void writeMarkers(long producerId, short producerEpoch, int coordinatorEpoch, boolean commit,
                                 Set<TransactionMetadata.TxnPartition> partitions, Consumer<Map<TransactionMetadata.TxnPartition, ErrorCode>> done) {
            Runnable complete = () -> {
                Map<TransactionMetadata.TxnPartition, ErrorCode> results = new LinkedHashMap<>();
                for (TransactionMetadata.TxnPartition partition : partitions) {
                    written.add((commit ? "COMMIT " : "ABORT ") + partition.topic() + "-" + partition.partition() + " pid=" + producerId
                        + " epoch=" + producerEpoch);
                    results.put(partition, ErrorCode.NONE);
                }
                done.accept(results);
            };
            if (hold) {
                held.add(complete);
            } else {
                complete.run();
            }
        }
    }

    private final MockTime time = new MockTime();
    private final MemoryLog log = new MemoryLog();
    private final AtomicLong nextProducerId = new AtomicLong(1000);
    private final List<TransactionCoordinator> started = new ArrayList<>();

    @AfterEach
    void close() {
        started.forEach(TransactionCoordinator::close);
    }

    private TransactionCoordinator start(RecordingMarkers markers) throws Exception {
        TransactionCoordinator coordinator = new TransactionCoordinator(new TransactionCoordinatorSettings(1, 900_000, 604_800_000L, 3_600_000L),
            log, markers, nextProducerId::getAndIncrement, time, 1);
        started.add(coordinator);
        coordinator.onPartitionsLed(Map.of(0, 0));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!coordinator.isLoaded("t") && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(coordinator.isLoaded("t")).isTrue();
        return coordinator;
    }

    private static <T> T get(java.util.concurrent.CompletableFuture<T> future) throws Exception {
        return future.get(10, TimeUnit.SECONDS);
    }

    /**
     * The keys the coordinator writes name their transactional id where
     * {@link io.strata.coordinator.CoordinatorPlacement#idOfKey} reads it, and a transactional id
     * an earlier Strata placed in its legacy partition loads, after the move, from Kafka's.
     */
    @Test
    void aTransactionalIdInItsLegacyPartitionLoadsFromKafkasAfterTheMove() throws Exception {
        String id = "compat-consumer";   // hashCode -1532647967: legacy partition 0 of 3, Kafka's 2
        TransactionCoordinator writer = start(new RecordingMarkers());
        TransactionCoordinator.InitResult init = get(writer.initProducerId(id, 60_000, -1, (short) -1));
        assertThat(init.error()).isEqualTo(ErrorCode.NONE);
        assertThat(log.records).isNotEmpty().allSatisfy(record ->
            assertThat(io.strata.coordinator.CoordinatorPlacement.idOfKey(record[0])).isEqualTo(id));

        // Lay the single-partition log out as partition 0 of three (where the legacy rule put the id).
        java.util.List<java.util.List<ByteBuffer[]>> partitions = java.util.List.of(new java.util.ArrayList<>(log.records),
            new java.util.ArrayList<>(), new java.util.ArrayList<>());
        CoordinatorLog three = new CoordinatorLog() {
            @Override
            public void append(int partition, MemoryRecords batch, Consumer<ErrorCode> callback) {
                for (RecordBatch entry : batch.batches()) {
                    for (Record record : ((DefaultRecordBatch) entry).records()) {
                        partitions.get(partition).add(new ByteBuffer[] {MemoryLog.copy(record.key()),
                            record.value() == null ? null : MemoryLog.copy(record.value())});
                    }
                }
                callback.accept(ErrorCode.NONE);
            }

            @Override
            public void replay(int partition, BiConsumer<ByteBuffer, ByteBuffer> consumer) {
                for (ByteBuffer[] record : partitions.get(partition)) {
                    consumer.accept(record[0].duplicate(), record[1] == null ? null : record[1].duplicate());
                }
            }
        };
        assertThat(io.strata.coordinator.CoordinatorPlacement.relocate("__transaction_state", three, 3, time.milliseconds()).idsMoved())
            .containsExactly(id);

        TransactionCoordinator reader = new TransactionCoordinator(new TransactionCoordinatorSettings(3, 900_000, 604_800_000L, 3_600_000L),
            three, new RecordingMarkers(), nextProducerId::getAndIncrement, time, 1);
        started.add(reader);
        assertThat(reader.partitionFor(id)).isEqualTo(2);
        reader.onPartitionsLed(Map.of(0, 0, 1, 0, 2, 0));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!reader.isLoaded(id) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(reader.isLoaded(id)).isTrue();
        // The same producer id comes back with the next epoch: the moved state was found.
        TransactionCoordinator.InitResult again = get(reader.initProducerId(id, 60_000, -1, (short) -1));
        assertThat(again.error()).isEqualTo(ErrorCode.NONE);
        assertThat(again.producerId()).isEqualTo(init.producerId());
        assertThat(again.producerEpoch()).isEqualTo((short) (init.producerEpoch() + 1));
    }

    @Test
    void initBumpsTheEpochAndAReinitFencesTheOldProducer() throws Exception {
        RecordingMarkers markers = new RecordingMarkers();
        TransactionCoordinator coordinator = start(markers);
        TransactionCoordinator.InitResult first = get(coordinator.initProducerId("t", 60_000, -1, (short) -1));
        assertThat(first.error()).isEqualTo(ErrorCode.NONE);
        assertThat(first.producerEpoch()).isZero();
        assertThat(get(coordinator.addPartitions("t", first.producerId(), first.producerEpoch(), Set.of(P0)))).isEqualTo(ErrorCode.NONE);

        // A new instance with the same transactional id: the open transaction is aborted with a bumped epoch.
        assertThat(get(coordinator.initProducerId("t", 60_000, -1, (short) -1)).error()).isEqualTo(ErrorCode.CONCURRENT_TRANSACTIONS);
        // While the abort's markers are written, InitProducerId keeps answering CONCURRENT_TRANSACTIONS; clients retry.
        TransactionCoordinator.InitResult second = get(coordinator.initProducerId("t", 60_000, -1, (short) -1));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (second.error() == ErrorCode.CONCURRENT_TRANSACTIONS && System.nanoTime() < deadline) {
            second = get(coordinator.initProducerId("t", 60_000, -1, (short) -1));
        }
        assertThat(second.error()).isEqualTo(ErrorCode.NONE);
        assertThat(second.producerId()).isEqualTo(first.producerId());
        assertThat(second.producerEpoch()).isEqualTo((short) 2);
        assertThat(markers.written).containsExactly("ABORT orders-0 pid=" + first.producerId() + " epoch=1");

        // The zombie can no longer add partitions or end its transaction.
        assertThat(get(coordinator.addPartitions("t", first.producerId(), first.producerEpoch(), Set.of(P1)))).isEqualTo(ErrorCode.PRODUCER_FENCED);
        assertThat(get(coordinator.endTransaction("t", first.producerId(), first.producerEpoch(), true))).isEqualTo(ErrorCode.PRODUCER_FENCED);
        assertThat(get(coordinator.addPartitions("t", 4242L, second.producerEpoch(), Set.of(P1)))).isEqualTo(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    }

    @Test
    void commitWritesMarkersToEveryPartitionAndIsIdempotentOnRetry() throws Exception {
        RecordingMarkers markers = new RecordingMarkers();
        TransactionCoordinator coordinator = start(markers);
        TransactionCoordinator.InitResult producer = get(coordinator.initProducerId("t", 60_000, -1, (short) -1));
        get(coordinator.addPartitions("t", producer.producerId(), producer.producerEpoch(), Set.of(P0)));
        get(coordinator.addPartitions("t", producer.producerId(), producer.producerEpoch(), Set.of(P1)));
        assertThat(get(coordinator.endTransaction("t", producer.producerId(), producer.producerEpoch(), true))).isEqualTo(ErrorCode.NONE);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!"CompleteCommit".equals(get(coordinator.describe("t")).state()) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(get(coordinator.describe("t")).state()).isEqualTo("CompleteCommit");
        assertThat(markers.written).containsExactlyInAnyOrder("COMMIT orders-0 pid=" + producer.producerId() + " epoch=0",
            "COMMIT orders-1 pid=" + producer.producerId() + " epoch=0");
        assertThat(get(coordinator.endTransaction("t", producer.producerId(), producer.producerEpoch(), true))).isEqualTo(ErrorCode.NONE);
        assertThat(get(coordinator.endTransaction("t", producer.producerId(), producer.producerEpoch(), false))).isEqualTo(ErrorCode.INVALID_TXN_STATE);
    }

    @Test
    void aRestartBetweenPrepareAndCompleteFinishesTheCommit() throws Exception {
        RecordingMarkers stuck = new RecordingMarkers();
        stuck.hold = true;
        TransactionCoordinator before = start(stuck);
        TransactionCoordinator.InitResult producer = get(before.initProducerId("t", 60_000, -1, (short) -1));
        get(before.addPartitions("t", producer.producerId(), producer.producerEpoch(), Set.of(P0, P1)));
        assertThat(get(before.endTransaction("t", producer.producerId(), producer.producerEpoch(), true))).isEqualTo(ErrorCode.NONE);
        assertThat(get(before.describe("t")).state()).isEqualTo("PrepareCommit");
        before.close(); // crash: the markers were never written

        RecordingMarkers markers = new RecordingMarkers();
        TransactionCoordinator after = start(markers);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!"CompleteCommit".equals(get(after.describe("t")).state()) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(get(after.describe("t")).state()).isEqualTo("CompleteCommit");
        assertThat(markers.written).hasSize(2).allMatch(marker -> marker.startsWith("COMMIT "));
        // The producer continues with the same id and a bumped epoch.
        TransactionCoordinator.InitResult again = get(after.initProducerId("t", 60_000, producer.producerId(), producer.producerEpoch()));
        assertThat(again.error()).isEqualTo(ErrorCode.NONE);
        assertThat(again.producerEpoch()).isEqualTo((short) 1);
    }

    @Test
    void timeoutsAreValidatedAndUnknownTransactionsAreReported() throws Exception {
        TransactionCoordinator coordinator = start(new RecordingMarkers());
        assertThat(get(coordinator.initProducerId("t", 0, -1, (short) -1)).error()).isEqualTo(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
        assertThat(get(coordinator.initProducerId("t", 1_000_000, -1, (short) -1)).error()).isEqualTo(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
        assertThat(get(coordinator.endTransaction("unknown", 1L, (short) 0, true))).isEqualTo(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
        assertThat(get(coordinator.describe("unknown"))).isNull();
    }
}
