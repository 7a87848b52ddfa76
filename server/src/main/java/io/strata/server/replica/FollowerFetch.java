package io.strata.server.replica;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.MemoryRecords;
import io.strata.storage.EpochOffset;
import io.strata.storage.ErrorCodeException;
import io.strata.storage.LeaderEpochFileCache;
import io.strata.storage.UnifiedLog;

/**
 * The leader's side of a follower's Fetch, per partition, after the leadership and leader epoch
 * checks: the KIP-320 divergence check on LastFetchedEpoch (before any read), and recording the
 * follower's position after the read (Kafka's order: a diverged fetch records nothing,
 * KAFKA-13141). Stateless; thread-safe.
 */
final class FollowerFetch {
    private FollowerFetch() {
    }

    /**
     * KIP-320's check of a fetch's last fetched epoch against this leader's epoch cache: the
     * fetcher diverged if this leader's end offset for that epoch is below the fetch offset, or
     * this leader's largest epoch not above it is a different one; the answer then carries
     * {@code DivergingEpoch} and no records. OFFSET_OUT_OF_RANGE if the cache has no answer or
     * the offset is below the log start (Kafka's order). Null if the fetch did not diverge.
     */
    static FetchPartitionData divergingEpoch(Partition partition, PartitionFetchInfo info) {
        UnifiedLog log = partition.log();
        EpochOffset end = log.leaderEpochCache().endOffsetFor(info.lastFetchedEpoch(), log.logEndOffset());
        if (end.epoch() == LeaderEpochFileCache.UNDEFINED_EPOCH
            || end.endOffset() == LeaderEpochFileCache.UNDEFINED_OFFSET) {
            throw new ErrorCodeException(ErrorCode.OFFSET_OUT_OF_RANGE, "Could not determine the end offset of the last fetched epoch "
                + info.lastFetchedEpoch() + " of " + partition.topicPartition());
        }
        if (info.fetchOffset() < log.logStartOffset()) {
            throw new ErrorCodeException(ErrorCode.OFFSET_OUT_OF_RANGE, "fetch offset " + info.fetchOffset() + " is below the log start offset "
                + log.logStartOffset() + " of " + partition.topicPartition());
        }
        if (end.epoch() < info.lastFetchedEpoch() || end.endOffset() < info.fetchOffset()) {
            return new FetchPartitionData(ErrorCode.NONE, log.highWatermark(), log.lastStableOffset(), log.logStartOffset(), MemoryRecords.EMPTY,
                null, null, end);
        }
        return null;
    }

    /**
     * Records the follower's fetch at {@code info.fetchOffset()} (its log end) against the leader's
     * end offset as of the read; a replica outside the assignment is not recorded (KAFKA-5758).
     *
     * @throws ErrorCodeException NOT_LEADER_OR_FOLLOWER if this node stopped leading or the fetch's broker epoch is stale
     */
    static void record(Partition partition, FetchParams params, PartitionFetchInfo info, long leaderEndOffset, long nowMs) {
        partition.updateFollowerFetchState(params.replicaId(), info.fetchOffset(), info.logStartOffset(), nowMs, leaderEndOffset,
            params.brokerEpoch());
    }
}
