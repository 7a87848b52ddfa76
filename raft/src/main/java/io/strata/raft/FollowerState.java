package io.strata.raft;

/**
 * The replica knows the epoch's leader and fetches from it. Every successful fetch resets the
 * fetch timer; when it expires a voter starts a pre-vote. The high watermark only moves
 * forward within the state.
 *
 * <p>Until its first successful fetch the follower does not know that the leader is alive,
 * so it grants pre-votes: a replica that went back to following after losing a pre-vote must
 * not block the next one, or two such replicas could refuse each other forever.
 */
public final class FollowerState implements EpochState {
    private final int epoch;
    private final int leaderId;
    private final int votedId;
    final Timer fetchTimer;
    private long highWatermark;
    private boolean fetchedFromLeader;

    FollowerState(int epoch, int leaderId, int votedId, Timer fetchTimer, long highWatermark) {
        this.epoch = epoch;
        this.leaderId = leaderId;
        this.votedId = votedId;
        this.fetchTimer = fetchTimer;
        this.highWatermark = highWatermark;
    }

    @Override
    public int epoch() {
        return epoch;
    }

    @Override
    public ElectionState election() {
        return new ElectionState(epoch, leaderId, votedId);
    }

    public long highWatermark() {
        return highWatermark;
    }

    /** Moves the high watermark forward; a lower value (a stale response) is ignored. */
    void updateHighWatermark(long offset) {
        highWatermark = Math.max(highWatermark, offset);
    }

    /** Whether a fetch from the leader has succeeded since this replica began following it. */
    boolean hasFetchedFromLeader() {
        return fetchedFromLeader;
    }

    void onSuccessfulFetch() {
        fetchedFromLeader = true;
    }

    @Override
    public String name() {
        return "Follower";
    }

    @Override
    public String toString() {
        return "Follower(epoch=" + epoch + ", leaderId=" + leaderId + ", highWatermark=" + highWatermark + ")";
    }
}
