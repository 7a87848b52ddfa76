package io.strata.raft;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The elected leader of an epoch. It tracks how far each voter's log reaches (the fetch
 * offset of its last Fetch, or for itself the flushed end of its log) and derives the high
 * watermark: the largest offset that a majority of voters hold.
 *
 * <p>The high watermark is published only once it passes {@link #epochStartOffset()}, i.e.
 * once the LEADER_CHANGE record this leader wrote at the start of its epoch is committed
 * (KAFKA-12619): until then the majority offset may still be below what an earlier leader
 * already exposed, and the high watermark must never go back. It starts at the value the
 * replica knew before it was elected.
 *
 * <p>Check-quorum: a leader that a majority of voters (itself included) has not fetched from
 * within {@link RaftConfig#checkQuorumTimeoutMs()} resigns, so a leader cut off from the
 * other voters stops accepting writes it cannot commit (KAFKA-15489). A single voter never
 * resigns for this reason (KAFKA-16144).
 *
 * <p>Voter changes (KIP-853): the voters counted are those of the latest voter set in the log,
 * committed or not ({@link #updateVoters}); a leader that is not in that set (it is removing
 * itself) does not count its own log towards the high watermark nor itself towards check-quorum
 * (KAFKA-16530, KAFKA-16531), and it keeps leading until the change commits.
 */
public final class LeaderState implements EpochState {
    private final int epoch;
    private final int localId;
    private final long epochStartOffset;
    private final Map<Integer, Long> voterEndOffsets = new HashMap<>();
    private final Map<Integer, Long> voterLastFetchMs = new HashMap<>();
    private final Set<Integer> beginEpochUnacked = new HashSet<>();
    /** What DescribeQuorum reports per replica, voters and observers alike. */
    private final Map<Integer, ReplicaProgress> progress = new HashMap<>();
    final Timer beginEpochRetryTimer;
    private long highWatermark;

    LeaderState(int epoch, int localId, Set<Integer> voters, long epochStartOffset, long highWatermark, long nowMs) {
        this.epoch = epoch;
        this.localId = localId;
        this.epochStartOffset = epochStartOffset;
        this.highWatermark = highWatermark;
        for (int voter : voters) {
            voterEndOffsets.put(voter, voter == localId ? epochStartOffset : -1L);
            voterLastFetchMs.put(voter, nowMs); // a grace period of one check-quorum timeout
            if (voter != localId) {
                beginEpochUnacked.add(voter);
            }
        }
        this.beginEpochRetryTimer = new Timer(nowMs);
    }

    @Override
    public int epoch() {
        return epoch;
    }

    @Override
    public ElectionState election() {
        return new ElectionState(epoch, localId, localId);
    }

    public long epochStartOffset() {
        return epochStartOffset;
    }

    public long highWatermark() {
        return highWatermark;
    }

    /** The end offsets of the voters' logs as last reported (-1: not yet). */
    public Map<Integer, Long> voterEndOffsets() {
        return Collections.unmodifiableMap(voterEndOffsets);
    }

    Map<Integer, Long> voterLastFetchMs() {
        return Collections.unmodifiableMap(voterLastFetchMs);
    }

    boolean isVoter(int nodeId) {
        return voterEndOffsets.containsKey(nodeId);
    }

    Set<Integer> beginEpochUnacked() {
        return beginEpochUnacked;
    }

    void acknowledgeBeginEpoch(int voterId) {
        beginEpochUnacked.remove(voterId);
    }

    /**
     * A replica's progress as DescribeQuorum reports it. It was caught up at the last time its
     * fetch offset reached the leader's log end, or reached the log end the leader had at the
     * replica's previous fetch (then it was caught up as of that fetch), as Kafka computes it.
     */
    public record ReplicaProgress(long logEndOffset, long lastFetchMs, long lastCaughtUpMs, long leaderEndOffsetAtFetch, java.util.UUID directoryId) {
    }

    /**
     * The voters are now {@code voters} (a voter record was appended, or truncated away): a new
     * voter starts from its observer progress if it fetched (else unknown), with a grace period of
     * one check-quorum timeout; a removed one no longer counts.
     */
    void updateVoters(Set<Integer> voters, long logEndOffset, long nowMs) {
        voterEndOffsets.keySet().retainAll(voters);
        voterLastFetchMs.keySet().retainAll(voters);
        beginEpochUnacked.retainAll(voters);
        for (int voter : voters) {
            if (!voterEndOffsets.containsKey(voter)) {
                ReplicaProgress known = progress.get(voter);
                voterEndOffsets.put(voter, voter == localId ? logEndOffset : known == null ? -1L : known.logEndOffset());
                voterLastFetchMs.put(voter, nowMs);
            }
        }
    }

    /** Every replica that fetched in this epoch, by id. */
    public Map<Integer, ReplicaProgress> progress() {
        return Collections.unmodifiableMap(progress);
    }

    /**
     * Records a replica's fetch at {@code fetchOffset} (everything below it is in its log, and
     * flushed: followers flush before fetching again); returns whether the high watermark moved.
     * Observers are tracked for DescribeQuorum but do not count towards the high watermark.
     */
    boolean updateReplica(int replicaId, long fetchOffset, long leaderEndOffset, long nowMs) {
        return updateReplica(replicaId, io.strata.protocol.Uuids.ZERO, true, fetchOffset, leaderEndOffset, nowMs);
    }

    /**
     * @param matchesVoter false if the replica's directory id is not the one its voter id has in the voter set: a
     *                     replica on another disk with that id (a wiped node) acknowledges nothing for the voter
     */
    boolean updateReplica(int replicaId, java.util.UUID directoryId, boolean matchesVoter, long fetchOffset, long leaderEndOffset, long nowMs) {
        ReplicaProgress previous = progress.get(replicaId);
        long caughtUpMs = previous == null ? -1 : previous.lastCaughtUpMs();
        if (fetchOffset >= leaderEndOffset) {
            caughtUpMs = nowMs;
        } else if (previous != null && fetchOffset >= previous.leaderEndOffsetAtFetch()) {
            caughtUpMs = Math.max(caughtUpMs, previous.lastFetchMs());
        }
        if (previous != null && !previous.directoryId().equals(directoryId)) {
            caughtUpMs = fetchOffset >= leaderEndOffset ? nowMs : -1; // another replica (a wiped disk) with the same id
        }
        progress.put(replicaId, new ReplicaProgress(fetchOffset, nowMs, caughtUpMs, leaderEndOffset, directoryId));
        int voterId = replicaId;
        if (!matchesVoter || !voterEndOffsets.containsKey(voterId)) {
            return false;
        }
        voterLastFetchMs.put(voterId, nowMs);
        voterEndOffsets.put(voterId, fetchOffset);
        return maybeAdvanceHighWatermark();
    }

    /**
     * A voter fetching the leader's snapshot (FetchSnapshot) is in contact for check-quorum
     * although its log end says nothing yet.
     */
    void updateContact(int replicaId, long nowMs) {
        if (voterLastFetchMs.containsKey(replicaId)) {
            voterLastFetchMs.put(replicaId, nowMs);
        }
    }

    /** Records the leader's own flushed log end; returns whether the high watermark moved. */
    boolean updateLocal(long flushedEndOffset) {
        if (voterEndOffsets.containsKey(localId)) {
            voterEndOffsets.put(localId, flushedEndOffset);
        }
        return maybeAdvanceHighWatermark();
    }

    private boolean maybeAdvanceHighWatermark() {
        if (voterEndOffsets.isEmpty()) {
            return false;
        }
        List<Long> offsets = new ArrayList<>(voterEndOffsets.values());
        offsets.sort(Collections.reverseOrder());
        long majorityOffset = offsets.get(offsets.size() / 2);
        if (majorityOffset > epochStartOffset && majorityOffset > highWatermark) {
            highWatermark = majorityOffset;
            return true;
        }
        return false;
    }

    /** Whether a majority of voters (the leader included) fetched within the check-quorum timeout. */
    boolean hasMajorityContact(long nowMs, long checkQuorumTimeoutMs) {
        int recent = 0;
        for (Map.Entry<Integer, Long> entry : voterLastFetchMs.entrySet()) {
            if (entry.getKey() == localId || nowMs - entry.getValue() < checkQuorumTimeoutMs) {
                recent++;
            }
        }
        return recent >= voterLastFetchMs.size() / 2 + 1;
    }

    /** Whether the leader is among the voters it counts (not while it removes itself). */
    boolean isLocalVoter() {
        return voterEndOffsets.containsKey(localId);
    }

    /** The other voters, those with the longest logs first: the preferred successors when resigning. */
    List<Integer> successorsByEndOffset() {
        List<Integer> others = new ArrayList<>();
        for (int voter : voterEndOffsets.keySet()) {
            if (voter != localId) {
                others.add(voter);
            }
        }
        others.sort((a, b) -> Long.compare(voterEndOffsets.get(b), voterEndOffsets.get(a)));
        return others;
    }

    @Override
    public String name() {
        return "Leader";
    }

    @Override
    public String toString() {
        return "Leader(epoch=" + epoch + ", epochStartOffset=" + epochStartOffset + ", highWatermark=" + highWatermark
            + ", voterEndOffsets=" + voterEndOffsets + ")";
    }
}
