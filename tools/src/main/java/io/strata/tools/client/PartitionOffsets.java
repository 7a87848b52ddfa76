package io.strata.tools.client;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.MetadataResponseData;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * ListOffsets for partitions of several topics, as Kafka's {@code Admin.listOffsets} answers it
 * (read_uncommitted: "latest" is the high watermark). The partitions of each topic are asked
 * of their leaders through a {@link TopicConsumer}, which retries leader changes.
 *
 * <p>Not thread-safe.
 */
public final class PartitionOffsets {
    private final ClusterClient cluster;

    public PartitionOffsets(ClusterClient cluster) {
        this.cluster = cluster;
    }

    /** The layouts of the named topics from one Metadata request; topics that do not exist (or have errors) are absent. */
    public Map<String, TopicInfo> topics(Collection<String> names) {
        Map<String, TopicInfo> topics = new TreeMap<>();
        if (names.isEmpty()) {
            return topics;
        }
        MetadataResponseData response = cluster.metadata(new TreeSet<>(names), false);
        for (MetadataResponseData.MetadataResponseTopic topic : response.topics()) {
            if (topic.errorCode() == ErrorCode.NONE.code() && names.contains(topic.name())) {
                topics.put(topic.name(), ClusterClient.toTopicInfo(topic));
            }
        }
        return topics;
    }

    /**
     * The offset for {@code timestamp} ({@link TopicConsumer#EARLIEST_TIMESTAMP},
     * {@link TopicConsumer#LATEST_TIMESTAMP} or a time in epoch milliseconds) of each partition
     * that exists in {@code topics}; -1 where no record has a timestamp at or after the time.
     * Partitions of unknown topics, or beyond a topic's partition count, are absent.
     */
    public Map<TopicPartition, Long> offsets(Map<String, TopicInfo> topics, Collection<TopicPartition> partitions, long timestamp) {
        Map<String, List<Integer>> byTopic = new TreeMap<>();
        for (TopicPartition partition : new TreeSet<>(partitions)) {
            TopicInfo topic = topics.get(partition.topic());
            if (topic != null && partition.partition() >= 0 && partition.partition() < topic.partitionCount()) {
                byTopic.computeIfAbsent(partition.topic(), name -> new ArrayList<>()).add(partition.partition());
            }
        }
        Map<TopicPartition, Long> offsets = new TreeMap<>();
        for (Map.Entry<String, List<Integer>> entry : byTopic.entrySet()) {
            TopicConsumer lookup = new TopicConsumer(cluster, topics.get(entry.getKey()), entry.getValue(), IsolationLevel.READ_UNCOMMITTED,
                TopicConsumer.OffsetReset.LATEST, notice -> { });
            lookup.listOffsets(entry.getValue(), timestamp)
                .forEach((partition, offset) -> offsets.put(new TopicPartition(entry.getKey(), partition), offset));
        }
        return offsets;
    }
}
