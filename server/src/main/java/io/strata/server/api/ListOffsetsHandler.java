package io.strata.server.api;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ListOffsetsRequestData;
import io.strata.protocol.message.ListOffsetsResponseData;
import io.strata.server.network.Request;
import io.strata.server.replica.Partition;
import io.strata.storage.ErrorCodeException;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

/**
 * ListOffsets: the earliest offset (-2, and -4 "earliest local"), the latest (-1: the high
 * watermark, or the last stable offset for read_committed), the record with the largest
 * timestamp (-3), or the first offset at or after a timestamp. An offset by timestamp is
 * only reported if consumers may read it (below the high watermark). While a new leader's high
 * watermark is below its epoch's start offset it answers a consumer OFFSET_NOT_AVAILABLE
 * (LEADER_NOT_AVAILABLE before v5) for the latest offset and for a timestamp lookup it cannot
 * answer below the high watermark; the earliest offsets stay answered (KIP-207, Kafka's
 * {@code fetchOffsetForTimestamp}). Only the leader answers:
 * NOT_LEADER_OR_FOLLOWER for a partition of the cluster led elsewhere, UNKNOWN_TOPIC_OR_PARTITION
 * for one the cluster does not have.
 */
final class ListOffsetsHandler implements ApiHandler {
    static final long LATEST = -1L;
    static final long EARLIEST = -2L;
    static final long MAX_TIMESTAMP = -3L;
    static final long EARLIEST_LOCAL = -4L;
    static final long LATEST_TIERED = -5L;
    static final long EARLIEST_PENDING_UPLOAD = -6L;
    /** ReplicaId of a consumer's request (-2 is Kafka's debugging replica, answered as a follower). */
    static final int CONSUMER_REPLICA_ID = -1;

    private final BrokerContext context;

    ListOffsetsHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        ListOffsetsRequestData body = request.body(ListOffsetsRequestData.class);
        boolean readCommitted = body.isolationLevel() == 1;
        ListOffsetsResponseData response = new ListOffsetsResponseData();
        for (ListOffsetsRequestData.ListOffsetsTopic topic : body.topics()) {
            ListOffsetsResponseData.ListOffsetsTopicResponse topicResponse = new ListOffsetsResponseData.ListOffsetsTopicResponse().setName(topic.name());
            boolean authorized = context.authorization().authorize(request, io.strata.metadata.authorizer.AclOperation.DESCRIBE, io.strata.metadata.authorizer.ResourceType.TOPIC, topic.name());
            for (ListOffsetsRequestData.ListOffsetsPartition partition : topic.partitions()) {
                ListOffsetsResponseData.ListOffsetsPartitionResponse result = !authorized
                    ? new ListOffsetsResponseData.ListOffsetsPartitionResponse().setPartitionIndex(partition.partitionIndex()).setTimestamp(-1L)
                        .setOffset(-1L).setLeaderEpoch(-1).setErrorCode(ErrorCode.TOPIC_AUTHORIZATION_FAILED.code()) :
                    lookup(new TopicPartition(topic.name(), partition.partitionIndex()), partition, readCommitted, body.replicaId(),
                        request.apiVersion());
                if (request.apiVersion() < 4) {
                    result.setLeaderEpoch(-1); // not in the older versions
                }
                topicResponse.partitions().add(result);
            }
            response.topics().add(topicResponse);
        }
        request.respond(response);
    }

    private ListOffsetsResponseData.ListOffsetsPartitionResponse lookup(TopicPartition topicPartition,
                                                                       ListOffsetsRequestData.ListOffsetsPartition requested, boolean readCommitted,
                                                                       int replicaId, short version) {
        ListOffsetsResponseData.ListOffsetsPartitionResponse result = new ListOffsetsResponseData.ListOffsetsPartitionResponse()
            .setPartitionIndex(requested.partitionIndex()).setTimestamp(-1L).setOffset(-1L).setLeaderEpoch(-1);
        Partition partition;
        try {
            partition = context.replicaManager().leaderPartitionOrThrow(topicPartition);
            partition.checkLeaderEpoch(requested.currentLeaderEpoch());
        } catch (ErrorCodeException e) {
            return result.setErrorCode(e.error().code());
        }
        UnifiedLog log = partition.log();
        long timestamp = requested.timestamp();
        boolean consumer = replicaId == CONSUMER_REPLICA_ID;
        // A follower (or a debugging client) reads to the log end; a consumer to what is committed.
        long readableEnd = !consumer ? log.logEndOffset() : readCommitted ? log.lastStableOffset() : log.highWatermark();
        // KIP-207: a new leader whose high watermark has not reached its epoch's start cannot tell a consumer where the end is.
        boolean lagging = consumer && partition.highWatermarkBelowEpochStart();
        short notAvailable = (version >= 5 ? ErrorCode.OFFSET_NOT_AVAILABLE : ErrorCode.LEADER_NOT_AVAILABLE).code();
        if (timestamp == LATEST) {
            return lagging ? result.setErrorCode(notAvailable) : result.setOffset(readableEnd).setLeaderEpoch(partition.leaderEpoch());
        }
        if (timestamp == EARLIEST || timestamp == EARLIEST_LOCAL) {
            return result.setOffset(log.logStartOffset()).setLeaderEpoch(log.epochForOffset(log.logStartOffset()));
        }
        if (timestamp == LATEST_TIERED || timestamp == EARLIEST_PENDING_UPLOAD) {
            return result; // no tiered storage: Kafka answers offset -1
        }
        if (timestamp == MAX_TIMESTAMP) {
            UnifiedLog.OffsetAndTimestamp max = log.maxTimestampOffset();
            if (max != null && max.offset() < readableEnd) {
                result.setOffset(max.offset()).setTimestamp(max.timestamp()).setLeaderEpoch(max.leaderEpoch());
            } else if (lagging) {
                result.setErrorCode(notAvailable);
            }
            return result;
        }
        if (timestamp < 0) {
            return result.setErrorCode(ErrorCode.INVALID_REQUEST.code());
        }
        UnifiedLog.OffsetAndTimestamp found = log.fetchOffsetByTimestamp(timestamp);
        if (found != null && found.offset() < readableEnd) {
            result.setOffset(found.offset()).setTimestamp(found.timestamp()).setLeaderEpoch(found.leaderEpoch());
        } else if (lagging) {
            result.setErrorCode(notAvailable);
        }
        return result;
    }
}
