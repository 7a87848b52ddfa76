package io.strata.chaos.history;

import java.util.Objects;

/**
 * The value of a {@code send}: one record, whose value is unique in the whole history, to a partition.
 *
 * @param partition the partition, as {@code topic-index}
 * @param value the record's value (workloads never send one value twice, even after a failure)
 * @param offset the acknowledged offset, or {@code -1} when not known (invoke, fail, info)
 */
public record SendValue(String partition, long value, long offset) implements OpValue {
    public SendValue {
        Objects.requireNonNull(partition, "partition");
        if (offset < -1) {
            throw new IllegalArgumentException("offset must be >= -1: offset=" + offset);
        }
    }
}
