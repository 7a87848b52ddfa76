package io.strata.chaos.history;

import java.util.List;

/**
 * The value of a {@code txn}: the micro-ops of one Kafka transaction of a transactional producer (the
 * process), in program order. The invoke lists the sends (offset {@code -1}); the completion adds the
 * polls made inside the transaction and any acknowledged offsets.
 *
 * @param readCommitted whether the polls inside the transaction read with {@code read_committed}
 * @param ops the micro-ops
 */
public record TxnValue(boolean readCommitted, List<MicroOp> ops) implements OpValue {
    public TxnValue {
        ops = List.copyOf(ops);
    }
}
