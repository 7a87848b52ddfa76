package io.strata.chaos.checker;

import java.util.List;
import java.util.Objects;

/**
 * One anomaly a checker found.
 *
 * @param kind what rule was broken
 * @param partition the partition involved, or {@code null} when several or none (cycles, txn-wide)
 * @param offsets the offsets involved (may be empty)
 * @param values the record values involved (may be empty)
 * @param ops the history indices (0-based; line = index + 1) of the ops involved
 * @param explanation one line saying what was seen
 */
public record Anomaly(Kind kind, String partition, List<Long> offsets, List<Long> values, List<Integer> ops,
        String explanation) {

    /** The anomalies of docs/chaos-plan.md, "Checker: anomalies". */
    public enum Kind {
        LOST_WRITE,
        DUPLICATE,
        INCONSISTENT_OFFSET,
        FAILED_WRITE_READ,
        NON_MONOTONIC_POLL,
        UNEXPECTED_GAP,
        ABORTED_READ_G1A,
        INTERMEDIATE_READ_G1B,
        CYCLE_G0,
        CYCLE_G1C,
        SPLIT_OWNERSHIP
    }

    public Anomaly {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(explanation, "explanation");
        offsets = List.copyOf(offsets);
        values = List.copyOf(values);
        ops = List.copyOf(ops);
    }

    /** @return one line: kind, partition, offsets, values, op lines, explanation */
    @Override
    public String toString() {
        return kind + (partition == null ? "" : " " + partition) + " offsets=" + offsets + " values=" + values
                + " ops=" + ops + ": " + explanation;
    }
}
