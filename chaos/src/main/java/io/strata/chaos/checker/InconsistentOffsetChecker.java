package io.strata.chaos.checker;

import io.strata.chaos.history.History;
import java.util.ArrayList;
import java.util.List;

/**
 * Inconsistent offset: one (partition, offset) seen with two values, across acknowledged offsets,
 * polls and drains (a log has one record per offset, whoever reads it and whatever their isolation).
 *
 * <p>One anomaly per offset: the first two values seen.
 */
public final class InconsistentOffsetChecker implements AnomalyChecker {

    @Override
    public List<Anomaly> check(History history) {
        PartitionMaps valueAtOffset = new PartitionMaps();
        PartitionMaps opAtOffset = new PartitionMaps();
        PartitionMaps reported = new PartitionMaps();
        List<Anomaly> anomalies = new ArrayList<>();
        Observations.forEach(history, (partition, offset, value, opIndex, source, readCommitted) -> {
            LongLongMap values = valueAtOffset.of(partition);
            if (!values.containsKey(offset)) {
                values.put(offset, value);
                opAtOffset.of(partition).put(offset, opIndex);
                return;
            }
            long first = values.get(offset, 0);
            if (first != value && reported.of(partition).putIfAbsent(offset, 1)) {
                int firstOp = (int) opAtOffset.get(partition, offset, -1);
                anomalies.add(new Anomaly(Anomaly.Kind.INCONSISTENT_OFFSET, partition, List.of(offset),
                        List.of(first, value), List.of(firstOp, opIndex),
                        "offset " + offset + " holds value " + first + " and value " + value));
            }
        });
        return anomalies;
    }
}
