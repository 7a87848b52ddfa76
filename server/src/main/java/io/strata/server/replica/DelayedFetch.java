package io.strata.server.replica;

import io.strata.server.purgatory.DelayedOperation;
import io.strata.storage.FetchIsolation;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A fetch waiting for {@code fetch.min.bytes} of data (or {@code fetch.max.wait.ms}; for a
 * follower its request's MaxWaitMs, {@code replica.fetch.wait.max.ms}). Woken by appends to any
 * of its partitions; completes when enough bytes are readable below the isolation bound (the log
 * end for a follower, so a high watermark move alone does not answer it), when a partition disappears or its leadership moves to another broker, or on timeout, and then reads again.
 * A consumer's fetch v11+ may wait on a follower (KIP-392): it is woken by the follower's high
 * watermark moves ({@link ReplicaManager#onFollowerHighWatermark}, KAFKA-14334) and completes
 * when the partition's leader epoch passes the request's.
 */
public final class DelayedFetch extends DelayedOperation {
    private final FetchParams params;
    private final LinkedHashMap<TopicPartition, PartitionFetchInfo> fetchInfos;
    private final ReplicaManager replicaManager;
    private final Consumer<LinkedHashMap<TopicPartition, FetchPartitionData>> callback;

    DelayedFetch(FetchParams params, LinkedHashMap<TopicPartition, PartitionFetchInfo> fetchInfos, ReplicaManager replicaManager,
                 Consumer<LinkedHashMap<TopicPartition, FetchPartitionData>> callback) {
        super(params.maxWaitMs());
        this.params = params;
        this.fetchInfos = fetchInfos;
        this.replicaManager = replicaManager;
        this.callback = callback;
    }

    @Override
    public boolean tryComplete() {
        boolean newData = false;
        for (Map.Entry<TopicPartition, PartitionFetchInfo> entry : fetchInfos.entrySet()) {
            Partition partition = replicaManager.partition(entry.getKey());
            if (partition == null || !servesHere(partition)) {
                return forceComplete(); // gone, or led elsewhere now: the read answers the partition's error
            }
            int requestEpoch = entry.getValue().currentLeaderEpoch();
            if (requestEpoch >= 0 && requestEpoch < partition.leaderEpoch()) {
                return forceComplete(); // Kafka's case E: a newer leader epoch here; the read answers FENCED_LEADER_EPOCH
            }
            UnifiedLog log = partition.log();
            // A follower reads to the log end: only appends complete it, never a high watermark move alone (KAFKA-9952).
            long bound = switch (params.isolation()) {
                case LOG_END -> log.logEndOffset();
                case TXN_COMMITTED -> log.lastStableOffset();
                case HIGH_WATERMARK -> log.highWatermark();
            };
            if (bound < entry.getValue().fetchOffset()) {
                return forceComplete(); // the log was truncated below the fetch position
            }
            newData |= bound > entry.getValue().fetchOffset();
        }
        if (!newData) {
            return false;
        }
        if (params.minBytes() <= 1) {
            return forceComplete();
        }
        long bytes = 0;
        for (FetchPartitionData data : replicaManager.readFromLog(params, fetchInfos, false).values()) {
            bytes += data.records().sizeInBytes();
        }
        return bytes >= params.minBytes() && forceComplete();
    }

    /**
     * Whether this node still serves the fetch: as leader, or (a consumer's fetch v11+, KIP-392) as
     * any replica with a role; the follower's fetcher wakes it when the follower's high watermark moves.
     */
    private boolean servesHere(Partition partition) {
        return params.fetchOnlyLeader() ? partition.isLeader() : partition.role() != Partition.Role.NONE;
    }

    @Override
    public void onExpiration() {
        // onComplete answers with whatever is available.
    }

    @Override
    public void onComplete() {
        LinkedHashMap<TopicPartition, FetchPartitionData> results = replicaManager.readFromLog(params, fetchInfos);
        replicaManager.recordFetched(params, results);
        callback.accept(results);
    }
}
