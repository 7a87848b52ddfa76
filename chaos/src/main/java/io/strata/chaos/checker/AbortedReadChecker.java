package io.strata.chaos.checker;

import io.strata.chaos.history.History;
import io.strata.chaos.history.Op;
import java.util.ArrayList;
import java.util.List;

/**
 * Aborted read (G1a): a read_committed read (a poll, a poll inside a transaction, or a drain) returns a
 * value written by a transaction that failed (was aborted). Values of info transactions may have been
 * committed, so reading them is never an anomaly here; read_uncommitted reads see aborted records by design.
 *
 * <p>One anomaly per aborted value read, at its first read_committed read.
 */
public final class AbortedReadChecker implements AnomalyChecker {

    @Override
    public List<Anomaly> check(History history) {
        TxnIndex aborted = new TxnIndex(history, operation -> operation.outcome() == Op.Type.FAIL);
        PartitionMaps reported = new PartitionMaps();
        List<Anomaly> anomalies = new ArrayList<>();
        Observations.forEach(history, (partition, offset, value, opIndex, source, readCommitted) -> {
            if (!readCommitted || source == Observations.Source.ACK) {
                return;
            }
            long txn = aborted.writerOf(partition, value);
            if (txn != TxnIndex.NO_TXN && reported.of(partition).putIfAbsent(value, 1)) {
                int txnOp = aborted.txns().get((int) txn).index();
                anomalies.add(new Anomaly(Anomaly.Kind.ABORTED_READ_G1A, partition, List.of(offset), List.of(value),
                        List.of(txnOp, opIndex), "read_committed " + source.name().toLowerCase(java.util.Locale.ROOT)
                                + " returned value " + value + " of the aborted txn at index " + txnOp));
            }
        });
        return anomalies;
    }
}
