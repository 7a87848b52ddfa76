package io.strata.coordinator.transaction;

import io.strata.common.MockTime;
import io.strata.coordinator.record.TransactionLogKey;
import io.strata.coordinator.record.TransactionLogValue;
import io.strata.protocol.ByteBufferWriter;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Transactions v2 (KIP-890 part 2) in the coordinator: the epoch bump of every EndTxn, retries
 * and fencing around it, producer id rotation when the epoch is exhausted, and the expiration of
 * idle transactional ids (transactional.id.expiration.ms) under a mock clock.
 */
class TransactionsV2CoordinatorTest {
    private static final short TV2 = TransactionMetadata.TRANSACTION_VERSION_2;
    private static final TransactionMetadata.TxnPartition P0 = new TransactionMetadata.TxnPartition("orders", 0);
    private static final TransactionMetadata.TxnPartition P1 = new TransactionMetadata.TxnPartition("orders", 1);
    private static final long EXPIRATION_MS = 7 * 24 * 3_600_000L;

    private final MockTime time = new MockTime();
    private final TransactionCoordinatorTest.MemoryLog log = new TransactionCoordinatorTest.MemoryLog();
    private final AtomicLong nextProducerId = new AtomicLong(1000);
    private final List<TransactionCoordinator> started = new ArrayList<>();

    @AfterEach
    void close() {
        started.forEach(TransactionCoordinator::close);
    }

    private TransactionCoordinator start(TransactionCoordinatorTest.RecordingMarkers markers) {
        // The background checks are scheduled an hour apart; the tests run them by hand under the mock clock.
        TransactionCoordinator coordinator = new TransactionCoordinator(new TransactionCoordinatorSettings(1, 900_000, EXPIRATION_MS,
            3_600_000L, 3_600_000L), log, markers, nextProducerId::getAndIncrement, time, 1);
        started.add(coordinator);
        coordinator.onPartitionsLed(Map.of(0, 0));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!coordinator.isLoaded("t") && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(coordinator.isLoaded("t")).isTrue();
        return coordinator;
    }

    private static <T> T get(CompletableFuture<T> future) throws Exception {
        return future.get(10, TimeUnit.SECONDS);
    }

