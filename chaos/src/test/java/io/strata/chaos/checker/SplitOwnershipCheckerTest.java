package io.strata.chaos.checker;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SplitOwnershipCheckerTest {
    private final SplitOwnershipChecker checker = new SplitOwnershipChecker();

    @Test
    void disjointAssignmentsAndMovesAcrossGenerationsAreClean() {
        HistoryBuilder h = new HistoryBuilder();
        h.assign(1, "g", 1, "p-0", "p-1");
        h.assign(2, "g", 1, "p-2");
        h.assign(2, "g", 2, "p-0");
        h.assign(3, "other", 1, "p-0");
        assertThat(checker.check(h.build())).isEmpty();
    }

    @Test
    void twoConsumersOwningAPartitionInOneGenerationIsFound() {
        HistoryBuilder h = new HistoryBuilder();
        int first = h.assign(1, "g", 4, "p-0", "p-1");
        int second = h.assign(2, "g", 4, "p-1");
        assertThat(checker.check(h.build())).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Anomaly.Kind.SPLIT_OWNERSHIP);
            assertThat(a.partition()).isEqualTo("p-1");
            assertThat(a.ops()).containsExactly(first, second);
        });
    }
}
