package io.strata.chaos.checker;

import io.strata.chaos.history.DrainValue;
import io.strata.chaos.history.History;
import io.strata.chaos.history.Message;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.Operation;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Unexpected gap: in an ok drain of a partition no transaction wrote to (whatever the transaction's
 * outcome, even unknown: its markers take offsets), an offset in {@code [0, endOffset)} that holds no
 * record. Compaction and retention are off in the campaign, so the log starts at 0 and every offset of
 * a non-transactional partition is a record.
 *
 * <p>One anomaly per maximal skipped range.
 */
public final class UnexpectedGapChecker implements AnomalyChecker {

    @Override
    public List<Anomaly> check(History history) {
        TxnIndex txns = new TxnIndex(history, operation -> true);
        List<Anomaly> anomalies = new ArrayList<>();
        for (Operation operation : history.operations()) {
            if (operation.function() != Op.Function.DRAIN || operation.outcome() != Op.Type.OK) {
                continue;
            }
            DrainValue drain = (DrainValue) operation.value();
            PartitionMaps offsets = new PartitionMaps();
            TreeSet<String> partitions = new TreeSet<>(drain.endOffsets().keySet());
            for (Message m : drain.messages()) {
                offsets.of(m.partition()).put(m.offset(), 1);
                partitions.add(m.partition());
            }
            for (String partition : partitions) {
                if (!txns.wrote(partition)) {
                    checkPartition(partition, offsets.of(partition).sortedKeys(), drain.endOffsets().get(partition),
                            operation.index(), anomalies);
                }
            }
        }
        return anomalies;
    }

    private static void checkPartition(String partition, long[] offsets, Long endOffset, int opIndex,
            List<Anomaly> anomalies) {
        long expected = 0;
        for (long offset : offsets) {
            if (offset > expected) {
                anomalies.add(gap(partition, expected, offset, opIndex));
            }
            expected = offset + 1;
        }
        if (endOffset != null && endOffset > expected) {
            anomalies.add(gap(partition, expected, endOffset, opIndex));
        }
    }

    private static Anomaly gap(String partition, long fromInclusive, long toExclusive, int opIndex) {
        return new Anomaly(Anomaly.Kind.UNEXPECTED_GAP, partition, List.of(fromInclusive, toExclusive - 1), List.of(),
                List.of(opIndex), "drain of a non-transactional partition skips offsets " + fromInclusive + ".."
                        + (toExclusive - 1));
    }
}
