package io.strata.chaos.checker;

import io.strata.chaos.history.DrainValue;
import io.strata.chaos.history.History;
import io.strata.chaos.history.Message;
import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.Operation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Intermediate read (G1b) / atomicity: a read_committed reader sees some but not all of one transaction's
 * values in a partition it read across. A reader is one run of a consumer ({@link ReadRuns}) on one
 * partition, or one partition of a read_committed drain; it "read across" a value when the value's offset
 * lies strictly between the lowest and the highest offset the reader read (a run that started or stopped
 * in the middle of a transaction's records is fine).
 *
 * <p>Transactions considered: ok ones and info ones (seeing any value of an info transaction means it
 * committed, and then all of its values must be visible); fail ones belong to {@link AbortedReadChecker}.
 * A value's offset comes from its acknowledgement or from any observation; a value never observed
 * anywhere cannot be placed and is skipped (a lost one is {@link LostWriteChecker}'s).
 *
 * <p>One anomaly per (reader, transaction, partition).
 */
public final class IntermediateReadChecker implements AnomalyChecker {

    @Override
    public List<Anomaly> check(History history) {
        TxnIndex txns = new TxnIndex(history, operation -> operation.outcome() != Op.Type.FAIL);
        PartitionMaps offsetOfValue = new PartitionMaps();
        Observations.forEach(history, (partition, offset, value, opIndex, source, readCommitted) ->
                offsetOfValue.of(partition).putIfAbsent(value, offset));
        List<Anomaly> anomalies = new ArrayList<>();
        Map<Integer, Map<String, Reader>> runs = new TreeMap<>();
        ReadRuns.forEach(history, new ReadRuns.Listener() {
            @Override
            public void onRead(int process, String partition, long offset, long value, int opIndex, boolean readCommitted) {
                if (readCommitted) {
                    runs.computeIfAbsent(process, p -> new TreeMap<>())
                            .computeIfAbsent(partition, p -> new Reader("process " + process))
                            .read(offset, value, opIndex, txns.writerOf(partition, value));
                }
            }

            @Override
            public void onRunEnd(int process) {
                Map<String, Reader> ended = runs.remove(process);
                if (ended != null) {
                    ended.forEach((partition, reader) -> reader.finish(partition, txns, offsetOfValue, anomalies));
                }
            }

            @Override
            public void onHistoryEnd() {
                for (Integer process : new ArrayList<>(runs.keySet())) {
                    onRunEnd(process);
                }
            }
        });
        for (Operation operation : history.operations()) {
            if (operation.function() == Op.Function.DRAIN && operation.outcome() == Op.Type.OK
                    && ((DrainValue) operation.value()).readCommitted()) {
                Map<String, Reader> drained = new TreeMap<>();
                for (Message m : ((DrainValue) operation.value()).messages()) {
                    drained.computeIfAbsent(m.partition(), p -> new Reader("drain"))
                            .read(m.offset(), m.value(), operation.index(), txns.writerOf(m.partition(), m.value()));
                }
                drained.forEach((partition, reader) -> reader.finish(partition, txns, offsetOfValue, anomalies));
            }
        }
        return anomalies;
    }

    /** What one reader read of one partition: its offset range and the txn values it saw. */
    private static final class Reader {
        private final String name;
        private long minOffset = Long.MAX_VALUE;
        private long maxOffset = Long.MIN_VALUE;
        private int firstOp = -1;
        private int lastOp = -1;
        private final Map<Integer, Set<Long>> seenByTxn = new TreeMap<>();

        Reader(String name) {
            this.name = name;
        }

        void read(long offset, long value, int opIndex, long txn) {
            minOffset = Math.min(minOffset, offset);
            maxOffset = Math.max(maxOffset, offset);
            if (firstOp < 0) {
                firstOp = opIndex;
            }
            lastOp = opIndex;
            if (txn != TxnIndex.NO_TXN) {
                seenByTxn.computeIfAbsent((int) txn, t -> new HashSet<>()).add(value);
            }
        }

        void finish(String partition, TxnIndex txns, PartitionMaps offsetOfValue, List<Anomaly> anomalies) {
            seenByTxn.forEach((txn, seen) -> {
                List<Long> missingOffsets = new ArrayList<>();
                List<Long> missingValues = new ArrayList<>();
                for (MicroOp send : txns.sends(txn)) {
                    if (!send.partition().equals(partition) || seen.contains(send.value())) {
                        continue;
                    }
                    long offset = send.offset() >= 0 ? send.offset() : offsetOfValue.get(partition, send.value(), -1);
                    if (offset > minOffset && offset < maxOffset) {
                        missingOffsets.add(offset);
                        missingValues.add(send.value());
                    }
                }
                if (!missingValues.isEmpty()) {
                    int txnOp = txns.txns().get(txn).index();
                    anomalies.add(new Anomaly(Anomaly.Kind.INTERMEDIATE_READ_G1B, partition, missingOffsets,
                            missingValues, List.of(txnOp, firstOp, lastOp), "read_committed " + name + " read "
                                    + seen.size() + " value(s) of the txn at index " + txnOp + " across offsets "
                                    + minOffset + ".." + maxOffset + " but not values " + missingValues));
                }
            });
        }
    }
}
