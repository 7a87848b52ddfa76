package io.strata.server.replica;

import io.strata.common.Time;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

import java.io.IOException;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * What a {@link Partition} needs from the broker around it: the clock, the lag bound, the
 * image's view of other brokers, the path to the controller for ISR changes, and where to report
 * a high watermark move. {@link ReplicaManager} implements it; tests pass their own.
 * Implementations are thread-safe.
 */
public interface ReplicaContext {
    int localBrokerId();

    Time time();

    /** {@code replica.lag.time.max.ms}. */
    long replicaLagTimeMaxMs();

    /**
     * Whether {@code brokerId} may join an ISR by the current image: registered, unfenced, not in
     * controlled shutdown, and (when the fetch carried one, KIP-903) {@code fetchBrokerEpoch} equal
     * to the image's epoch for it.
     */
    boolean isReplicaIsrEligible(int brokerId, long fetchBrokerEpoch);

    /** Whether strict min ISR applies (ELR enabled, KIP-966): the high watermark waits while the ISR is below min ISR. */
    boolean strictMinIsr();

    /**
     * Sends an ISR change to the controller (through the AlterPartitionManager); the future
     * completes with the partition's answer (its error code says whether it was applied), or
     * exceptionally if the change could not even be queued.
     */
    CompletableFuture<AlterPartitionResponseData.PartitionData> submitIsrChange(TopicPartition topicPartition, UUID topicId,
                                                                                 AlterPartitionRequestData.PartitionData change);

    /**
     * The controller answered an ISR change: {@code committed} true if it was applied (an expand
     * or a shrink, as {@code sent} says), false if refused (Kafka's FailedIsrUpdatesPerSec). For
     * metrics; the default counts nothing.
     */
    default void recordIsrChange(PartitionState sent, boolean committed) {
    }

    /**
     * An operation on {@code log} failed with an I/O error: its data directory goes offline (the
     * log-dir failure channel). Called with the partition's lock held; must not block. The default
     * reports nothing (tests).
     */
    default void onLogDirFailure(UnifiedLog log, String operation, IOException cause) {
    }

    /** The partition's high watermark moved (or its leadership changed): complete what waits on it. Called outside the partition's locks. */
    void onHighWatermarkIncremented(TopicPartition topicPartition);
}
