package io.strata.server.replica.fetcher;

import java.util.OptionalInt;
import java.util.UUID;

/**
 * Where one partition's replication stands in its {@link ReplicaFetcher} (Kafka's
 * {@code PartitionFetchState}). Immutable: every move returns a new value, and the moves below are
 * the only ones; any other throws {@link IllegalStateException} naming the values involved.
 *
 * <pre>
 *   state            meaning                                          next request
 *   ---------------  -----------------------------------------------  -----------------------------
 *   FETCHING         fetch from fetchOffset (= local log end)         Fetch
 *   TRUNCATING       find the divergence point before fetching        OffsetForLeaderEpoch (or a
 *                    (no DivergingEpoch from this leader, or no         local truncation to the high
 *                    local epoch to send as LastFetchedEpoch)           watermark without an epoch)
 *   RESET_TO_END     OFFSET_OUT_OF_RANGE: ask the leader's log end     ListOffsets(-1, latest)
 *   RESET_TO_START   leader end >= ours: ask the leader's log start   ListOffsets(-2, earliest)
 *
 *   FETCHING       --fetched-->          FETCHING
 *   FETCHING       --truncated(done)-->  FETCHING       (DivergingEpoch in a Fetch answer)
 *   FETCHING       --truncated(more)-->  TRUNCATING     (only when the leader does not truncate on fetch)
 *   TRUNCATING     --truncated(...)-->   FETCHING | TRUNCATING   (KIP-279: ask again with the new latest epoch)
 *   FETCHING       --outOfRange-->       RESET_TO_END
 *   RESET_TO_END   --resetTo-->          FETCHING       (leader end < ours: truncated to it)
 *   RESET_TO_END   --needLeaderStart-->  RESET_TO_START
 *   RESET_TO_START --resetTo-->          FETCHING
 *   any            --delayed(untilMs)--> same state, suspended until untilMs
 * </pre>
 *
 * <p>DELAYED is not a state of its own but a suspension of whichever state the partition is in,
 * as Kafka's {@code DelayedItem} is: a partition with an error waits {@code replica.fetch.backoff.ms}
 * and then retries the same step. A partition that cannot go on at all (local storage failure,
 * fenced by a newer leader epoch) leaves its fetcher instead ({@link FailedPartitions}).
 *
 * @param topicId            the topic's id, sent in Fetch v13+
 * @param fetchOffset        the next offset to fetch: the local log end offset
 * @param currentLeaderEpoch the leader epoch this replica follows, sent as CurrentLeaderEpoch
 * @param lastFetchedEpoch   the epoch of the last local batch (LastFetchedEpoch), empty if unknown
 * @param state              the step the partition is in
 * @param delayedUntilMs     monotonic time before which the partition does nothing, or {@link #NOT_DELAYED}
 * @param lag                the leader's high watermark minus {@code fetchOffset} at the last answer, or -1 if unknown
 */
