package io.strata.chaos.checker;

import io.strata.chaos.history.History;
import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.Operation;
import io.strata.chaos.history.TxnValue;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The transactions of a history and who wrote which value: a txn is numbered by its position in
 * {@link #txns()}; its writes are the sends of its completion's value (or of its invoke's if it never
 * completed). A workload never sends one value twice, so a (partition, value) has at most one writer.
 *
 * <p>Immutable after construction; not shared between threads.
 */
final class TxnIndex {
    static final long NO_TXN = -1;

    private final List<Operation> txns = new ArrayList<>();
    private final PartitionMaps writerOfValue = new PartitionMaps();
    private final Set<String> writtenPartitions = new HashSet<>();

    /** Indexes the transactions whose operation satisfies {@code include}. */
    TxnIndex(History history, Predicate<Operation> include) {
        for (Operation operation : history.operations()) {
            if (operation.function() != Op.Function.TXN || !include.test(operation)) {
                continue;
            }
            int txn = txns.size();
            txns.add(operation);
            for (MicroOp m : ((TxnValue) operation.value()).ops()) {
                if (m.kind() == MicroOp.Kind.SEND) {
                    writerOfValue.of(m.partition()).put(m.value(), txn);
                    writtenPartitions.add(m.partition());
                }
            }
        }
    }

    /** @return the indexed transactions */
    List<Operation> txns() {
        return txns;
    }

    /** @return the number of the txn that wrote {@code value} to {@code partition}, or {@link #NO_TXN} */
    long writerOf(String partition, long value) {
        return writerOfValue.get(partition, value, NO_TXN);
    }

    /** @return whether some indexed txn wrote to {@code partition} */
    boolean wrote(String partition) {
        return writtenPartitions.contains(partition);
    }

    /** @return the sends of txn {@code txn} */
    List<MicroOp> sends(int txn) {
        List<MicroOp> result = new ArrayList<>();
        for (MicroOp m : ((TxnValue) txns.get(txn).value()).ops()) {
            if (m.kind() == MicroOp.Kind.SEND) {
                result.add(m);
            }
        }
        return result;
    }
}
