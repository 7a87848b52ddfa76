package io.strata.server.replica;

import io.strata.protocol.ErrorCode;
import io.strata.storage.ErrorCodeException;

/**
 * What the leader knows of one other replica of a partition it leads, from that replica's
 * fetches (Kafka's {@code Replica}). {@link #lastCaughtUpTimeMs()} is the largest time t such that
 * the replica's latest fetch offset reached the leader's log end as of t: a fetch that reaches the
 * leader's end when it arrives sets it to the fetch time; a fetch that only reaches the end the
 * leader had at the previous fetch sets it to that previous fetch's time. So a follower under
 * steady load, always one batch behind the moving end, still counts as caught up.
 *
 * <p>Thread-safety: every method is synchronized (fetch handler threads update it concurrently
 * with the ISR shrink task reading it).
 */
public final class RemoteReplica {
    /** Offsets not known yet (no fetch since this node became leader). */
    public static final long UNKNOWN_OFFSET = -1L;
    /** A fetch that carried no broker epoch (Fetch before v15). */
    public static final long NO_BROKER_EPOCH = -1L;

    private final int brokerId;
    private long logEndOffset = UNKNOWN_OFFSET;
    private long logStartOffset = UNKNOWN_OFFSET;
    private long lastFetchLeaderLogEndOffset = UNKNOWN_OFFSET;
    private long lastFetchTimeMs;
    private long lastCaughtUpTimeMs;
    private long brokerEpoch = NO_BROKER_EPOCH;

    public RemoteReplica(int brokerId) {
        this.brokerId = brokerId;
    }

    public int brokerId() {
        return brokerId;
    }

    public synchronized long logEndOffset() {
        return logEndOffset;
    }

    public synchronized long logStartOffset() {
        return logStartOffset;
    }

    public synchronized long lastCaughtUpTimeMs() {
        return lastCaughtUpTimeMs;
    }

    public synchronized long lastFetchTimeMs() {
        return lastFetchTimeMs;
    }

    public synchronized long lastFetchLeaderLogEndOffset() {
        return lastFetchLeaderLogEndOffset;
    }

    /** The broker epoch of the replica's latest fetch (KIP-903), or {@link #NO_BROKER_EPOCH}. */
    public synchronized long brokerEpoch() {
        return brokerEpoch;
    }

    /**
     * Records a fetch at {@code fetchOffset} that arrived at {@code fetchTimeMs}, when the leader's
     * log ended at {@code leaderEndOffset}.
     *
     * @throws ErrorCodeException NOT_LEADER_OR_FOLLOWER if the fetch carries a broker epoch older
     *     than one already seen: it comes from a previous incarnation of the broker (KIP-903)
     */
    public synchronized void updateFetchState(long fetchOffset, long followerLogStartOffset, long fetchTimeMs, long leaderEndOffset,
                                              long fetchBrokerEpoch) {
        if (fetchBrokerEpoch != NO_BROKER_EPOCH && brokerEpoch != NO_BROKER_EPOCH && fetchBrokerEpoch < brokerEpoch) {
            throw new ErrorCodeException(ErrorCode.NOT_LEADER_OR_FOLLOWER, "stale fetch from replica " + brokerId + ": broker epoch "
                + fetchBrokerEpoch + " is older than " + brokerEpoch);
        }
        if (fetchOffset >= leaderEndOffset) {
            lastCaughtUpTimeMs = Math.max(lastCaughtUpTimeMs, fetchTimeMs);
        } else if (fetchOffset >= lastFetchLeaderLogEndOffset) {
            lastCaughtUpTimeMs = Math.max(lastCaughtUpTimeMs, lastFetchTimeMs);
        }
        logStartOffset = followerLogStartOffset;
        logEndOffset = fetchOffset;
        lastFetchLeaderLogEndOffset = Math.max(leaderEndOffset, lastFetchLeaderLogEndOffset);
        lastFetchTimeMs = fetchTimeMs;
        if (fetchBrokerEpoch != NO_BROKER_EPOCH) {
            brokerEpoch = fetchBrokerEpoch;
        }
    }

    /**
     * Resets the state when this node becomes leader of a new epoch: offsets unknown, and an ISR
     * member counts as caught up now so it is not shrunk at once; another replica as never caught
     * up, so it does not hold the high watermark back.
     */
    public synchronized void resetForNewLeader(long nowMs, boolean inIsr) {
        logEndOffset = UNKNOWN_OFFSET;
        logStartOffset = UNKNOWN_OFFSET;
        lastFetchLeaderLogEndOffset = UNKNOWN_OFFSET;
        lastFetchTimeMs = 0L;
        lastCaughtUpTimeMs = inIsr ? nowMs : 0L;
        brokerEpoch = NO_BROKER_EPOCH;
    }

    /**
     * Whether the replica is in sync with a leader whose log ends at {@code leaderEndOffset}: it has
     * everything, or it was caught up within {@code replicaLagTimeMaxMs} (Kafka's rule: at exactly
     * the lag bound it is still in sync).
     */
    public synchronized boolean isCaughtUp(long leaderEndOffset, long nowMs, long replicaLagTimeMaxMs) {
        return leaderEndOffset == logEndOffset || nowMs - lastCaughtUpTimeMs <= replicaLagTimeMaxMs;
    }

    @Override
    public synchronized String toString() {
        return "RemoteReplica(brokerId=" + brokerId + ", logEndOffset=" + logEndOffset + ", logStartOffset=" + logStartOffset
            + ", lastCaughtUpTimeMs=" + lastCaughtUpTimeMs + ", lastFetchTimeMs=" + lastFetchTimeMs + ", lastFetchLeaderLogEndOffset="
            + lastFetchLeaderLogEndOffset + ", brokerEpoch=" + brokerEpoch + ")";
    }
}
