package io.strata.coordinator.group;

import io.strata.coordinator.group.consumer.ConsumerGroup;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.ToLongBiFunction;

/**
 * Read-only statistics of one group, for the metrics endpoint: what kind of group it is, its
 * state and members, its rebalances, and per partition with a committed offset, the lag behind
 * the partition's end.
 *
 * @param groupId               the group
 * @param protocol              {@code classic} or {@code consumer} (KIP-848)
 * @param state                 the state as ListGroups names it (Empty, Stable, PreparingRebalance...)
 * @param members               current members
 * @param rebalances            completed rebalances: for a classic group, joins that reached Stable since this node
 *                              loaded it; for a consumer group, its group epoch (each bump is a rebalance)
 * @param lastRebalanceMs       duration of the last completed classic rebalance (PreparingRebalance to Stable), -1 if none
 * @param totalRebalanceMs      the summed duration of the completed classic rebalances
 * @param partitions            committed offsets and lag, ordered by topic and partition
 */
public record GroupStatistics(String groupId, String protocol, String state, int members, long rebalances, long lastRebalanceMs,
                              long totalRebalanceMs, List<PartitionLag> partitions) {

    /**
     * @param committedOffset the group's committed offset
     * @param endOffset       the partition's end (high watermark), or -1 if this node does not host it
     * @param lag             {@code max(0, endOffset - committedOffset)}, or -1 if the end is unknown
     */
    public record PartitionLag(String topic, int partition, long committedOffset, long endOffset, long lag) {
    }

    /** The statistics of every group of a shard. Runs on the shard's thread (its state is confined there). */
    static List<GroupStatistics> of(GroupShard shard, ToLongBiFunction<String, Integer> endOffsets) {
        if (!shard.loaded) {
            return List.of();
        }
        TreeSet<String> groupIds = new TreeSet<>(shard.groups.keySet());
        groupIds.addAll(shard.offsets.keySet());
        for (ConsumerGroup group : shard.consumerGroups.groups()) {
            groupIds.add(group.groupId());
        }
        List<GroupStatistics> statistics = new ArrayList<>(groupIds.size());
        for (String groupId : groupIds) {
            List<PartitionLag> lags = lags(shard.committedOffsets(groupId), endOffsets);
            ConsumerGroup consumerGroup = shard.consumerGroups.group(groupId);
            ClassicGroup classicGroup = shard.groups.get(groupId);
            if (consumerGroup != null) {
                statistics.add(new GroupStatistics(groupId, "consumer", consumerGroup.state().displayName, consumerGroup.members().size(),
                    consumerGroup.groupEpoch(), -1, 0, lags));
            } else if (classicGroup != null) {
                statistics.add(new GroupStatistics(groupId, "classic", classicGroup.state.displayName, classicGroup.members.size(),
                    classicGroup.completedRebalances, classicGroup.lastRebalanceDurationMs, classicGroup.totalRebalanceDurationMs, lags));
            } else {
                statistics.add(new GroupStatistics(groupId, "classic", ClassicGroupState.EMPTY.displayName, 0, 0, -1, 0, lags));
            }
        }
        return statistics;
    }

    private static List<PartitionLag> lags(Map<GroupShard.TopicPartitionKey, OffsetAndMetadata> committed, ToLongBiFunction<String, Integer> endOffsets) {
        TreeMap<String, TreeMap<Integer, Long>> ordered = new TreeMap<>();
        for (Map.Entry<GroupShard.TopicPartitionKey, OffsetAndMetadata> entry : committed.entrySet()) {
            ordered.computeIfAbsent(entry.getKey().topic(), topic -> new TreeMap<>()).put(entry.getKey().partition(), entry.getValue().offset());
        }
        List<PartitionLag> lags = new ArrayList<>();
        for (Map.Entry<String, TreeMap<Integer, Long>> topic : ordered.entrySet()) {
            for (Map.Entry<Integer, Long> partition : topic.getValue().entrySet()) {
                long end = endOffsets.applyAsLong(topic.getKey(), partition.getKey());
                long offset = partition.getValue();
                long lag = end < 0 ? -1 : Math.max(0, end - offset);
                lags.add(new PartitionLag(topic.getKey(), partition.getKey(), offset, end, lag));
            }
        }
        return lags;
    }
}
