package io.strata.server.replica;

import io.strata.protocol.ErrorCode;
import io.strata.server.purgatory.DelayedOperation;
import io.strata.storage.TopicPartition;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * An acks=all produce waiting until every written partition's high watermark covers its
 * write. On a single node the high watermark moves with the append, so it completes on its
 * first check; with replication it completes when the ISR caught up (NONE, or
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below min ISR meanwhile: the batch is in the
 * log), at once with NOT_LEADER_OR_FOLLOWER when this node stops leading, or times out with
 * REQUEST_TIMED_OUT for the partitions still short. With {@code strata.fsync=on-ack} the high
 * watermark moves only after the fsync covering the write, and acks=1 produces wait here too,
 * for that fsync (the log's recovery point); a failed fsync answers KAFKA_STORAGE_ERROR.
 */
public final class DelayedProduce extends DelayedOperation {
    private final LinkedHashMap<TopicPartition, ProducePartitionResult> results;
    private final ReplicaManager replicaManager;
    private final Consumer<Map<TopicPartition, ProducePartitionResult>> callback;
    /** -1 (all: the high watermark covers the write) or 1 (fsync-on-ack: an fsync covers it on this node). */
    private final short requiredAcks;
    private final Map<TopicPartition, ErrorCode> acknowledged = new java.util.concurrent.ConcurrentHashMap<>();

    DelayedProduce(long timeoutMs, short requiredAcks, LinkedHashMap<TopicPartition, ProducePartitionResult> results, ReplicaManager replicaManager,
                   Consumer<Map<TopicPartition, ProducePartitionResult>> callback) {
        super(timeoutMs);
        this.requiredAcks = requiredAcks;
        this.results = results;
        this.replicaManager = replicaManager;
        this.callback = callback;
        for (Map.Entry<TopicPartition, ProducePartitionResult> entry : results.entrySet()) {
            if (entry.getValue().error() != ErrorCode.NONE) {
                acknowledged.put(entry.getKey(), entry.getValue().error());
            }
        }
    }

    @Override
    public boolean tryComplete() {
        for (Map.Entry<TopicPartition, ProducePartitionResult> entry : results.entrySet()) {
            if (acknowledged.containsKey(entry.getKey())) {
                continue;
            }
            // Kafka's HostedPartition.Offline: the partition's log directory failed after the append.
            ErrorCode status = replicaManager.isOffline(entry.getKey()) ? ErrorCode.KAFKA_STORAGE_ERROR
                : acknowledgement(replicaManager.partition(entry.getKey()), entry.getValue().lastOffset(), requiredAcks);
            if (status == null) {
                return false;
            }
            acknowledged.put(entry.getKey(), status);
        }
        return forceComplete();
    }

    /**
     * Whether a write up to {@code lastOffset} may be acknowledged: acks=all by
     * {@link Partition#checkEnoughReplicasReachOffset} (NONE, NOT_ENOUGH_REPLICAS_AFTER_APPEND or
     * NOT_LEADER_OR_FOLLOWER), acks=1 once an fsync covers it (only asked with fsync-on-ack);
     * KAFKA_STORAGE_ERROR if the fsync covering it failed; NOT_LEADER_OR_FOLLOWER if the partition
     * is gone or led elsewhere; null while it must wait.
     */
    static ErrorCode acknowledgement(Partition partition, long lastOffset, short requiredAcks) {
        if (partition == null || !partition.isLeader()) {
            return ErrorCode.NOT_LEADER_OR_FOLLOWER;
        }
        ErrorCode status = requiredAcks == 1
            ? (partition.log().recoveryPoint() > lastOffset ? ErrorCode.NONE : null)
            : partition.checkEnoughReplicasReachOffset(lastOffset + 1);
        if (status == null && partition.log().fsyncOnAck() && partition.flushFailedFor(lastOffset)) {
            return ErrorCode.KAFKA_STORAGE_ERROR;
        }
        return status;
    }

    @Override
    public void onExpiration() {
        // onComplete reports the partitions that were not acknowledged in time.
    }

    @Override
    public void onComplete() {
        LinkedHashMap<TopicPartition, ProducePartitionResult> answer = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, ProducePartitionResult> entry : results.entrySet()) {
            ErrorCode status = acknowledged.get(entry.getKey());
            ProducePartitionResult result = entry.getValue();
            if (status == null) {
                answer.put(entry.getKey(), ProducePartitionResult.error(ErrorCode.REQUEST_TIMED_OUT,
                    "The write was not replicated to enough replicas in time."));
            } else if (status != ErrorCode.NONE && result.error() == ErrorCode.NONE) {
                answer.put(entry.getKey(), ProducePartitionResult.error(status, null));
            } else {
                answer.put(entry.getKey(), result);
            }
        }
        callback.accept(answer);
    }
}
