package io.strata.raft;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * The one holder of a replica's role, and the only code that changes it. Every transition
 * checks that it is legal and throws {@link IllegalStateException} naming the epochs and ids
 * involved if not; every transition that changes what {@link ElectionState} records is
 * persisted before it takes effect.
 *
 * <pre>
 *  from \ to    Unattached             Prospective             Candidate   Leader     Follower                   Resigned
 *  Unattached   higher epoch;          election timeout        -           -          leader at &gt;= epoch        -
 *               vote (same epoch,      (voters)
 *               none cast yet)
 *  Prospective  higher epoch;          election timeout        pre-vote    -          leader at &gt;= epoch;       -
 *               pre-vote lost,         (retry)                 won                    pre-vote lost with a
 *               no leader known                                                       known leader
 *  Candidate    higher epoch           election timeout        -           vote won   leader at &gt;= epoch        -
 *  Leader       higher epoch           -                       -           -          leader at &gt; epoch         resign
 *  Follower     higher epoch           fetch timeout (voters)  -           -          leader at &gt; epoch         -
 *  Resigned     higher epoch;          election timeout        -           -          leader at &gt; epoch         -
 *               election timeout when
 *               no longer a voter
 *               (same epoch)
 * </pre>
 *
 * <p>Voters (KIP-853): "voter" always means the latest voter set this replica's log holds
 * ({@link VoterSetHistory}); it changes under the roles. A dynamic quorum's replica votes for,
 * and follows, a candidate or leader outside its own voter set (its log may lag theirs); an
 * observer that becomes a voter campaigns when its election timer expires; a leader that removed
 * itself resigns once the removal commits and, no longer a voter, becomes Unattached in the same
 * epoch (it never leads that epoch again) to learn the next leader as an observer.
 *
 * A vote is granted only from Unattached (or a Prospective that has not voted) at the
 * candidate's epoch, after moving to that epoch if it is higher. Observers (non-voters) only
 * ever move between Unattached and Follower.
 *
 * <p>The high watermark this replica knows is kept here, across roles, and never goes back
 * while the process lives.
 *
 * <p>Not thread-safe: driven by the quorum's thread.
 */
public final class QuorumState {
    private static final Logger LOG = LoggerFactory.getLogger(QuorumState.class);

    private final int localId;
    private final VoterSetHistory voters;
    private final RaftConfig config;
    private final QuorumStateStore store;
    private final Random random;
    private EpochState state;
    private long highWatermark;

    QuorumState(int localId, Set<Integer> voters, RaftConfig config, QuorumStateStore store, Random random) {
        this(localId, VoterSetHistory.staticVoters(VoterSet.ofIds(voters)), config, store, random);
    }

    /** The voters are {@code voters.latest()} at each moment: a voter change in the log takes effect at once. */
    QuorumState(int localId, VoterSetHistory voters, RaftConfig config, QuorumStateStore store, Random random) {
        this.localId = localId;
        this.voters = voters;
        this.config = config;
        this.store = store;
        this.random = random;
    }

    /**
     * Resumes the role the quorum-state file and the log imply: the latest epoch of either;
     * the persisted leader of that epoch is followed; a replica that was the leader resumes as
     * Resigned (it must not lead that epoch again); otherwise Unattached, keeping the vote.
     */
    void initialize(OffsetAndEpoch logEnd, long nowMs) {
        ElectionState stored;
        try {
            stored = store.read();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the quorum state of node " + localId, e);
        }
        if (stored == null) {
            stored = ElectionState.initial();
        }
        if (logEnd.epoch() > stored.epoch()) {
            LOG.warn("Node {}: the log's last epoch {} is above the quorum state's epoch {}; resuming unattached in epoch {}",
                localId, logEnd.epoch(), stored.epoch(), logEnd.epoch());
            state = new UnattachedState(logEnd.epoch(), ElectionState.NONE, initialElectionTimer(nowMs));
        } else if (stored.leaderId() == localId && isVoter()) {
            state = new ResignedState(stored.epoch(), localId, voters(), List.of(), initialElectionTimer(nowMs), nowMs);
        } else if (stored.hasLeader() && stored.leaderId() != localId) {
            state = new FollowerState(stored.epoch(), stored.leaderId(), stored.votedId(), fetchTimer(nowMs), highWatermark);
        } else {
            state = new UnattachedState(stored.epoch(), stored.votedId(), initialElectionTimer(nowMs));
        }
        persist(state);
        LOG.info("Node {} starts as {}", localId, state);
    }

    /**
     * The only voter has nobody to wait for: it stands for election at the first poll (as Kafka's
     * does), so a single node leads at once after a start instead of after an election timeout.
     */
    private Timer initialElectionTimer(long nowMs) {
        return voters.latest().isOnlyVoter(localId) ? new Timer(nowMs) : electionTimer(nowMs);
    }

