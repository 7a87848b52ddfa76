package io.strata.chaos.checker;

import static io.strata.chaos.checker.HistoryBuilder.m;
import static org.assertj.core.api.Assertions.assertThat;

import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UnexpectedGapCheckerTest {
    private final UnexpectedGapChecker checker = new UnexpectedGapChecker();

    @Test
    void contiguousDrainIsClean() {
        HistoryBuilder h = new HistoryBuilder();
        h.drain(true, Map.of("p-0", 3L, "p-1", 0L), m("p-0", 0, 10), m("p-0", 1, 11), m("p-0", 2, 12));
        assertThat(checker.check(h.build())).isEmpty();
    }

    @Test
    void gapInATransactionalPartitionIsExplainedByMarkers() {
        HistoryBuilder h = new HistoryBuilder();
        h.txn(5, Op.Type.INFO, MicroOp.send("t-0", -1, 20));
        h.drain(true, Map.of("t-0", 4L), m("t-0", 0, 10), m("t-0", 2, 12));
        assertThat(checker.check(h.build())).isEmpty();
    }

    @Test
    void skippedOffsetsInTheMiddleAndAtTheEndAreFound() {
        HistoryBuilder h = new HistoryBuilder();
        int drain = h.drain(false, Map.of("p-0", 7L), m("p-0", 0, 10), m("p-0", 3, 13), m("p-0", 4, 14));
        assertThat(checker.check(h.build())).extracting(Anomaly::kind, Anomaly::offsets, Anomaly::ops).containsExactly(
                org.assertj.core.groups.Tuple.tuple(Anomaly.Kind.UNEXPECTED_GAP, java.util.List.of(1L, 2L), java.util.List.of(drain)),
                org.assertj.core.groups.Tuple.tuple(Anomaly.Kind.UNEXPECTED_GAP, java.util.List.of(5L, 6L), java.util.List.of(drain)));
    }
}
