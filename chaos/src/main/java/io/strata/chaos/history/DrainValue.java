package io.strata.chaos.history;

import java.util.List;
import java.util.Map;

/**
 * The value of a {@code drain}: after the workloads stopped, every record of every partition read from
 * offset 0 up to the end offset the draining consumer saw (the last stable offset with read_committed, the
 * high watermark with read_uncommitted).
 *
 * @param readCommitted the isolation level of the drain
 * @param messages every message returned, per partition in offset order
 * @param endOffsets per partition drained, the end offset reached (exclusive)
 */
public record DrainValue(boolean readCommitted, List<Message> messages, Map<String, Long> endOffsets) implements OpValue {
    public DrainValue {
        messages = List.copyOf(messages);
        endOffsets = Map.copyOf(endOffsets);
    }
}
