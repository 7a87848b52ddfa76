package io.strata.coordinator.transaction;

import io.strata.protocol.ErrorCode;

import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Writes commit or abort markers to the partitions of a transaction (the broker appends
 * control batches to each partition leader's log and tells the group coordinator about
 * {@code __consumer_offsets} partitions).
 */
public interface MarkerWriter {
    void writeMarkers(long producerId, short producerEpoch, int coordinatorEpoch, boolean commit,
                      Set<TransactionMetadata.TxnPartition> partitions, Consumer<Map<TransactionMetadata.TxnPartition, ErrorCode>> done);
}
