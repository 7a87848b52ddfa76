package io.strata.chaos.checker;

import java.util.HashMap;
import java.util.Map;

/**
 * One {@link LongLongMap} per partition, created on first use. Partitions are few (tens to thousands);
 * the entries per partition are many. Not thread-safe.
 */
final class PartitionMaps {
    private final Map<String, LongLongMap> maps = new HashMap<>();

    /** @return the map of {@code partition}, created empty if absent */
    LongLongMap of(String partition) {
        return maps.computeIfAbsent(partition, p -> new LongLongMap());
    }

    /** @return the map of {@code partition}, or {@code null} if none was created */
    LongLongMap getOrNull(String partition) {
        return maps.get(partition);
    }

    /** @return the value of {@code key} in {@code partition}'s map, or {@code missing} */
    long get(String partition, long key, long missing) {
        LongLongMap map = maps.get(partition);
        return map == null ? missing : map.get(key, missing);
    }
}
