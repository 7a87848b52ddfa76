package io.strata.tools.client;

import io.strata.protocol.Uuids;

import java.util.Comparator;
import java.util.List;
import java.util.UUID;

/**
 * One topic as Metadata describes it, partitions sorted by index and dense (0..n-1).
 *
 * @param topicId the topic id, or {@link Uuids#ZERO} if the broker does not report ids (Metadata before v10)
 */
public record TopicInfo(String name, UUID topicId, boolean internal, List<PartitionInfo> partitions) {
    public TopicInfo {
        partitions = partitions.stream().sorted(Comparator.comparingInt(PartitionInfo::partition)).toList();
        for (int i = 0; i < partitions.size(); i++) {
            if (partitions.get(i).partition() != i) {
                throw new IllegalArgumentException("partitions of " + name + " are not 0.." + (partitions.size() - 1)
                    + ": found " + partitions.get(i).partition() + " at position " + i);
            }
        }
    }

    public int partitionCount() {
        return partitions.size();
    }

    /** @throws ClientException if the topic has no such partition (user input names partitions) */
    public PartitionInfo partition(int partition) {
        if (partition < 0 || partition >= partitions.size()) {
            throw new ClientException("topic " + name + " has no partition " + partition + " (it has " + partitions.size()
                + (partitions.size() == 1 ? " partition)" : " partitions)"));
        }
        return partitions.get(partition);
    }

    public boolean hasTopicId() {
        return !topicId.equals(Uuids.ZERO);
    }
}
