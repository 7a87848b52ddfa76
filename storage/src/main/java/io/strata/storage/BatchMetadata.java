package io.strata.storage;

/**
 * What the producer state remembers of one appended batch of an idempotent producer, to
 * answer a retried duplicate with the original offsets.
 *
 * @param firstSeq   sequence of the batch's first record
 * @param lastSeq    sequence of its last record
 * @param lastOffset offset of its last record
 * @param offsetDelta lastOffset - first offset
 * @param timestamp  the batch's max timestamp as stored (LogAppendTime if that applies)
 */
public record BatchMetadata(int firstSeq, int lastSeq, long lastOffset, int offsetDelta, long timestamp) {
    public long firstOffset() {
        return lastOffset - offsetDelta;
    }
}
