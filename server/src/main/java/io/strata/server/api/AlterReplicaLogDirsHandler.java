package io.strata.server.api;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterReplicaLogDirsRequestData;
import io.strata.protocol.message.AlterReplicaLogDirsResponseData;
import io.strata.server.network.Request;
import io.strata.server.replica.ReplicaLogDirs;
import io.strata.storage.TopicPartition;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * AlterReplicaLogDirs (key 34, v1-2 as Kafka 4.4; KIP-113, {@code kafka-reassign-partitions.sh}
 * with {@code log_dirs}, {@code Admin.alterReplicaLogDirs}): moves replicas of this broker to
 * other data directories. The per-partition decisions and their error codes are
 * {@link ReplicaLogDirs}'; the answer comes before the data is moved (the move is seen in
 * DescribeLogDirs as a future replica with its offset lag). A partition named under several
 * directories takes the last one, as Kafka's map of the request does. Results are grouped by
 * topic in the order the topics first appear.
 *
 * <p>Authorization: none yet, as for every API of this broker; with the authorizer of issue 15
 * this request needs ALTER on the CLUSTER resource (Kafka answers every partition
 * CLUSTER_AUTHORIZATION_FAILED otherwise).
 *
 * <p>Thread-safety: no state of its own.
 */
final class AlterReplicaLogDirsHandler implements ApiHandler {
    private final BrokerContext context;

    AlterReplicaLogDirsHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        AlterReplicaLogDirsRequestData body = request.body(AlterReplicaLogDirsRequestData.class);
        Map<TopicPartition, String> partitionDirs = new LinkedHashMap<>();
        for (AlterReplicaLogDirsRequestData.AlterReplicaLogDir dir : body.dirs()) {
            for (AlterReplicaLogDirsRequestData.AlterReplicaLogDirTopic topic : dir.topics()) {
                for (int partition : topic.partitions()) {
                    TopicPartition topicPartition = new TopicPartition(topic.name(), partition);
                    partitionDirs.remove(topicPartition); // the last directory wins, at its position
                    partitionDirs.put(topicPartition, dir.path());
                }
            }
        }
        ReplicaLogDirs logDirs = context.replicaManager().replicaLogDirs();
        Map<TopicPartition, ErrorCode> results;
        if (logDirs == null) {
            results = new LinkedHashMap<>();
            partitionDirs.keySet().forEach(topicPartition -> results.put(topicPartition, ErrorCode.KAFKA_STORAGE_ERROR));
        } else {
            results = logDirs.alterReplicaLogDirs(partitionDirs);
        }
        request.respond(response(results));
    }

    static AlterReplicaLogDirsResponseData response(Map<TopicPartition, ErrorCode> results) {
        Map<String, AlterReplicaLogDirsResponseData.AlterReplicaLogDirTopicResult> topics = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, ErrorCode> entry : results.entrySet()) {
            topics.computeIfAbsent(entry.getKey().topic(), name -> new AlterReplicaLogDirsResponseData.AlterReplicaLogDirTopicResult()
                .setTopicName(name)).partitions().add(new AlterReplicaLogDirsResponseData.AlterReplicaLogDirPartitionResult()
                .setPartitionIndex(entry.getKey().partition()).setErrorCode(entry.getValue().code()));
        }
        return new AlterReplicaLogDirsResponseData().setThrottleTimeMs(0).setResults(new java.util.ArrayList<>(topics.values()));
    }
}
