package io.strata.server.replica;

import io.strata.common.Time;
import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.MetadataImage;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

import java.io.IOException;

import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The {@link ReplicaContext} of a broker's partitions: the replication settings (set once the
 * broker's configuration and controller path are known), ISR eligibility from the metadata image
 * the replica manager last published, the ISR change counters, and purgatory completion on a
 * high watermark move. Thread-safe: settings are volatile, counters are adders.
 */
final class BrokerReplicaContext implements ReplicaContext {
    /** {@code replica.lag.time.max.ms} default (Kafka's). */
    static final long DEFAULT_REPLICA_LAG_TIME_MAX_MS = 30_000L;

    private final int nodeId;
    private final Time time;
    private final Supplier<MetadataImage> image;
    private final Consumer<TopicPartition> completeWaiting;
    private volatile long replicaLagTimeMaxMs = DEFAULT_REPLICA_LAG_TIME_MAX_MS;
    private volatile IsrChangeSubmitter isrChangeSubmitter = IsrChangeSubmitter.NOT_ATTEMPTED;
    private volatile BooleanSupplier strictMinIsr = () -> false;
    private volatile LogDirFailureReporter logDirFailureReporter = (log, operation, cause) -> { };
    private final LongAdder isrShrinks = new LongAdder();
    private final LongAdder isrExpands = new LongAdder();
    private final LongAdder failedIsrUpdates = new LongAdder();

    /** @param completeWaiting completes the produces and fetches waiting on a partition (called outside the partition's locks) */
    BrokerReplicaContext(int nodeId, Time time, Supplier<MetadataImage> image, Consumer<TopicPartition> completeWaiting) {
        this.nodeId = nodeId;
        this.time = time;
        this.image = image;
        this.completeWaiting = completeWaiting;
    }

    void setReplicaLagTimeMaxMs(long lagTimeMaxMs) {
        this.replicaLagTimeMaxMs = lagTimeMaxMs;
    }

    void setIsrChangeSubmitter(IsrChangeSubmitter submitter) {
        this.isrChangeSubmitter = Objects.requireNonNull(submitter);
    }

    /** Where a partition's failed log operation is reported (the log manager's failure channel). */
    interface LogDirFailureReporter {
        void report(UnifiedLog log, String operation, IOException cause);
    }

    void setLogDirFailureReporter(LogDirFailureReporter reporter) {
        this.logDirFailureReporter = Objects.requireNonNull(reporter);
    }

    @Override
    public void onLogDirFailure(UnifiedLog log, String operation, IOException cause) {
        logDirFailureReporter.report(log, operation, cause);
    }

    void setStrictMinIsr(BooleanSupplier strict) {
        this.strictMinIsr = Objects.requireNonNull(strict);
    }

    long isrShrinks() {
        return isrShrinks.sum();
    }

    long isrExpands() {
        return isrExpands.sum();
    }

    long failedIsrUpdates() {
        return failedIsrUpdates.sum();
    }

    @Override
    public int localBrokerId() {
        return nodeId;
    }

    @Override
    public Time time() {
        return time;
    }

    @Override
    public long replicaLagTimeMaxMs() {
        return replicaLagTimeMaxMs;
    }

    @Override
    public boolean isReplicaIsrEligible(int brokerId, long fetchBrokerEpoch) {
        BrokerRegistration broker = image.get().brokers().get(brokerId);
        return broker != null && !broker.fenced() && !broker.inControlledShutdown()
            && (fetchBrokerEpoch == RemoteReplica.NO_BROKER_EPOCH || broker.epoch() == fetchBrokerEpoch);
    }

    @Override
    public boolean strictMinIsr() {
        return strictMinIsr.getAsBoolean();
    }

    @Override
    public CompletableFuture<AlterPartitionResponseData.PartitionData> submitIsrChange(TopicPartition topicPartition, UUID topicId,
                                                                                        AlterPartitionRequestData.PartitionData change) {
        return isrChangeSubmitter.submit(topicPartition, topicId, change);
    }

    @Override
    public void recordIsrChange(PartitionState sent, boolean committed) {
        if (!committed) {
            failedIsrUpdates.increment();
        } else if (sent instanceof PartitionState.PendingExpand) {
            isrExpands.increment();
        } else {
            isrShrinks.increment();
        }
    }

    @Override
    public void onHighWatermarkIncremented(TopicPartition topicPartition) {
        completeWaiting.accept(topicPartition);
    }
}
