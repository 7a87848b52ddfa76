package io.strata.storage;

/**
 * A {@link TimeIndex} entry: {@code timestamp} is the largest timestamp seen in the segment up to
 * and including the batch that contains {@code offset}.
 *
 * @param timestamp milliseconds since the epoch, or {@link TimeIndex#NO_TIMESTAMP}
 * @param offset    an absolute offset
 */
public record TimestampOffset(long timestamp, long offset) {
}
