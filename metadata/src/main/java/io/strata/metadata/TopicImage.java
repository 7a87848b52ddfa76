package io.strata.metadata;

import java.util.Map;
import java.util.UUID;

/** A topic in the metadata image: name, id and partitions by index. Immutable. */
public record TopicImage(String name, UUID id, Map<Integer, PartitionRegistration> partitions) {
    public TopicImage {
        partitions = Map.copyOf(partitions);
    }

    public int partitionCount() {
        return partitions.size();
    }

    public PartitionRegistration partition(int index) {
        return partitions.get(index);
    }
}
