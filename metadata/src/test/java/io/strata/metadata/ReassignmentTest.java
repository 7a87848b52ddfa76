package io.strata.metadata;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The pure KIP-455 arithmetic: start, completion (KAFKA-15665 / KAFKA-19975) and revert. */
class ReassignmentTest {
    @Test
    void aTargetOverTheOriginalListsTheTargetFirstThenTheReplicasLeaving() {
        Reassignment reassignment = Reassignment.of(List.of(1, 2, 3), List.of(3, 4));
        assertThat(reassignment.replicas()).containsExactly(3, 4, 1, 2);
        assertThat(reassignment.adding()).containsExactly(4);
        assertThat(reassignment.removing()).containsExactly(1, 2);
        assertThat(reassignment.original()).containsExactly(3, 1, 2);
        assertThat(reassignment.target()).containsExactly(3, 4);
        assertThat(reassignment.inProgress()).isTrue();
        assertThat(Reassignment.of(List.of(1, 2), List.of(2, 1)).inProgress()).as("a reorder adds and removes nothing").isFalse();
    }

    @Test
    void completionWaitsForEveryAddingReplicaInTheIsrAndThenDropsTheRemovedOnes() {
        Reassignment reassignment = Reassignment.of(List.of(1, 2, 3), List.of(2, 3, 4));
        assertThat(reassignment.maybeComplete(List.of(1, 2, 3))).isEmpty();
        Reassignment.Completed completed = reassignment.maybeComplete(List.of(1, 2, 3, 4)).orElseThrow();
        assertThat(completed.replicas()).containsExactly(2, 3, 4);
        assertThat(completed.isr()).containsExactly(2, 3, 4);
    }

    @Test
    void aTargetReplicaThatIsNeitherAddedNorRemovedDoesNotBlockCompletionUnlessTheReplicaSetShrinks() {
        // KAFKA-19975: [0,1,2] -> [1,2,3] with 2 out of the ISR completes once 3 is in.
        Reassignment move = Reassignment.of(List.of(0, 1, 2), List.of(1, 2, 3));
        Reassignment.Completed completed = move.maybeComplete(List.of(0, 1, 3)).orElseThrow();
        assertThat(completed.replicas()).containsExactly(1, 2, 3);
        assertThat(completed.isr()).containsExactly(1, 3);
        // A shrink [1,2,3] -> [1,2] needs both 1 and 2 in the ISR.
        Reassignment shrink = Reassignment.of(List.of(1, 2, 3), List.of(1, 2));
        assertThat(shrink.maybeComplete(List.of(1, 3))).isEmpty();
        assertThat(shrink.maybeComplete(List.of(1, 2, 3)).orElseThrow().isr()).containsExactly(1, 2);
    }

    @Test
    void completionNeverLeavesAnEmptyIsr() {
        Reassignment reassignment = Reassignment.of(List.of(1), List.of(2));
        assertThat(reassignment.maybeComplete(List.of(1))).isEmpty();
        assertThat(reassignment.maybeComplete(List.of(1, 2)).orElseThrow().isr()).containsExactly(2);
        assertThat(Reassignment.of(List.of(1, 2), List.of(1, 2)).maybeComplete(List.of(1, 2))).as("nothing in progress").isEmpty();
    }

    @Test
    void revertRestoresTheOriginalAndIsUncleanWhenOnlyAddedReplicasAreInSync() {
        Reassignment reassignment = Reassignment.of(List.of(1, 2), List.of(3, 4));
        Reassignment.Revert clean = reassignment.revert(List.of(1, 3));
        assertThat(clean.replicas()).containsExactly(1, 2);
        assertThat(clean.isr()).containsExactly(1);
        assertThat(clean.unclean()).isFalse();
        Reassignment.Revert unclean = reassignment.revert(List.of(3, 4));
        assertThat(unclean.unclean()).isTrue();
        assertThat(unclean.replicas()).containsExactly(1, 2);
        assertThat(unclean.isr()).as("Kafka puts the first original replica in the ISR").containsExactly(1);
    }

    @Test
    void anInconsistentReassignmentIsRefused() {
        assertThatThrownBy(() -> new Reassignment(List.of(1, 2), List.of(3), List.of())).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("adding=[3]");
        assertThatThrownBy(() -> new Reassignment(List.of(1, 2), List.of(1), List.of(1))).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("replica 1 is both added and removed");
        assertThatThrownBy(() -> new Reassignment(List.of(), List.of(), List.of())).isInstanceOf(IllegalArgumentException.class);
    }
}
