package io.strata.storage;

/**
 * The outcome of an append: the offsets assigned (or, for a retried duplicate of an
 * idempotent producer's batch, the offsets it got the first time), the timestamps as stored,
 * and the log start offset to report back to the producer.
 *
 * @param firstOffset      offset of the first record
 * @param lastOffset       offset of the last record
 * @param maxTimestamp     the largest timestamp as stored
 * @param logAppendTimeMs  the broker time stamped on the batch for LogAppendTime topics, else -1
 * @param logStartOffset   the log start offset after the append
 * @param recordCount      records appended (0 for a duplicate)
 * @param duplicate        true if nothing was appended because the batch was a retry
 */
public record LogAppendInfo(long firstOffset, long lastOffset, long maxTimestamp, long logAppendTimeMs, long logStartOffset,
                            int recordCount, boolean duplicate) {
}
