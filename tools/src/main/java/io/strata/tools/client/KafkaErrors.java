package io.strata.tools.client;

import io.strata.protocol.ErrorCode;

import java.util.EnumMap;
import java.util.Map;

/**
 * How the CLI words a broker error: Kafka's name for the code, then the broker's message, or
 * Kafka's default message for the code when the broker sent none (most error responses carry
 * no message). The defaults are Kafka's own texts ({@code org.apache.kafka.common.protocol.Errors}),
 * for the codes the CLI's requests can produce; KafkaErrorsTest checks them against
 * kafka-clients. Other codes are reported by name alone.
 */
public final class KafkaErrors {
    private static final Map<ErrorCode, String> DEFAULT_MESSAGES = new EnumMap<>(ErrorCode.class);

    static {
        define(ErrorCode.UNKNOWN_SERVER_ERROR, "The server experienced an unexpected error when processing the request.");
        define(ErrorCode.OFFSET_OUT_OF_RANGE, "The requested offset is not within the range of offsets maintained by the server.");
        define(ErrorCode.CORRUPT_MESSAGE, "This message has failed its CRC checksum, exceeds the valid size, has a null key for a "
            + "compacted topic, or is otherwise corrupt.");
        define(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.");
        define(ErrorCode.LEADER_NOT_AVAILABLE, "There is no leader for this topic-partition as we are in the middle of a leadership election.");
        define(ErrorCode.NOT_LEADER_OR_FOLLOWER, "For requests intended only for the leader, this error indicates that the broker is not "
            + "the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of "
            + "the topic partition.");
        define(ErrorCode.REQUEST_TIMED_OUT, "The request timed out.");
        define(ErrorCode.MESSAGE_TOO_LARGE, "The request included a message larger than the max message size the server will accept.");
        define(ErrorCode.INVALID_TOPIC_EXCEPTION, "The request attempted to perform an operation on an invalid topic.");
        define(ErrorCode.RECORD_LIST_TOO_LARGE, "The request included message batch larger than the configured segment size on the server.");
        define(ErrorCode.NOT_ENOUGH_REPLICAS, "Messages are rejected since there are fewer in-sync replicas than required.");
        define(ErrorCode.INVALID_REQUIRED_ACKS, "Produce request specified an invalid value for required acks.");
        define(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.");
        define(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.");
        define(ErrorCode.INVALID_TIMESTAMP, "The timestamp of the message is out of acceptable range.");
        define(ErrorCode.UNSUPPORTED_VERSION, "The version of API is not supported.");
        define(ErrorCode.TOPIC_ALREADY_EXISTS, "Topic with this name already exists.");
        define(ErrorCode.INVALID_PARTITIONS, "Number of partitions is below 1.");
        define(ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor is below 1 or larger than the number of available brokers.");
        define(ErrorCode.INVALID_CONFIG, "Configuration is invalid.");
        define(ErrorCode.NOT_CONTROLLER, "This is not the correct controller for this cluster.");
        define(ErrorCode.INVALID_REQUEST, "This most likely occurs because of a request being malformed by the client library or the "
            + "message was sent to an incompatible broker. See the broker logs for more details.");
        define(ErrorCode.POLICY_VIOLATION, "Request parameters do not satisfy the configured policy.");
        define(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "The broker received an out of order sequence number.");
        define(ErrorCode.DUPLICATE_SEQUENCE_NUMBER, "The broker received a duplicate sequence number.");
        define(ErrorCode.INVALID_PRODUCER_EPOCH, "Producer attempted to produce with an old epoch.");
        define(ErrorCode.KAFKA_STORAGE_ERROR, "Disk error when trying to access log file on the disk.");
        define(ErrorCode.FENCED_LEADER_EPOCH, "The leader epoch in the request is older than the epoch on the broker.");
        define(ErrorCode.UNKNOWN_LEADER_EPOCH, "The leader epoch in the request is newer than the epoch on the broker.");
        define(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, "The requesting client does not support the compression type of given partition.");
        define(ErrorCode.TOPIC_DELETION_DISABLED, "Topic deletion is disabled.");
        define(ErrorCode.INVALID_RECORD, "This record has failed the validation on broker and hence will be rejected.");
        define(ErrorCode.THROTTLING_QUOTA_EXCEEDED, "The throttling quota has been exceeded.");
        define(ErrorCode.UNKNOWN_TOPIC_ID, "This server does not host this topic ID.");
        define(ErrorCode.PRODUCER_FENCED, "There is a newer producer with the same transactionalId which fences the current one.");
        define(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, "The coordinator is loading and hence can't process requests.");
        define(ErrorCode.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available.");
        define(ErrorCode.NOT_COORDINATOR, "This is not the correct coordinator.");
        define(ErrorCode.ILLEGAL_GENERATION, "Specified group generation id is not valid.");
        define(ErrorCode.INVALID_GROUP_ID, "The group id is invalid.");
        define(ErrorCode.UNKNOWN_MEMBER_ID, "The coordinator is not aware of this member.");
        define(ErrorCode.OFFSET_METADATA_TOO_LARGE, "The metadata field of the offset request was too large.");
        define(ErrorCode.INVALID_COMMIT_OFFSET_SIZE, "The committing offset data size is not valid.");
        define(ErrorCode.GROUP_AUTHORIZATION_FAILED, "Group authorization failed.");
        define(ErrorCode.NON_EMPTY_GROUP, "The group is not empty.");
        define(ErrorCode.GROUP_ID_NOT_FOUND, "The group id does not exist.");
        define(ErrorCode.STALE_MEMBER_EPOCH, "The member epoch is stale. The member must retry after receiving its updated member epoch via "
            + "the ConsumerGroupHeartbeat API.");
        define(ErrorCode.GROUP_DELETION_FAILED, "DeleteGroups could not complete; see the error message on the per-group result for details.");
    }

    private KafkaErrors() {
    }

    private static void define(ErrorCode error, String message) {
        DEFAULT_MESSAGES.put(error, message);
    }

    /** Kafka's default message for {@code error}, or null if this table does not carry one. */
    public static String defaultMessage(ErrorCode error) {
        return DEFAULT_MESSAGES.get(error);
    }

    /** The codes this table carries a default message for (for the cross-check test). */
    static Map<ErrorCode, String> defaultMessages() {
        return Map.copyOf(DEFAULT_MESSAGES);
    }

    /** "NAME: message", preferring the broker's message; "NAME" if there is no message at all. */
    public static String describe(ErrorCode error, String brokerMessage) {
        String message = brokerMessage != null && !brokerMessage.isBlank() ? brokerMessage : DEFAULT_MESSAGES.get(error);
        return message == null ? error.name() : error.name() + ": " + message;
    }
}
