package io.strata.server.api;

import io.strata.common.Time;
import io.strata.coordinator.group.GroupCoordinator;
import io.strata.coordinator.transaction.MarkerWriter;
import io.strata.coordinator.transaction.TransactionMetadata;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.EndTransactionMarker;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.server.replica.ReplicaManager;
import io.strata.storage.TopicPartition;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Writes transaction markers (COMMIT/ABORT control batches) to the partitions of a
 * transaction. On a single node every partition is local, so markers are appended directly;
 * with several brokers this becomes WriteTxnMarkers requests to each leader. A marker on a
 * {@code __consumer_offsets} partition also tells the group coordinator to publish or drop the
 * transaction's offsets.
 */
public final class TransactionMarkers implements MarkerWriter {
    private final ReplicaManager replicaManager;
    private final GroupCoordinator groupCoordinator;
    private final Time time;

    public TransactionMarkers(ReplicaManager replicaManager, GroupCoordinator groupCoordinator, Time time) {
        this.replicaManager = replicaManager;
        this.groupCoordinator = groupCoordinator;
        this.time = time;
    }

    @Override
    public void writeMarkers(long producerId, short producerEpoch, int coordinatorEpoch, boolean commit,
                             Set<TransactionMetadata.TxnPartition> partitions, Consumer<Map<TransactionMetadata.TxnPartition, ErrorCode>> done) {
        Map<TransactionMetadata.TxnPartition, ErrorCode> results = new LinkedHashMap<>();
        for (TransactionMetadata.TxnPartition partition : partitions) {
            results.put(partition, writeMarker(new TopicPartition(partition.topic(), partition.partition()), producerId, producerEpoch,
                coordinatorEpoch, commit));
        }
        done.accept(results);
    }

    /** Appends one marker; returns NONE or the error. */
    public ErrorCode writeMarker(TopicPartition topicPartition, long producerId, short producerEpoch, int coordinatorEpoch, boolean commit) {
        EndTransactionMarker marker = new EndTransactionMarker(commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT, coordinatorEpoch);
        ErrorCode error = replicaManager.appendMarker(topicPartition,
            RecordBatchBuilder.endTransactionMarker(0L, time.milliseconds(), 0, producerId, producerEpoch, marker));
        if (error == ErrorCode.NONE && topicPartition.topic().equals(InternalTopics.CONSUMER_OFFSETS)) {
            groupCoordinator.onTransactionMarker(topicPartition.partition(), producerId, commit);
        }
        return error;
    }
}
