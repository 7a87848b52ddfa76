package io.strata.chaos.history;

import java.util.Objects;

/**
 * One step of a transaction: a send of a value, or the read of one message.
 *
 * @param kind send or poll
 * @param partition the partition, as {@code topic-index}
 * @param offset for a poll the message's offset; for a send the acknowledged offset or {@code -1}
 * @param value the value sent or read
 */
public record MicroOp(Kind kind, String partition, long offset, long value) {

    /** What a micro-op does. */
    public enum Kind {
        SEND,
        POLL
    }

    public MicroOp {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(partition, "partition");
        if (offset < -1 || (kind == Kind.POLL && offset < 0)) {
            throw new IllegalArgumentException("bad offset for a " + kind + ": offset=" + offset);
        }
    }

    /** @return a send micro-op */
    public static MicroOp send(String partition, long offset, long value) {
        return new MicroOp(Kind.SEND, partition, offset, value);
    }

    /** @return a poll micro-op */
    public static MicroOp poll(String partition, long offset, long value) {
        return new MicroOp(Kind.POLL, partition, offset, value);
    }
}
