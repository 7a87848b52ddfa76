package io.strata.storage;

/**
 * An {@link OffsetIndex} entry: the record batch holding {@code offset} starts at byte
 * {@code position} of the segment's log file.
 *
 * @param offset   an absolute offset
 * @param position a byte position in the segment's {@code .log} file
 */
public record OffsetPosition(long offset, int position) {
}
