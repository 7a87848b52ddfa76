package io.strata.server.api;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.OffsetForLeaderEpochRequestData;
import io.strata.protocol.message.OffsetForLeaderEpochResponseData;
import io.strata.server.network.Request;
import io.strata.server.replica.Partition;
import io.strata.storage.EpochOffset;
import io.strata.storage.ErrorCodeException;
import io.strata.storage.LeaderEpochFileCache;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

/**
 * OffsetForLeaderEpoch (KIP-101, KIP-320): for each partition, the largest leader epoch not
 * above the requested one and the offset where it ended, from the leader's epoch cache; a
 * consumer (replicaId -1) uses it to detect log truncation after a leader change, a follower
 * to truncate. Served only by the leader, as Kafka does for every replica id.
 *
 * <p>Per partition: UNKNOWN_TOPIC_OR_PARTITION if the metadata has no such partition,
 * NOT_LEADER_OR_FOLLOWER if this broker does not host or lead it, FENCED_LEADER_EPOCH /
 * UNKNOWN_LEADER_EPOCH if {@code currentLeaderEpoch} (when not -1) is older / newer than the
 * leader's. An epoch the cache cannot answer (undefined, or above every known epoch) yields
 * epoch -1 and offset -1 with no error.
 */
final class OffsetForLeaderEpochHandler implements ApiHandler {
    private final BrokerContext context;

    OffsetForLeaderEpochHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        OffsetForLeaderEpochRequestData body = request.body(OffsetForLeaderEpochRequestData.class);
        OffsetForLeaderEpochResponseData response = new OffsetForLeaderEpochResponseData();
        for (OffsetForLeaderEpochRequestData.OffsetForLeaderTopic topic : body.topics()) {
            OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult topicResult =
                new OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult().setTopic(topic.topic());
            for (OffsetForLeaderEpochRequestData.OffsetForLeaderPartition partition : topic.partitions()) {
                topicResult.partitions().add(endOffset(new TopicPartition(topic.topic(), partition.partition()), partition));
            }
            response.topics().add(topicResult);
        }
        request.respond(response);
    }

    private OffsetForLeaderEpochResponseData.EpochEndOffset endOffset(TopicPartition topicPartition,
                                                                    OffsetForLeaderEpochRequestData.OffsetForLeaderPartition requested) {
        OffsetForLeaderEpochResponseData.EpochEndOffset result = new OffsetForLeaderEpochResponseData.EpochEndOffset()
            .setPartition(topicPartition.partition()).setLeaderEpoch(LeaderEpochFileCache.UNDEFINED_EPOCH)
            .setEndOffset(LeaderEpochFileCache.UNDEFINED_OFFSET);
        Partition partition = context.replicaManager().partition(topicPartition);
        try {
            if (partition != null) {
                // Kafka checks a hosted replica's epoch before its leadership.
                partition.checkLeaderEpoch(requested.currentLeaderEpoch());
            }
            partition = context.replicaManager().leaderPartitionOrThrow(topicPartition);
        } catch (ErrorCodeException e) {
            return result.setErrorCode(e.error().code());
        }
        UnifiedLog log = partition.log();
        EpochOffset found = log.leaderEpochCache().endOffsetFor(requested.leaderEpoch(), log.logEndOffset());
        result.setErrorCode(ErrorCode.NONE.code());
        if (found.endOffset() == LeaderEpochFileCache.UNDEFINED_OFFSET) {
            return result;
        }
        return result.setLeaderEpoch(found.epoch()).setEndOffset(found.endOffset());
    }
}
