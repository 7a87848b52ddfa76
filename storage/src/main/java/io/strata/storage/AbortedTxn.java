package io.strata.storage;

/**
 * One {@link TransactionIndex} entry: a transaction that was aborted, whose abort marker was
 * written in this segment.
 *
 * @param producerId       the producer that aborted
 * @param firstOffset      the offset of the transaction's first record
 * @param lastOffset       the offset of the abort marker
 * @param lastStableOffset the partition's last stable offset when the marker was written
 */
public record AbortedTxn(long producerId, long firstOffset, long lastOffset, long lastStableOffset) {
}
