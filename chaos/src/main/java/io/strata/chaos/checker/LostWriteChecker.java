package io.strata.chaos.checker;

import io.strata.chaos.history.DrainValue;
import io.strata.chaos.history.History;
import io.strata.chaos.history.Message;
import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.Operation;
import io.strata.chaos.history.SendValue;
import java.util.ArrayList;
import java.util.List;

/**
 * Lost write: an acknowledged value absent from a drain that reached past it.
 *
 * <p>Acknowledged values: ok sends, and the sends of ok (committed) transactions. An info send or info
 * transaction may or may not have happened, so its absence is never a loss; fail ones are not expected.
 * A drain reached past a value when its reach (the larger of its end offset and its last drained offset
 * + 1) is greater than the acknowledged offset; a value whose offset is unknown (a transactional send)
 * must be in every drain of its partition, since it committed before the drain started.
 *
 * <p>One anomaly per lost value, naming every drain missing it.
 */
public final class LostWriteChecker implements AnomalyChecker {

    @Override
    public List<Anomaly> check(History history) {
        List<Drain> drains = new ArrayList<>();
        for (Operation operation : history.operations()) {
            if (operation.function() == Op.Function.DRAIN && operation.outcome() == Op.Type.OK) {
                drains.add(new Drain(operation.completionIndex(), (DrainValue) operation.value()));
            }
        }
        List<Anomaly> anomalies = new ArrayList<>();
        if (drains.isEmpty()) {
            return anomalies;
        }
        for (Operation operation : history.operations()) {
            if (operation.outcome() != Op.Type.OK) {
                continue;
            }
            if (operation.function() == Op.Function.SEND) {
                SendValue send = (SendValue) operation.value();
                checkValue(send.partition(), send.value(), send.offset(), operation.index(), drains, anomalies);
            } else if (operation.function() == Op.Function.TXN) {
                for (MicroOp m : ((io.strata.chaos.history.TxnValue) operation.value()).ops()) {
                    if (m.kind() == MicroOp.Kind.SEND) {
                        checkValue(m.partition(), m.value(), m.offset(), operation.index(), drains, anomalies);
                    }
                }
            }
        }
        return anomalies;
    }

    private static void checkValue(String partition, long value, long offset, int opIndex, List<Drain> drains,
            List<Anomaly> anomalies) {
        List<Integer> ops = new ArrayList<>();
        long reach = -1;
        for (Drain drain : drains) {
            long drainReach = drain.reach(partition);
            boolean reachedPast = drainReach >= 0 && (offset < 0 || offset < drainReach);
            if (reachedPast && !drain.values.of(partition).containsKey(value)) {
                ops.add(drain.opIndex);
                reach = Math.max(reach, drainReach);
            }
        }
        if (ops.isEmpty()) {
            return;
        }
        ops.add(0, opIndex);
        anomalies.add(new Anomaly(Anomaly.Kind.LOST_WRITE, partition, offset < 0 ? List.of() : List.of(offset),
                List.of(value), ops, "acknowledged value " + value + (offset < 0 ? "" : " at offset " + offset)
                        + " is missing from " + (ops.size() - 1) + " drain(s) that reached offset " + reach));
    }

    /** One ok drain: its values per partition, and how far it reached. */
    private static final class Drain {
        final int opIndex;
        final DrainValue value;
        final PartitionMaps values = new PartitionMaps();
        final java.util.Map<String, Long> reach = new java.util.HashMap<>();

        Drain(int opIndex, DrainValue value) {
            this.opIndex = opIndex;
            this.value = value;
            for (Message m : value.messages()) {
                values.of(m.partition()).put(m.value(), m.offset());
                reach.merge(m.partition(), m.offset() + 1, Math::max);
            }
            value.endOffsets().forEach((p, end) -> reach.merge(p, end, Math::max));
        }

        /** @return how far this drain read {@code partition} (exclusive), or -1 if it did not drain it */
        long reach(String partition) {
            return reach.getOrDefault(partition, -1L);
        }
    }
}
