package io.strata.raft;

import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** When a candidate's refusals leave it no room for a voter that never answers. */
class VoteTallyTest {
    @Test
    void withThreeVotersOneRefusalLeavesNoRoomForASilentVoter() {
        VoteTally tally = new VoteTally(Set.of(1, 2, 3), 1);
        assertThat(tally.isLostIfOneMoreFails()).isFalse();
        tally.record(2, false);
        assertThat(tally.isLostIfOneMoreFails()).isTrue();
        assertThat(tally.isLost()).isFalse();
        assertThat(tally.isWon()).isFalse();
    }

    @Test
    void withFiveVotersOneRefusalStillLeavesTheElectionOpen() {
        VoteTally tally = new VoteTally(Set.of(1, 2, 3, 4, 5), 1);
        tally.record(2, false);
        assertThat(tally.isLostIfOneMoreFails()).isFalse();
        tally.record(3, true);
        assertThat(tally.isLostIfOneMoreFails()).isFalse();
        tally.record(4, false);
        assertThat(tally.isLostIfOneMoreFails()).isTrue();
        assertThat(tally.isLost()).isFalse();
        tally.record(5, true);
        assertThat(tally.isWon()).isTrue();
    }
}