    public int localId() {
        return localId;
    }

    /** The ids of the voters in effect (the latest voter set of the log, or the static one). */
    public Set<Integer> voters() {
        return voters.latest().ids();
    }

    public VoterSet voterSet() {
        return voters.latest();
    }

    public boolean isVoter() {
        return voters.latest().isVoter(localId);
    }

    public boolean isVoter(int nodeId) {
        return voters.latest().isVoter(nodeId);
    }

    /** Whether the voters live in the log (kraft.version 1) rather than in the configuration. */
    public boolean isDynamic() {
        return !voters.isStatic();
    }

    /**
     * Whether this replica may follow {@code leaderId}: a static quorum follows only its voters; a
     * dynamic one follows whoever leads, as its own voter set may lag the leader's log.
     */
    boolean canFollow(int leaderId) {
        return leaderId >= 0 && leaderId != localId && (isDynamic() || isVoter(leaderId));
    }

    public EpochState state() {
        return state;
    }

    public int epoch() {
        return state.epoch();
    }

    public int leaderId() {
        return state.leaderId();
    }

    public long highWatermark() {
        return highWatermark;
    }

    /** Takes a newer high watermark; an older one is a bug (the caller's state moved it back). */
    void updateHighWatermark(long offset) {
        if (offset < highWatermark) {
            throw new IllegalStateException("node " + localId + ": high watermark would go back from " + highWatermark + " to " + offset
                + " in " + state);
        }
        highWatermark = offset;
    }

    public boolean isLeader() {
        return state instanceof LeaderState;
    }

    LeaderState leaderStateOrThrow() {
        if (state instanceof LeaderState leader) {
            return leader;
        }
        throw new IllegalStateException("node " + localId + " is not the leader: " + state);
    }

    // ------------------------------------------------------------------ transitions

    /** A higher epoch, leader unknown. */
    void transitionToUnattached(int epoch, long nowMs) {
        if (epoch <= state.epoch()) {
            throw new IllegalStateException("node " + localId + ": cannot become Unattached in epoch " + epoch + " from " + state);
        }
        // Observers get a timer too: one that becomes a voter (an added voter) campaigns when it expires.
        Timer timer = state instanceof UnattachedState unattached ? unattached.electionTimer : electionTimer(nowMs);
        transitionTo(new UnattachedState(epoch, ElectionState.NONE, timer));
    }

    /**
     * A resigned leader that is no longer a voter (it removed itself) waits, as an observer, to
     * learn the next leader; it keeps its epoch and its vote, so it never leads this epoch again.
     */
    void transitionToObserverAfterResigning(long nowMs) {
        if (!(state instanceof ResignedState) || isVoter()) {
            throw new IllegalStateException("node " + localId + ": only a resigned leader that left the voters " + voters.latest()
                + " becomes an observer: " + state);
        }
        transitionTo(new UnattachedState(state.epoch(), localId, electionTimer(nowMs)));
    }

    /** Grants the vote of the current epoch to {@code candidateId}. */
    void transitionToVoted(int epoch, int candidateId, long nowMs) {
        // A dynamic quorum's replica votes by the candidate's voter set, which may be ahead of its own.
        if (candidateId == localId || (!isDynamic() && (!isVoter() || !isVoter(candidateId)))) {
            throw new IllegalStateException("node " + localId + ": cannot vote for " + candidateId + " with voters " + voters.latest());
        }
        if (epoch != state.epoch()) {
            throw new IllegalStateException("node " + localId + ": cannot vote for " + candidateId + " in epoch " + epoch + " from " + state);
        }
        int votedId;
        if (state instanceof UnattachedState unattached) {
            votedId = unattached.votedId();
        } else if (state instanceof ProspectiveState prospective) {
            votedId = prospective.votedId();
        } else {
            throw new IllegalStateException("node " + localId + ": cannot vote for " + candidateId + " in epoch " + epoch + " from " + state);
        }
        if (votedId != ElectionState.NONE) {
            throw new IllegalStateException("node " + localId + ": already voted for " + votedId + " in epoch " + epoch
                + ", cannot vote for " + candidateId);
        }
        // A vote restarts the election timer: the candidate has at least our chance of winning.
        transitionTo(new UnattachedState(epoch, candidateId, electionTimer(nowMs)));
    }

