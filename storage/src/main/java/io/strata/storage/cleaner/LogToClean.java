package io.strata.storage.cleaner;

import io.strata.storage.LogSegment;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

import java.util.List;

/**
 * A log chosen for cleaning and the range to clean:
 * <pre>
 *   logStartOffset      firstDirtyOffset       firstUncleanableOffset    active segment
 *   |--- clean (cleaned before) ---|--- dirty, cleanable ---|--- not yet ---|-------|
 * </pre>
 * {@code firstUncleanableOffset} is a segment base offset: cleaning takes whole segments only,
 * and never the active one.
 *
 * @param cleanBytes       bytes of the segments below the first dirty offset
 * @param cleanableBytes   bytes of the segments from the one holding the first dirty offset up to the first uncleanable one
 * @param needCompactionNow a dirty record is older than max.compaction.lag.ms
 *
 * <p>Immutable (the log it names is not).
 */
public record LogToClean(UnifiedLog log, long firstDirtyOffset, long firstUncleanableOffset, long cleanBytes, long cleanableBytes,
                         boolean needCompactionNow) {

    /**
     * Sizes the range of {@code log} from {@code firstDirtyOffset} to the base of the segment
     * holding {@code uncleanableOffset} (the active segment's base if that is earlier).
     */
    public static LogToClean of(UnifiedLog log, long firstDirtyOffset, long uncleanableOffset, boolean needCompactionNow) {
        List<LogSegment> fromUncleanable = log.nonActiveLogSegmentsFrom(uncleanableOffset);
        long firstUncleanableOffset = fromUncleanable.isEmpty() ? log.activeSegment().baseOffset() : fromUncleanable.get(0).baseOffset();
        long cleanBytes = sizeOf(log.logSegments(-1, Math.max(-1, firstDirtyOffset)));
        long cleanableBytes = sizeOf(log.logSegments(Math.min(firstDirtyOffset, firstUncleanableOffset), firstUncleanableOffset));
        return new LogToClean(log, firstDirtyOffset, firstUncleanableOffset, cleanBytes, cleanableBytes, needCompactionNow);
    }

    private static long sizeOf(List<LogSegment> segments) {
        long total = 0;
        for (LogSegment segment : segments) {
            total += segment.size();
        }
        return total;
    }

    public TopicPartition topicPartition() {
        return log.topicPartition();
    }

    public long totalBytes() {
        return cleanBytes + cleanableBytes;
    }

    /** The dirty share of the log, which min.cleanable.dirty.ratio is compared with. */
    public double cleanableRatio() {
        long total = totalBytes();
        return total == 0 ? 0.0 : (double) cleanableBytes / total;
    }
}
