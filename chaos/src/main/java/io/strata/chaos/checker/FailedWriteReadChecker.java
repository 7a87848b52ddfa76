package io.strata.chaos.checker;

import io.strata.chaos.history.History;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.Operation;
import io.strata.chaos.history.SendValue;

import java.util.ArrayList;
import java.util.List;

/**
 * Failed write read: a plain send recorded {@code fail} (the client's error proved the record was not
 * written) whose value is seen anyway: in a poll, a transaction's poll or a drain, with either isolation.
 * Either the broker wrote a record it answered as failed, or the workload took an unknown outcome for a
 * definite failure; both break the history's meaning. Info sends may appear: their outcome is unknown.
 *
 * <p>One anomaly per failed value seen, at its first observation.
 */
public final class FailedWriteReadChecker implements AnomalyChecker {

    @Override
    public List<Anomaly> check(History history) {
        PartitionMaps failedSendOp = new PartitionMaps();
        for (Operation operation : history.operations()) {
            if (operation.function() == Op.Function.SEND && operation.outcome() == Op.Type.FAIL) {
                SendValue send = (SendValue) operation.value();
                failedSendOp.of(send.partition()).put(send.value(), operation.completionIndex());
            }
        }
        PartitionMaps reported = new PartitionMaps();
        List<Anomaly> anomalies = new ArrayList<>();
        Observations.forEach(history, (partition, offset, value, opIndex, source, readCommitted) -> {
            if (source == Observations.Source.ACK) {
                return;
            }
            long sendOp = failedSendOp.get(partition, value, -1);
            if (sendOp >= 0 && reported.of(partition).putIfAbsent(value, 1)) {
                anomalies.add(new Anomaly(Anomaly.Kind.FAILED_WRITE_READ, partition, List.of(offset), List.of(value),
                        List.of((int) sendOp, opIndex), source.name().toLowerCase(java.util.Locale.ROOT) + " returned value " + value
                                + " at offset " + offset + " of the send that failed at index " + sendOp));
            }
        });
        return anomalies;
    }
}
