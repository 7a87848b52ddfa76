package io.strata.coordinator.transaction;

import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The coordinator's view of one transactional id. Not thread-safe: owned by its shard's thread.
 */
public final class TransactionMetadata {
    final String transactionalId;
    long producerId;
    long lastProducerId = -1;
    short producerEpoch;
    short lastProducerEpoch = -1;
    int timeoutMs;
    TransactionState state;
    final Set<TxnPartition> partitions = new LinkedHashSet<>();
    long startTimestampMs = -1;
    long lastUpdateTimestampMs;
    /** A transition being written to the log; other operations answer CONCURRENT_TRANSACTIONS meanwhile. */
    TransactionState pendingState;

    TransactionMetadata(String transactionalId, long producerId, short producerEpoch, int timeoutMs, TransactionState state, long nowMs) {
        this.transactionalId = transactionalId;
        this.producerId = producerId;
        this.producerEpoch = producerEpoch;
        this.timeoutMs = timeoutMs;
        this.state = state;
        this.lastUpdateTimestampMs = nowMs;
    }

    /** A topic partition in a transaction. */
    public record TxnPartition(String topic, int partition) {
    }
}
