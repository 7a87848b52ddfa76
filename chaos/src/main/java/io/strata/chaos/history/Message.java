package io.strata.chaos.history;

import java.util.Objects;

/**
 * One record as a consumer returned it.
 *
 * @param partition the partition, as {@code topic-index}
 * @param offset its offset, {@code >= 0}
 * @param value its value
 */
public record Message(String partition, long offset, long value) {
    public Message {
        Objects.requireNonNull(partition, "partition");
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0: offset=" + offset);
        }
    }
}
