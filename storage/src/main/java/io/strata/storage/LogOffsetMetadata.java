package io.strata.storage;

/**
 * An offset together with where it lives: the base offset of its segment and its byte
 * position there. Used for the log end offset and high watermark so that fetch size
 * calculations need no index lookups.
 */
public record LogOffsetMetadata(long messageOffset, long segmentBaseOffset, int relativePositionInSegment) {
    public static final long UNKNOWN_SEGMENT = -1L;
    public static final int UNKNOWN_POSITION = -1;

    public static LogOffsetMetadata offsetOnly(long offset) {
        return new LogOffsetMetadata(offset, UNKNOWN_SEGMENT, UNKNOWN_POSITION);
    }

    public boolean messageOffsetOnly() {
        return segmentBaseOffset == UNKNOWN_SEGMENT && relativePositionInSegment == UNKNOWN_POSITION;
    }

    public boolean onSameSegment(LogOffsetMetadata that) {
        return !messageOffsetOnly() && !that.messageOffsetOnly() && segmentBaseOffset == that.segmentBaseOffset;
    }

    /** Bytes between this and an earlier offset on the same segment. */
    public int positionDiff(LogOffsetMetadata that) {
        if (!onSameSegment(that)) {
            throw new IllegalStateException(this + " and " + that + " are not on the same segment");
        }
        return relativePositionInSegment - that.relativePositionInSegment;
    }
}
