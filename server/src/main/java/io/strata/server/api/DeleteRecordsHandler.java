package io.strata.server.api;

import io.strata.metadata.TopicImage;
import io.strata.metadata.TopicNames;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.DeleteRecordsRequestData;
import io.strata.protocol.message.DeleteRecordsResponseData;
import io.strata.server.network.Request;
import io.strata.server.replica.Partition;
import io.strata.storage.ErrorCodeException;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

import java.io.IOException;

/**
 * DeleteRecords: moves each partition's log start offset (its low watermark) forward to the
 * requested offset, or to the high watermark for offset -1. Segments wholly below the new start
 * are removed by the next retention pass, as in Kafka. Each partition is answered with its new
 * low watermark, or with -1 and:
 * <ul>
 *   <li>UNKNOWN_TOPIC_OR_PARTITION if the metadata has no such partition;</li>
 *   <li>INVALID_TOPIC_EXCEPTION for internal topics;</li>
 *   <li>NOT_LEADER_OR_FOLLOWER if this broker does not lead it;</li>
 *   <li>POLICY_VIOLATION if the topic is compacted and not also {@code delete};</li>
 *   <li>OFFSET_OUT_OF_RANGE for a negative offset other than -1 or one beyond the high watermark.</li>
 * </ul>
 * With one replica the new low watermark holds as soon as the leader's start moves, so the
 * request never waits in a purgatory (Kafka waits for every replica's start offset).
 */
final class DeleteRecordsHandler implements ApiHandler {
    /** The request's "up to the high watermark" offset. */
    static final long HIGH_WATERMARK = -1L;
    /** The response's low watermark when the partition failed. */
    static final long INVALID_LOW_WATERMARK = -1L;

    private final BrokerContext context;

    DeleteRecordsHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        DeleteRecordsRequestData body = request.body(DeleteRecordsRequestData.class);
        DeleteRecordsResponseData response = new DeleteRecordsResponseData();
        for (DeleteRecordsRequestData.DeleteRecordsTopic topic : body.topics()) {
            DeleteRecordsResponseData.DeleteRecordsTopicResult topicResult = new DeleteRecordsResponseData.DeleteRecordsTopicResult()
                .setName(topic.name());
            for (DeleteRecordsRequestData.DeleteRecordsPartition partition : topic.partitions()) {
                topicResult.partitions().add(deleteRecords(new TopicPartition(topic.name(), partition.partitionIndex()), partition.offset()));
            }
            response.topics().add(topicResult);
        }
        request.respond(response);
    }

    private DeleteRecordsResponseData.DeleteRecordsPartitionResult deleteRecords(TopicPartition topicPartition, long requestedOffset) {
        DeleteRecordsResponseData.DeleteRecordsPartitionResult result = new DeleteRecordsResponseData.DeleteRecordsPartitionResult()
            .setPartitionIndex(topicPartition.partition()).setLowWatermark(INVALID_LOW_WATERMARK);
        TopicImage topic = context.image().topic(topicPartition.topic());
        if (topic == null || topic.partition(topicPartition.partition()) == null) {
            return result.setErrorCode(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code());
        }
        if (TopicNames.isInternal(topicPartition.topic())) {
            return result.setErrorCode(ErrorCode.INVALID_TOPIC_EXCEPTION.code());
        }
        Partition partition;
        try {
            partition = context.replicaManager().leaderPartitionOrThrow(topicPartition);
        } catch (ErrorCodeException e) {
            return result.setErrorCode(e.error().code());
        }
        UnifiedLog log = partition.log();
        if (log.config().compact && !log.config().delete) {
            return result.setErrorCode(ErrorCode.POLICY_VIOLATION.code());
        }
        long newStart = requestedOffset == HIGH_WATERMARK ? log.highWatermark() : requestedOffset;
        if (newStart < 0) {
            return result.setErrorCode(ErrorCode.OFFSET_OUT_OF_RANGE.code());
        }
        try {
            log.maybeIncrementLogStartOffset(newStart);
        } catch (ErrorCodeException e) {
            return result.setErrorCode(e.error().code());
        } catch (IOException e) {
            context.replicaManager().logManager().reportLogDirFailure(log, "moving the log start offset of " + topicPartition + " to "
                + newStart + " failed", e);
            return result.setErrorCode(ErrorCode.KAFKA_STORAGE_ERROR.code());
        }
        return result.setErrorCode(ErrorCode.NONE.code()).setLowWatermark(log.logStartOffset());
    }
}
