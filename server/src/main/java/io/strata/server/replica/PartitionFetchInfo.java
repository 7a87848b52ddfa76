package io.strata.server.replica;

/** One partition of a fetch request: where to read and how much. */
public record PartitionFetchInfo(long fetchOffset, int maxBytes, int currentLeaderEpoch) {
}
