package io.strata.chaos.checker;

import static io.strata.chaos.checker.HistoryBuilder.m;
import static org.assertj.core.api.Assertions.assertThat;

import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import org.junit.jupiter.api.Test;

class NonMonotonicPollCheckerTest {
    private final NonMonotonicPollChecker checker = new NonMonotonicPollChecker();

    @Test
    void increasingOffsetsAcrossPollsAreClean() {
        HistoryBuilder h = new HistoryBuilder();
        h.assign(1, "g", 1, "p-0", "p-1");
        h.poll(1, true, m("p-0", 0, 10), m("p-1", 0, 20), m("p-0", 2, 12));
        h.poll(1, true, m("p-0", 3, 13), m("p-1", 1, 21));
        h.poll(2, true, m("p-0", 0, 10));
        assertThat(checker.check(h.build())).isEmpty();
    }

    @Test
    void rebalanceFailedPollAndAbortedTxnEndTheRun() {
        HistoryBuilder h = new HistoryBuilder();
        h.poll(1, true, m("p-0", 5, 15));
        h.assign(1, "g", 2, "p-0");
        h.poll(1, true, m("p-0", 3, 13));
        h.failedPoll(1, Op.Type.INFO);
        h.poll(1, true, m("p-0", 3, 13));
        h.txn(7, Op.Type.OK, MicroOp.poll("p-0", 4, 14), MicroOp.send("t-0", 0, 40));
        h.txn(7, Op.Type.FAIL, MicroOp.poll("p-0", 5, 15), MicroOp.send("t-0", 1, 41));
        h.txn(7, Op.Type.OK, MicroOp.poll("p-0", 5, 15), MicroOp.send("t-0", 3, 42));
        assertThat(checker.check(h.build())).isEmpty();
    }

    @Test
    void offsetGoingBackwardsWithinARunIsFound() {
        HistoryBuilder h = new HistoryBuilder();
        h.assign(1, "g", 1, "p-0");
        int first = h.poll(1, true, m("p-0", 4, 14));
        int second = h.poll(1, true, m("p-0", 3, 13));
        assertThat(checker.check(h.build())).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Anomaly.Kind.NON_MONOTONIC_POLL);
            assertThat(a.offsets()).containsExactly(4L, 3L);
            assertThat(a.ops()).containsExactly(first, second);
        });
    }

    @Test
    void repeatedOffsetWithinOnePollIsFound() {
        HistoryBuilder h = new HistoryBuilder();
        h.poll(1, false, m("p-0", 4, 14), m("p-0", 4, 14));
        assertThat(checker.check(h.build())).extracting(Anomaly::kind).containsExactly(Anomaly.Kind.NON_MONOTONIC_POLL);
    }
}
