package io.strata.raft;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The transition table of {@link QuorumState}: legal moves persist, illegal ones throw naming the values involved. */
class QuorumStateTest {
    private final RaftSimulation.MemoryQuorumStateStore store = new RaftSimulation.MemoryQuorumStateStore();

    private QuorumState quorum(int localId, Set<Integer> voters) {
        QuorumState quorum = new QuorumState(localId, voters, RaftConfig.DEFAULTS, store, new Random(1));
        quorum.initialize(OffsetAndEpoch.ZERO, 0);
        return quorum;
    }

    @Test
    void startsUnattachedInEpochZero() {
        QuorumState quorum = quorum(1, Set.of(1, 2, 3));
        assertThat(quorum.state()).isInstanceOf(UnattachedState.class);
        assertThat(quorum.epoch()).isZero();
        assertThat(store.read()).isEqualTo(ElectionState.initial());
    }

    @Test
    void electionPathPersistsEachStep() {
        QuorumState quorum = quorum(1, Set.of(1, 2, 3));
        quorum.transitionToProspective(0);
        assertThat(quorum.epoch()).isZero(); // a pre-vote does not raise the epoch
        ProspectiveState prospective = (ProspectiveState) quorum.state();
        prospective.tally.record(2, true);
        quorum.transitionToCandidate(0);
        assertThat(store.read()).isEqualTo(new ElectionState(1, -1, 1));
        ((CandidateState) quorum.state()).tally.record(3, true);
        quorum.transitionToLeader(0, 0);
        assertThat(store.read()).isEqualTo(new ElectionState(1, 1, 1));
        quorum.transitionToResigned(List.of(2, 3), 0);
        assertThat(quorum.state()).isInstanceOf(ResignedState.class);
    }

    @Test
    void illegalTransitionsThrowWithTheValuesInvolved() {
        QuorumState quorum = quorum(1, Set.of(1, 2, 3));
        assertThatThrownBy(() -> quorum.transitionToCandidate(0)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("node 1").hasMessageContaining("Unattached(epoch=0");
        assertThatThrownBy(() -> quorum.transitionToLeader(0, 0)).isInstanceOf(IllegalStateException.class);
        quorum.transitionToFollower(3, 2, 0);
        assertThatThrownBy(() -> quorum.transitionToFollower(3, 3, 0)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("epoch 3").hasMessageContaining("Follower(epoch=3, leaderId=2");
        assertThatThrownBy(() -> quorum.transitionToFollower(2, 3, 0)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("epoch 2");
        assertThatThrownBy(() -> quorum.transitionToUnattached(3, 0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> quorum.transitionToFollower(4, 1, 0)).hasMessageContaining("cannot follow 1");
        assertThatThrownBy(() -> quorum.transitionToFollower(4, 9, 0)).hasMessageContaining("cannot follow 9");
    }

    @Test
    void aVoteIsCastOncePerEpoch() {
        QuorumState quorum = quorum(1, Set.of(1, 2, 3));
        quorum.transitionToUnattached(5, 0);
        quorum.transitionToVoted(5, 2, 0);
        assertThat(store.read()).isEqualTo(new ElectionState(5, -1, 2));
        assertThatThrownBy(() -> quorum.transitionToVoted(5, 3, 0)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("already voted for 2 in epoch 5");
        assertThatThrownBy(() -> quorum.transitionToVoted(6, 3, 0)).hasMessageContaining("epoch 6");
        // The vote survives a restart.
        QuorumState restarted = quorum(1, Set.of(1, 2, 3));
        assertThat(((UnattachedState) restarted.state()).votedId()).isEqualTo(2);
        assertThatThrownBy(() -> restarted.transitionToVoted(5, 3, 0)).hasMessageContaining("already voted for 2");
    }

    @Test
    void aLeaderRestartsResignedAndNeverLeadsItsEpochAgain() {
        store.write(new ElectionState(4, 1, 1));
        QuorumState quorum = quorum(1, Set.of(1, 2, 3));
        assertThat(quorum.state()).isInstanceOf(ResignedState.class);
        assertThat(quorum.epoch()).isEqualTo(4);
        quorum.transitionToProspective(0);
        assertThat(quorum.leaderId()).isEqualTo(-1);
    }

    @Test
    void aLogAheadOfTheStateFileWins() {
        store.write(new ElectionState(2, 3, -1));
        QuorumState quorum = new QuorumState(1, Set.of(1, 2, 3), RaftConfig.DEFAULTS, store, new Random(1));
        quorum.initialize(new OffsetAndEpoch(10, 5), 0);
        assertThat(quorum.state()).isInstanceOf(UnattachedState.class);
        assertThat(quorum.epoch()).isEqualTo(5);
    }

    @Test
    void observersNeverCampaign() {
        QuorumState quorum = quorum(9, Set.of(1, 2, 3));
        assertThatThrownBy(() -> quorum.transitionToProspective(0)).hasMessageContaining("observer");
        assertThatThrownBy(() -> quorum.transitionToVoted(0, 2, 0)).hasMessageContaining("cannot vote");
        quorum.transitionToFollower(1, 2, 0);
        assertThat(quorum.leaderId()).isEqualTo(2);
    }

    @Test
    void theHighWatermarkNeverGoesBack() {
        QuorumState quorum = quorum(1, Set.of(1, 2, 3));
        quorum.updateHighWatermark(10);
        assertThatThrownBy(() -> quorum.updateHighWatermark(9)).hasMessageContaining("from 10 to 9");
    }

    /** KIP-853: voters from the log change under the roles; a leader that left the voters becomes an observer in its epoch. */
    @Test
    void aResignedLeaderThatLeftTheVotersWaitsAsAnObserverInItsEpoch() {
        VoterSetHistory history = VoterSetHistory.dynamic();
        history.appended(0, VoterSet.ofIds(Set.of(1, 2, 3)));
        QuorumState quorum = new QuorumState(1, history, RaftConfig.DEFAULTS, store, new Random(1));
        quorum.initialize(new OffsetAndEpoch(1, 0), 0);
        assertThatThrownBy(() -> quorum.transitionToObserverAfterResigning(0)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("node 1").hasMessageContaining("Unattached");
        quorum.transitionToProspective(0);
        ((ProspectiveState) quorum.state()).tally.record(2, true);
        quorum.transitionToCandidate(0);
        ((CandidateState) quorum.state()).tally.record(3, true);
        quorum.transitionToLeader(1, 0);
        history.appended(1, VoterSet.ofIds(Set.of(2, 3))); // it removed itself
        assertThat(quorum.isVoter()).isFalse();
        quorum.transitionToResigned(List.of(2, 3), 0);
        quorum.transitionToObserverAfterResigning(0);
        assertThat(quorum.state()).isInstanceOf(UnattachedState.class);
        assertThat(quorum.epoch()).isEqualTo(1);
        assertThat(store.read()).isEqualTo(new ElectionState(1, -1, 1));
        assertThatThrownBy(() -> quorum.transitionToProspective(0)).isInstanceOf(IllegalStateException.class).hasMessageContaining("observer");
        // A dynamic quorum follows a leader outside its own voter set (its log may lag the leader's).
        quorum.transitionToFollower(2, 4, 0);
        assertThat(quorum.leaderId()).isEqualTo(4);
    }
}
