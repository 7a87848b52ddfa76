package io.strata.server.api;

import io.strata.metadata.MetadataImage;
import io.strata.metadata.PartitionRegistration;
import io.strata.metadata.TopicImage;
import io.strata.metadata.TopicNames;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Uuids;
import io.strata.protocol.message.DescribeTopicPartitionsRequestData;
import io.strata.protocol.message.DescribeTopicPartitionsResponseData;
import io.strata.server.network.Request;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * DescribeTopicPartitions (KIP-966; kafka-clients 4.x {@code Admin.describeTopics}): the
 * requested topics (all topics if none is named), in name order, with at most
 * {@code min(responsePartitionLimit, 2000)} partitions per response (at least 1). When the
 * budget runs out the response carries {@code nextCursor}, the topic and partition to resume
 * from; the client sends the cursor back with the same topic list.
 *
 * <p>Paging, as Kafka does it: topics before the cursor's topic are skipped, the cursor topic
 * starts at the cursor's partition, every later topic at 0. A topic whose partitions fill the
 * budget exactly is followed by a cursor to the next topic at partition 0. Unknown topics are
 * answered UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for illegal names) when named,
 * and skipped when listing all. A cursor whose topic is not among the named ones, or with a
 * negative partition, is INVALID_REQUEST for every named topic.
 */
final class DescribeTopicPartitionsHandler implements ApiHandler {
    /** Kafka's {@code max.request.partition.size.limit} default: the most partitions one response carries. */
    static final int MAX_PARTITIONS_PER_RESPONSE = 2000;

    private final BrokerContext context;

    DescribeTopicPartitionsHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        DescribeTopicPartitionsRequestData body = request.body(DescribeTopicPartitionsRequestData.class);
        MetadataImage image = context.image();
        boolean allTopics = body.topics().isEmpty();
        DescribeTopicPartitionsRequestData.Cursor cursor = body.cursor();
        String cursorTopic = cursor != null ? cursor.topicName() : "";
        TreeSet<String> topics = new TreeSet<>();
        if (allTopics) {
            topics.addAll(image.topicsByName().keySet());
        } else {
            body.topics().forEach(topic -> topics.add(topic.name()));
        }
        topics.removeIf(name -> name.compareTo(cursorTopic) < 0);
        if ((!allTopics && cursor != null && !topics.contains(cursor.topicName())) || (cursor != null && cursor.partitionIndex() < 0)) {
            request.respond(invalidRequest(body));
            return;
        }
        int budget = Math.max(Math.min(MAX_PARTITIONS_PER_RESPONSE, body.responsePartitionLimit()), 1);
        DescribeTopicPartitionsResponseData response = new DescribeTopicPartitionsResponseData();
        for (String name : topics) {
            if (budget <= 0) {
                response.setNextCursor(new DescribeTopicPartitionsResponseData.Cursor().setTopicName(name).setPartitionIndex(0));
                break;
            }
            TopicImage topic = image.topic(name);
            if (topic == null) {
                if (!allTopics) {
                    response.topics().add(unknownTopic(name));
                }
                continue;
            }
            int first = name.equals(cursorTopic) ? cursor.partitionIndex() : 0;
            int end = Math.min(topic.partitionCount(), first + budget);
            DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic described = describe(image, topic, first, end,
                request.listenerName());
            budget -= described.partitions().size();
            response.topics().add(described);
            if (end < topic.partitionCount()) {
                response.setNextCursor(new DescribeTopicPartitionsResponseData.Cursor().setTopicName(name).setPartitionIndex(end));
                break;
            }
        }
        request.respond(response);
    }

    private static DescribeTopicPartitionsResponseData invalidRequest(DescribeTopicPartitionsRequestData body) {
        DescribeTopicPartitionsResponseData response = new DescribeTopicPartitionsResponseData();
        for (DescribeTopicPartitionsRequestData.TopicRequest topic : body.topics()) {
            response.topics().add(new DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic().setName(topic.name())
                .setErrorCode(ErrorCode.INVALID_REQUEST.code()).setIsInternal(false).setTopicAuthorizedOperations(AuthorizedOperations.OMITTED));
        }
        return response;
    }

    private static DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic unknownTopic(String name) {
        ErrorCode error = TopicNames.validate(name) != null ? ErrorCode.INVALID_TOPIC_EXCEPTION : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        return new DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic().setName(name).setErrorCode(error.code())
            .setTopicId(Uuids.ZERO).setIsInternal(TopicNames.isInternal(name)).setTopicAuthorizedOperations(AuthorizedOperations.TOPIC);
    }

    private static DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic describe(MetadataImage image, TopicImage topic,
                                                                                                   int first, int end, String listenerName) {
        DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic result =
            new DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic().setErrorCode(ErrorCode.NONE.code())
                .setName(topic.name()).setTopicId(topic.id()).setIsInternal(TopicNames.isInternal(topic.name()))
                .setTopicAuthorizedOperations(AuthorizedOperations.TOPIC);
        for (int index = first; index < end; index++) {
            PartitionRegistration partition = topic.partition(index);
            if (partition != null) {
                result.partitions().add(describe(image, index, partition, listenerName));
            }
        }
        return result;
    }

    /**
     * One partition: leader and offline replicas by {@link PartitionLeaders}, ELR and LastKnownElr
     * from the image (KIP-966; empty with ELR off), no partition error (Kafka sets none).
     */
    static DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponsePartition describe(MetadataImage image, int index,
                                                                                               PartitionRegistration partition,
                                                                                               String listenerName) {
        DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponsePartition result =
            new DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponsePartition().setPartitionIndex(index)
                .setErrorCode(ErrorCode.NONE.code()).setLeaderId(PartitionLeaders.reportedLeaderId(image, partition, listenerName))
                .setLeaderEpoch(partition.leaderEpoch()).setEligibleLeaderReplicas(ids(partition.elr())).setLastKnownElr(ids(partition.lastKnownElr()));
        for (int replica : partition.replicas()) {
            result.replicaNodes().add(replica);
        }
        for (int replica : partition.isr()) {
            result.isrNodes().add(replica);
        }
        return result.setOfflineReplicas(PartitionLeaders.offlineReplicas(image, partition, listenerName));
    }

    private static List<Integer> ids(int[] values) {
        List<Integer> ids = new ArrayList<>(values.length);
        for (int value : values) {
            ids.add(value);
        }
        return ids;
    }
}
