package io.strata.coordinator.group;

/** A committed offset as stored. */
public record OffsetAndMetadata(long offset, int leaderEpoch, String metadata, long commitTimestampMs) {
}