    /** Starts (or restarts) a pre-vote in the current epoch. */
    void transitionToProspective(long nowMs) {
        if (!isVoter()) {
            throw new IllegalStateException("node " + localId + " is an observer and cannot start an election: voters=" + voters.latest());
        }
        int leaderId = ElectionState.NONE;
        int votedId;
        if (state instanceof UnattachedState unattached) {
            votedId = unattached.votedId();
        } else if (state instanceof ProspectiveState prospective) {
            leaderId = prospective.leaderId();
            votedId = prospective.votedId();
        } else if (state instanceof FollowerState follower) {
            leaderId = follower.leaderId();
            votedId = follower.election().votedId();
        } else if (state instanceof CandidateState || state instanceof ResignedState) {
            votedId = localId; // a resigned leader leads its epoch no more: no leader to go back to
        } else {
            throw new IllegalStateException("node " + localId + ": a leader resigns before it campaigns: " + state);
        }
        transitionTo(new ProspectiveState(state.epoch(), leaderId, votedId, voters(), localId, electionTimer(nowMs)));
    }

    /** A pre-vote was lost: back to following the known leader, or to waiting a backoff. */
    void transitionAfterLostPreVote(long nowMs) {
        if (!(state instanceof ProspectiveState prospective)) {
            throw new IllegalStateException("node " + localId + ": only a prospective voter loses a pre-vote: " + state);
        }
        if (prospective.leaderId() != ElectionState.NONE) {
            transitionTo(new FollowerState(prospective.epoch(), prospective.leaderId(), prospective.votedId(), fetchTimer(nowMs), highWatermark));
        } else {
            transitionTo(new UnattachedState(prospective.epoch(), prospective.votedId(), new Timer(nowMs + backoffMs())));
        }
    }

    /** A won pre-vote: raise the epoch and vote for ourselves. */
    void transitionToCandidate(long nowMs) {
        if (!(state instanceof ProspectiveState prospective) || !prospective.tally.isWon()) {
            throw new IllegalStateException("node " + localId + ": a candidate needs a won pre-vote, not " + state);
        }
        transitionTo(new CandidateState(state.epoch() + 1, localId, voters(), electionTimer(nowMs)));
    }

    /** A won election; the caller appends the epoch's LEADER_CHANGE record at {@code epochStartOffset}. */
    LeaderState transitionToLeader(long epochStartOffset, long nowMs) {
        if (!(state instanceof CandidateState candidate) || !candidate.tally.isWon()) {
            throw new IllegalStateException("node " + localId + ": only a candidate with a majority becomes leader, not " + state);
        }
        LeaderState leader = new LeaderState(state.epoch(), localId, voters(), epochStartOffset, highWatermark, nowMs);
        transitionTo(leader);
        return leader;
    }

    /** Follows {@code leaderId} in {@code epoch}. */
    void transitionToFollower(int epoch, int leaderId, long nowMs) {
        if (!canFollow(leaderId)) {
            throw new IllegalStateException("node " + localId + ": cannot follow " + leaderId + " in epoch " + epoch + " with voters " + voters.latest());
        }
        if (epoch < state.epoch()) {
            throw new IllegalStateException("node " + localId + ": cannot follow " + leaderId + " in epoch " + epoch + " from the later " + state);
        }
        boolean sameEpochAllowed = state instanceof UnattachedState || state instanceof ProspectiveState || state instanceof CandidateState;
        if (epoch == state.epoch() && !sameEpochAllowed) {
            throw new IllegalStateException("node " + localId + ": cannot follow " + leaderId + " in epoch " + epoch + " from " + state);
        }
        int votedId = epoch == state.epoch() ? state.election().votedId() : ElectionState.NONE;
        transitionTo(new FollowerState(epoch, leaderId, votedId, fetchTimer(nowMs), highWatermark));
    }

    /** The leader gives up its epoch. */
    void transitionToResigned(List<Integer> preferredSuccessors, long nowMs) {
        if (!(state instanceof LeaderState)) {
            throw new IllegalStateException("node " + localId + ": only a leader resigns, not " + state);
        }
        transitionTo(new ResignedState(state.epoch(), localId, voters(), preferredSuccessors, electionTimer(nowMs), nowMs));
    }

    private void transitionTo(EpochState next) {
        if (next.epoch() < state.epoch()) {
            throw new IllegalStateException("node " + localId + ": epoch would go back from " + state + " to " + next);
        }
        persist(next);
        EpochState previous = state;
        state = next;
        LOG.debug("Node {}: {} -> {}", localId, previous, next);
    }

    private void persist(EpochState next) {
        try {
            store.write(next.election());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the quorum state of node " + localId + ": " + next, e);
        }
    }

    // ------------------------------------------------------------------ timers

    /** A random election deadline in [timeout, 2 x timeout), so that voters rarely time out together. */
    Timer electionTimer(long nowMs) {
        return new Timer(nowMs + config.electionTimeoutMs() + random.nextInt(config.electionTimeoutMs()));
    }

    Timer fetchTimer(long nowMs) {
        return new Timer(nowMs + config.fetchTimeoutMs());
    }

    long backoffMs() {
        return 1 + random.nextInt(config.electionBackoffMaxMs());
    }
}
