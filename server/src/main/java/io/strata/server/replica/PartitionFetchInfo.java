package io.strata.server.replica;

/**
 * One partition of a fetch request: where to read and how much.
 *
 * @param lastFetchedEpoch  the epoch of the last batch the fetcher has (Fetch v12+, KIP-320), or -1
 * @param logStartOffset    a follower's log start offset, or -1
 */
public record PartitionFetchInfo(long fetchOffset, int maxBytes, int currentLeaderEpoch, int lastFetchedEpoch, long logStartOffset) {
    public PartitionFetchInfo(long fetchOffset, int maxBytes, int currentLeaderEpoch) {
        this(fetchOffset, maxBytes, currentLeaderEpoch, -1, -1L);
    }
}