    private static void awaitState(TransactionCoordinator coordinator, String id, String state) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!state.equals(get(coordinator.describe(id)).state()) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(get(coordinator.describe(id)).state()).isEqualTo(state);
    }

    private static TransactionCoordinator.EndResult end(TransactionCoordinator coordinator, long producerId, int epoch, boolean commit)
        throws Exception {
        return get(coordinator.endTransaction("t", producerId, (short) epoch, commit, TV2));
    }

    private static TransactionCoordinator.EndResult ok(long producerId, int epoch) {
        return new TransactionCoordinator.EndResult(ErrorCode.NONE, producerId, (short) epoch);
    }

    private static TransactionCoordinator.EndResult failed(ErrorCode error) {
        return new TransactionCoordinator.EndResult(error, -1, (short) -1);
    }

    /** Writes a state record for "t" into the log before a coordinator loads it, as an earlier coordinator would have. */
    private void seed(long producerId, short epoch, TransactionState state) {
        TransactionLogValue value = new TransactionLogValue().setProducerId(producerId).setProducerEpoch(epoch).setTransactionTimeoutMs(60_000)
            .setTransactionStatus(state.id).setTransactionLastUpdateTimestampMs(time.milliseconds()).setTransactionStartTimestampMs(-1)
            .setClientTransactionVersion(TV2);
        log.records.add(new ByteBuffer[] {encode((short) 0, new TransactionLogKey().setTransactionalId("t")), encode((short) 1, value)});
    }

    private static ByteBuffer encode(short version, Message message) {
        ByteBuffer buffer = ByteBuffer.allocate(2 + message.size(version));
        buffer.putShort(version);
        message.write(new ByteBufferWriter(buffer), version);
        return buffer.flip();
    }

    @Test
    void endTxnBumpsTheEpochAndTheMarkersCarryTheBumpedEpoch() throws Exception {
        TransactionCoordinatorTest.RecordingMarkers markers = new TransactionCoordinatorTest.RecordingMarkers();
        TransactionCoordinator coordinator = start(markers);
        TransactionCoordinator.InitResult producer = get(coordinator.initProducerId("t", 60_000, -1, (short) -1));
        long pid = producer.producerId();
        assertThat(get(coordinator.addPartitions("t", pid, (short) 0, Set.of(P0), TV2))).isEqualTo(ErrorCode.NONE);

        assertThat(end(coordinator, pid, 0, true)).isEqualTo(ok(pid, 1));
        awaitState(coordinator, "t", "CompleteCommit");
        assertThat(markers.written).containsExactly("COMMIT orders-0 pid=" + pid + " epoch=1");

        // A late write of the finished transaction (old epoch) cannot open a new one; the new epoch can.
        assertThat(get(coordinator.addPartitions("t", pid, (short) 0, Set.of(P1), TV2))).isEqualTo(ErrorCode.PRODUCER_FENCED);
        assertThat(get(coordinator.addPartitions("t", pid, (short) 1, Set.of(P1), TV2))).isEqualTo(ErrorCode.NONE);
        assertThat(end(coordinator, pid, 1, false)).isEqualTo(ok(pid, 2));
        awaitState(coordinator, "t", "CompleteAbort");
        assertThat(markers.written).last().isEqualTo("ABORT orders-1 pid=" + pid + " epoch=2");
    }

    @Test
    void aRetriedEndTxnAnswersTheSameNewEpochAndOtherEpochsAreFenced() throws Exception {
        TransactionCoordinatorTest.RecordingMarkers markers = new TransactionCoordinatorTest.RecordingMarkers();
        markers.hold = true;
        TransactionCoordinator coordinator = start(markers);
        long pid = get(coordinator.initProducerId("t", 60_000, -1, (short) -1)).producerId();
        get(coordinator.addPartitions("t", pid, (short) 0, Set.of(P0), TV2));
        assertThat(end(coordinator, pid, 0, true)).isEqualTo(ok(pid, 1));

        // While the markers are pending: the retry waits, the other result is invalid. The client already
        // holds epoch 1 and may end its next transaction (e.g. an abort with nothing sent) before this
        // one completes: it waits too, it is not fenced (Kafka's KAFKA-18464). Other epochs are fenced.
        assertThat(end(coordinator, pid, 0, true)).isEqualTo(failed(ErrorCode.CONCURRENT_TRANSACTIONS));
        assertThat(end(coordinator, pid, 0, false)).isEqualTo(failed(ErrorCode.INVALID_TXN_STATE));
        assertThat(end(coordinator, pid, 1, true)).isEqualTo(failed(ErrorCode.CONCURRENT_TRANSACTIONS));
        assertThat(end(coordinator, pid, 1, false)).isEqualTo(failed(ErrorCode.CONCURRENT_TRANSACTIONS));
        assertThat(end(coordinator, pid, 5, false)).isEqualTo(failed(ErrorCode.PRODUCER_FENCED));
        assertThat(get(coordinator.addPartitions("t", pid, (short) 1, Set.of(P0), TV2))).isEqualTo(ErrorCode.CONCURRENT_TRANSACTIONS);

        markers.held.forEach(Runnable::run);
        awaitState(coordinator, "t", "CompleteCommit");
        assertThat(end(coordinator, pid, 0, true)).isEqualTo(ok(pid, 1));
        assertThat(end(coordinator, pid, 0, false)).isEqualTo(failed(ErrorCode.INVALID_TXN_STATE));
        assertThat(end(coordinator, pid, 1, true)).isEqualTo(failed(ErrorCode.INVALID_TXN_STATE));
        assertThat(end(coordinator, pid, 5, true)).isEqualTo(failed(ErrorCode.PRODUCER_FENCED));
        assertThat(end(coordinator, 4242L, 1, true)).isEqualTo(failed(ErrorCode.INVALID_PRODUCER_ID_MAPPING));
    }

    @Test
    void anAbortWithoutPartitionsBumpsTheEpochAndACommitIsInvalid() throws Exception {
        TransactionCoordinatorTest.RecordingMarkers markers = new TransactionCoordinatorTest.RecordingMarkers();
        TransactionCoordinator coordinator = start(markers);
        long pid = get(coordinator.initProducerId("t", 60_000, -1, (short) -1)).producerId();
        assertThat(end(coordinator, pid, 0, true)).isEqualTo(failed(ErrorCode.INVALID_TXN_STATE));
        assertThat(end(coordinator, pid, 0, false)).isEqualTo(ok(pid, 1));
        awaitState(coordinator, "t", "CompleteAbort");
        assertThat(markers.written).isEmpty();
        assertThat(end(coordinator, pid, 0, false)).isEqualTo(ok(pid, 1));
        // Aborting again with the current epoch is a new (empty) transaction: another bump.
        assertThat(end(coordinator, pid, 1, false)).isEqualTo(ok(pid, 2));
    }

    @Test
    void aNewProducerInstanceFencesTheOldOneAcrossTheBump() throws Exception {
        TransactionCoordinatorTest.RecordingMarkers markers = new TransactionCoordinatorTest.RecordingMarkers();
        TransactionCoordinator coordinator = start(markers);
        long pid = get(coordinator.initProducerId("t", 60_000, -1, (short) -1)).producerId();
        get(coordinator.addPartitions("t", pid, (short) 0, Set.of(P0), TV2));

        TransactionCoordinator.InitResult second = get(coordinator.initProducerId("t", 60_000, -1, (short) -1));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (second.error() == ErrorCode.CONCURRENT_TRANSACTIONS && System.nanoTime() < deadline) {
            second = get(coordinator.initProducerId("t", 60_000, -1, (short) -1));
        }
        assertThat(second).isEqualTo(new TransactionCoordinator.InitResult(ErrorCode.NONE, pid, (short) 2));
        assertThat(markers.written).containsExactly("ABORT orders-0 pid=" + pid + " epoch=1");
        assertThat(end(coordinator, pid, 0, true)).isEqualTo(failed(ErrorCode.PRODUCER_FENCED));
        assertThat(end(coordinator, pid, 0, false)).isEqualTo(failed(ErrorCode.PRODUCER_FENCED));
        assertThat(get(coordinator.addPartitions("t", pid, (short) 0, Set.of(P0), TV2))).isEqualTo(ErrorCode.PRODUCER_FENCED);
    }

    @Test
    void anExhaustedEpochHandsTheClientANewProducerIdAndRetriesSurviveARestart() throws Exception {
        short almostExhausted = (short) (Short.MAX_VALUE - 2);
        seed(77L, almostExhausted, TransactionState.COMPLETE_COMMIT);
        TransactionCoordinatorTest.RecordingMarkers markers = new TransactionCoordinatorTest.RecordingMarkers();
        TransactionCoordinator coordinator = start(markers);

        get(coordinator.addPartitions("t", 77L, almostExhausted, Set.of(P0), TV2));
        assertThat(end(coordinator, 77L, almostExhausted, true)).isEqualTo(ok(77L, Short.MAX_VALUE - 1));
        awaitState(coordinator, "t", "CompleteCommit");

        // Epoch MAX-1 is exhausted: the markers use MAX, which no client ever holds, and the client moves to a new id.
        assertThat(get(coordinator.addPartitions("t", 77L, (short) (Short.MAX_VALUE - 1), Set.of(P1), TV2))).isEqualTo(ErrorCode.NONE);
        assertThat(end(coordinator, 77L, Short.MAX_VALUE - 1, true)).isEqualTo(ok(1000L, 0));
        awaitState(coordinator, "t", "CompleteCommit");
        assertThat(markers.written).containsExactly("COMMIT orders-0 pid=77 epoch=" + (Short.MAX_VALUE - 1),
            "COMMIT orders-1 pid=77 epoch=" + Short.MAX_VALUE);
        TransactionCoordinator.TransactionView view = get(coordinator.describe("t"));
        assertThat(view.producerId()).isEqualTo(1000L);
        assertThat(view.producerEpoch()).isZero();

        // A retry with the old identity gets the new one, before and after a restart; the old id is otherwise gone.
        assertThat(end(coordinator, 77L, Short.MAX_VALUE - 1, true)).isEqualTo(ok(1000L, 0));
        assertThat(get(coordinator.addPartitions("t", 77L, (short) (Short.MAX_VALUE - 1), Set.of(P0), TV2)))
            .isEqualTo(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
        coordinator.close();
        TransactionCoordinator restarted = start(new TransactionCoordinatorTest.RecordingMarkers());
        assertThat(end(restarted, 77L, Short.MAX_VALUE - 1, true)).isEqualTo(ok(1000L, 0));
        assertThat(get(restarted.addPartitions("t", 1000L, (short) 0, Set.of(P0), TV2))).isEqualTo(ErrorCode.NONE);
        assertThat(end(restarted, 1000L, 0, true)).isEqualTo(ok(1000L, 1));
    }

    @Test
    void fencingAnExhaustedEpochRotatesTheProducerIdAndTheZombiesLateAbortIsARetry() throws Exception {
        seed(77L, (short) (Short.MAX_VALUE - 1), TransactionState.ONGOING);
        TransactionCoordinatorTest.RecordingMarkers markers = new TransactionCoordinatorTest.RecordingMarkers();
        TransactionCoordinator coordinator = start(markers);

        // A new instance fences the open transaction: aborted at epoch MAX, completed under a new producer id.
        assertThat(get(coordinator.initProducerId("t", 60_000, -1, (short) -1)).error()).isEqualTo(ErrorCode.CONCURRENT_TRANSACTIONS);
        awaitState(coordinator, "t", "CompleteAbort");
        assertThat(get(coordinator.describe("t")).producerId()).isEqualTo(1000L);
        // The zombie's own abort, arriving late, is answered as a retry of the abort that already happened.
        assertThat(end(coordinator, 77L, Short.MAX_VALUE - 1, false)).isEqualTo(ok(1000L, 0));
        assertThat(end(coordinator, 77L, Short.MAX_VALUE - 1, true)).isEqualTo(failed(ErrorCode.INVALID_TXN_STATE));
        // The new instance's retried InitProducerId then fences it for good.
        TransactionCoordinator.InitResult successor = get(coordinator.initProducerId("t", 60_000, -1, (short) -1));
        assertThat(successor).isEqualTo(new TransactionCoordinator.InitResult(ErrorCode.NONE, 1000L, (short) 1));
        assertThat(end(coordinator, 1000L, 0, false)).isEqualTo(failed(ErrorCode.PRODUCER_FENCED));
    }

    @Test
    void idleTransactionalIdsExpireByTombstoneAndStayGoneAfterARestart() throws Exception {
        TransactionCoordinatorTest.RecordingMarkers markers = new TransactionCoordinatorTest.RecordingMarkers();
        TransactionCoordinator coordinator = start(markers);
        long pid = get(coordinator.initProducerId("t", 60_000, -1, (short) -1)).producerId();
        get(coordinator.addPartitions("t", pid, (short) 0, Set.of(P0), TV2));
        end(coordinator, pid, 0, true);
        awaitState(coordinator, "t", "CompleteCommit");
        // An id with an open transaction is not expired however long it idles (the transaction timeout aborts it instead).
        long open = get(coordinator.initProducerId("open", 900_000, -1, (short) -1)).producerId();
        get(coordinator.addPartitions("open", open, (short) 0, Set.of(P1)));

        // Kafka's rule: expired once the last update is at least transactional.id.expiration.ms old.
        time.advance(EXPIRATION_MS - 1);
        assertThat(get(coordinator.expireTransactionalIds())).isZero();
        assertThat(get(coordinator.describe("t"))).isNotNull();

        time.advance(1);
        assertThat(get(coordinator.expireTransactionalIds())).isEqualTo(1);
        assertThat(get(coordinator.describe("t"))).isNull();
        assertThat(get(coordinator.describe("open")).state()).isEqualTo("Ongoing");
        assertThat(log.records).last().satisfies(record -> assertThat(record[1]).isNull());

        coordinator.close();
        TransactionCoordinator restarted = start(new TransactionCoordinatorTest.RecordingMarkers());
        assertThat(get(restarted.describe("t"))).isNull();
        assertThat(get(restarted.describe("open")).state()).isEqualTo("Ongoing");
        // The expired id starts afresh: a new producer id at epoch 0; its old producer is unknown.
        assertThat(end(restarted, pid, 1, false)).isEqualTo(failed(ErrorCode.INVALID_PRODUCER_ID_MAPPING));
        TransactionCoordinator.InitResult fresh = get(restarted.initProducerId("t", 60_000, -1, (short) -1));
        assertThat(fresh.error()).isEqualTo(ErrorCode.NONE);
        assertThat(fresh.producerId()).isNotEqualTo(pid);
        assertThat(fresh.producerEpoch()).isZero();
    }
}
