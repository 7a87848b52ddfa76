package io.strata.chaos.checker;

import static io.strata.chaos.checker.HistoryBuilder.m;
import static org.assertj.core.api.Assertions.assertThat;

import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AbortedAndIntermediateReadCheckerTest {
    private final AbortedReadChecker aborted = new AbortedReadChecker();
    private final IntermediateReadChecker intermediate = new IntermediateReadChecker();

    /** t-0: 0,1 committed txn A (20, 21); 2 marker; 3 aborted txn B (30); 4 marker; 5,6 info txn C (40, 41), 7 marker. */
    private static HistoryBuilder base() {
        HistoryBuilder h = new HistoryBuilder();
        h.txn(5, Op.Type.OK, MicroOp.send("t-0", 0, 20), MicroOp.send("t-0", 1, 21));
        h.txn(6, Op.Type.FAIL, MicroOp.send("t-0", -1, 30));
        h.txn(7, Op.Type.INFO, MicroOp.send("t-0", -1, 40), MicroOp.send("t-0", -1, 41));
        h.drain(false, Map.of("t-0", 8L), m("t-0", 0, 20), m("t-0", 1, 21), m("t-0", 3, 30), m("t-0", 5, 40), m("t-0", 6, 41));
        return h;
    }

    @Test
    void readCommittedSeesWholeCommittedTxnsAndNoAbortedOne() {
        HistoryBuilder h = base();
        h.poll(1, true, m("t-0", 0, 20));
        h.poll(1, true, m("t-0", 1, 21), m("t-0", 5, 40), m("t-0", 6, 41));
        h.poll(2, false, m("t-0", 3, 30));
        h.drain(true, Map.of("t-0", 8L), m("t-0", 0, 20), m("t-0", 1, 21), m("t-0", 5, 40), m("t-0", 6, 41));
        assertThat(aborted.check(h.build())).isEmpty();
        assertThat(intermediate.check(h.build())).isEmpty();
    }

    @Test
    void readCommittedPollOfAbortedValueIsG1a() {
        HistoryBuilder h = base();
        int poll = h.poll(1, true, m("t-0", 3, 30));
        assertThat(aborted.check(h.build())).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Anomaly.Kind.ABORTED_READ_G1A);
            assertThat(a.values()).containsExactly(30L);
            assertThat(a.ops()).containsExactly(3, poll);
        });
        assertThat(intermediate.check(h.build())).isEmpty();
    }

    @Test
    void readCommittedRunSkippingOneValueOfACommittedTxnIsG1b() {
        HistoryBuilder h = base();
        h.poll(1, true, m("t-0", 0, 20));
        int last = h.poll(1, true, m("t-0", 5, 40), m("t-0", 6, 41));
        assertThat(intermediate.check(h.build())).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Anomaly.Kind.INTERMEDIATE_READ_G1B);
            assertThat(a.values()).containsExactly(21L);
            assertThat(a.offsets()).containsExactly(1L);
            assertThat(a.ops()).containsExactly(1, 9, last);
        });
    }

    @Test
    void partiallyVisibleInfoTxnIsG1bSinceSeeingAnyValueMeansItCommitted() {
        HistoryBuilder h = base();
        h.drain(true, Map.of("t-0", 8L), m("t-0", 0, 20), m("t-0", 1, 21), m("t-0", 6, 41), m("t-0", 7, 50));
        assertThat(intermediate.check(h.build())).extracting(Anomaly::kind, Anomaly::values)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(Anomaly.Kind.INTERMEDIATE_READ_G1B, java.util.List.of(40L)));
    }

    @Test
    void runStartingOrEndingInsideATxnIsNoG1b() {
        HistoryBuilder h = base();
        h.poll(1, true, m("t-0", 1, 21), m("t-0", 5, 40));
        h.assign(1, "g", 3, "t-0");
        assertThat(intermediate.check(h.build())).isEmpty();
    }
}