public record PartitionFetchState(UUID topicId, long fetchOffset, int currentLeaderEpoch, OptionalInt lastFetchedEpoch, State state,
                                  long delayedUntilMs, long lag) {
    public static final long NOT_DELAYED = Long.MIN_VALUE;
    public static final long UNKNOWN_LAG = -1L;

    /** The steps of a partition; see the class comment. */
    public enum State { FETCHING, TRUNCATING, RESET_TO_END, RESET_TO_START }

    public PartitionFetchState {
        if (fetchOffset < 0 || currentLeaderEpoch < 0) {
            throw new IllegalArgumentException("invalid fetch state: fetchOffset=" + fetchOffset + ", currentLeaderEpoch=" + currentLeaderEpoch);
        }
    }

    /** The state of a newly added partition: it fetches from {@code logEndOffset}, or truncates first. */
    public static PartitionFetchState initial(UUID topicId, long logEndOffset, int leaderEpoch, OptionalInt latestEpoch, boolean truncateFirst) {
        return new PartitionFetchState(topicId, logEndOffset, leaderEpoch, latestEpoch, truncateFirst ? State.TRUNCATING : State.FETCHING,
            NOT_DELAYED, UNKNOWN_LAG);
    }

    public boolean isDelayed(long nowMs) {
        return delayedUntilMs != NOT_DELAYED && nowMs < delayedUntilMs;
    }

    /** Kafka's {@code isReadyForFetch}: fetching and not delayed. */
    public boolean isReadyForFetch(long nowMs) {
        return state == State.FETCHING && !isDelayed(nowMs);
    }

    /** Data (possibly none) was appended; the next fetch starts at {@code newFetchOffset}. */
    public PartitionFetchState fetched(long newFetchOffset, OptionalInt newLastFetchedEpoch, long newLag) {
        require(state == State.FETCHING, "fetched", newFetchOffset);
        if (newFetchOffset < fetchOffset) {
            throw new IllegalStateException("a fetch cannot move the fetch offset back: fetchOffset=" + fetchOffset + ", newFetchOffset="
                + newFetchOffset);
        }
        return new PartitionFetchState(topicId, newFetchOffset, currentLeaderEpoch, newLastFetchedEpoch, State.FETCHING, NOT_DELAYED, newLag);
    }

    /**
     * The log was truncated at {@code offset} on the leader's word (DivergingEpoch or an
     * OffsetForLeaderEpoch answer); {@code done} false keeps the partition TRUNCATING to ask again.
     */
    public PartitionFetchState truncated(long offset, OptionalInt newLastFetchedEpoch, boolean done) {
        require(state == State.FETCHING || state == State.TRUNCATING, "truncated", offset);
        return new PartitionFetchState(topicId, offset, currentLeaderEpoch, newLastFetchedEpoch, done ? State.FETCHING : State.TRUNCATING,
            NOT_DELAYED, lag);
    }

    /** The leader answered OFFSET_OUT_OF_RANGE: ask its log end offset next. */
    public PartitionFetchState outOfRange() {
        require(state == State.FETCHING, "outOfRange", fetchOffset);
        return new PartitionFetchState(topicId, fetchOffset, currentLeaderEpoch, lastFetchedEpoch, State.RESET_TO_END, NOT_DELAYED, lag);
    }

    /** The leader's log end is not below ours: ask its log start next. */
    public PartitionFetchState needLeaderStart(long newLag) {
        require(state == State.RESET_TO_END, "needLeaderStart", fetchOffset);
        return new PartitionFetchState(topicId, fetchOffset, currentLeaderEpoch, lastFetchedEpoch, State.RESET_TO_START, NOT_DELAYED, newLag);
    }

    /** The out-of-range handling chose {@code offset} (after any truncation): fetch from there. */
    public PartitionFetchState resetTo(long offset, OptionalInt newLastFetchedEpoch, long newLag) {
        require(state == State.RESET_TO_END || state == State.RESET_TO_START, "resetTo", offset);
        return new PartitionFetchState(topicId, offset, currentLeaderEpoch, newLastFetchedEpoch, State.FETCHING, NOT_DELAYED, newLag);
    }

    /** Suspends the partition until {@code untilMs}; an already delayed partition keeps its delay (as Kafka's delayPartitions). */
    public PartitionFetchState delayed(long nowMs, long untilMs) {
        if (isDelayed(nowMs)) {
            return this;
        }
        return new PartitionFetchState(topicId, fetchOffset, currentLeaderEpoch, lastFetchedEpoch, state, untilMs, lag);
    }

    private void require(boolean legal, String move, long offset) {
        if (!legal) {
            throw new IllegalStateException("illegal fetch state move " + move + " from " + state + ": offset=" + offset + ", fetchOffset="
                + fetchOffset + ", currentLeaderEpoch=" + currentLeaderEpoch);
        }
    }
}
