package io.strata.chaos.checker;

import static io.strata.chaos.checker.HistoryBuilder.m;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class DuplicateAndInconsistentOffsetCheckerTest {
    private final DuplicateChecker duplicates = new DuplicateChecker();
    private final InconsistentOffsetChecker inconsistent = new InconsistentOffsetChecker();

    private static HistoryBuilder clean() {
        HistoryBuilder h = new HistoryBuilder();
        h.ack(0, "p-0", 10, 0);
        h.ack(0, "p-0", 11, 1);
        h.poll(1, true, m("p-0", 0, 10), m("p-0", 1, 11));
        return h;
    }

    @Test
    void consistentObservationsAreClean() {
        HistoryBuilder h = clean();
        h.drain(false, Map.of("p-0", 2L), m("p-0", 0, 10), m("p-0", 1, 11));
        assertThat(duplicates.check(h.build())).isEmpty();
        assertThat(inconsistent.check(h.build())).isEmpty();
    }

    @Test
    void valueAtTwoOffsetsIsADuplicate() {
        HistoryBuilder h = clean();
        int drain = h.drain(false, Map.of("p-0", 3L), m("p-0", 0, 10), m("p-0", 1, 11), m("p-0", 2, 11));
        assertThat(duplicates.check(h.build())).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Anomaly.Kind.DUPLICATE);
            assertThat(a.offsets()).containsExactly(1L, 2L);
            assertThat(a.values()).containsExactly(11L);
            assertThat(a.ops()).containsExactly(3, drain);
        });
        assertThat(inconsistent.check(h.build())).isEmpty();
    }

    @Test
    void sameValueInAnotherPartitionIsNoDuplicate() {
        HistoryBuilder h = clean();
        h.poll(2, false, m("p-1", 5, 10));
        assertThat(duplicates.check(h.build())).isEmpty();
    }

    @Test
    void offsetWithTwoValuesIsInconsistent() {
        HistoryBuilder h = clean();
        int poll = h.poll(2, false, m("p-0", 1, 99));
        assertThat(inconsistent.check(h.build())).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Anomaly.Kind.INCONSISTENT_OFFSET);
            assertThat(a.offsets()).containsExactly(1L);
            assertThat(a.values()).containsExactly(11L, 99L);
            assertThat(a.ops()).containsExactly(3, poll);
        });
        assertThat(duplicates.check(h.build())).isEmpty();
    }
}
