package io.strata.coordinator.transaction;

import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The coordinator's view of one transactional id. Not thread-safe: owned by its shard's thread.
 *
 * <p>Producer ids and epochs. {@code producerId}/{@code producerEpoch} are what the current
 * producer must present. {@code lastProducerId}/{@code lastProducerEpoch} are the identity before
 * the last bump, so that a retried request whose answer was lost can be recognised. With
 * transactions v2 ({@code clientTransactionVersion} ≥ 2) every EndTxn bumps the epoch at prepare
 * time; when the epoch is exhausted ({@link #isEpochExhausted}) the prepared transaction carries a
 * {@code nextProducerId} and completing it switches the producer to that id at epoch 0.
 */
public final class TransactionMetadata {
    /** Transactions v2 (KIP-890 part 2): implicit AddPartitions and an epoch bump at every EndTxn. */
    public static final short TRANSACTION_VERSION_2 = 2;
    public static final long NO_PRODUCER_ID = -1;
    public static final short NO_PRODUCER_EPOCH = -1;

    final String transactionalId;
    long producerId;
    long lastProducerId = NO_PRODUCER_ID;
    /** Set on a prepared transactions-v2 transaction whose epoch is exhausted; taken over at completion. */
    long nextProducerId = NO_PRODUCER_ID;
    short producerEpoch;
    short lastProducerEpoch = NO_PRODUCER_EPOCH;
    int timeoutMs;
    TransactionState state;
    final Set<TxnPartition> partitions = new LinkedHashSet<>();
    long startTimestampMs = -1;
    long lastUpdateTimestampMs;
    /** The transaction version of the client's last transition (0 for transactions v1). */
    short clientTransactionVersion;
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

    /**
     * Kafka never hands out epoch {@code Short.MAX_VALUE} to a client, so that the coordinator can
     * always fence the current producer with one more bump.
     */
    static boolean isEpochExhausted(short epoch) {
        return epoch >= Short.MAX_VALUE - 1;
    }

    boolean supportsEpochBump() {
        return clientTransactionVersion >= TRANSACTION_VERSION_2;
    }

    /** A topic partition in a transaction. */
    public record TxnPartition(String topic, int partition) {
    }
}
