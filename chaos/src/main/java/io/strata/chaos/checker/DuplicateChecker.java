package io.strata.chaos.checker;

import io.strata.chaos.history.History;
import java.util.ArrayList;
import java.util.List;

/**
 * Duplicate: one value of one partition at two offsets (the idempotent producer must write a value once,
 * and workloads never send one value twice). Every observation counts: acknowledged offsets, polls
 * (read_committed or not, inside transactions or not) and drains; an info send observed once is fine.
 *
 * <p>One anomaly per duplicated value: the first two offsets seen.
 */
public final class DuplicateChecker implements AnomalyChecker {

    @Override
    public List<Anomaly> check(History history) {
        PartitionMaps offsetOfValue = new PartitionMaps();
        PartitionMaps opOfValue = new PartitionMaps();
        PartitionMaps reported = new PartitionMaps();
        List<Anomaly> anomalies = new ArrayList<>();
        Observations.forEach(history, (partition, offset, value, opIndex, source, readCommitted) -> {
            LongLongMap offsets = offsetOfValue.of(partition);
            long first = offsets.get(value, -1);
            if (first < 0) {
                offsets.put(value, offset);
                opOfValue.of(partition).put(value, opIndex);
            } else if (first != offset && reported.of(partition).putIfAbsent(value, 1)) {
                int firstOp = (int) opOfValue.get(partition, value, -1);
                anomalies.add(new Anomaly(Anomaly.Kind.DUPLICATE, partition, List.of(first, offset), List.of(value),
                        List.of(firstOp, opIndex), "value " + value + " is at offset " + first + " and at offset " + offset));
            }
        });
        return anomalies;
    }
}
