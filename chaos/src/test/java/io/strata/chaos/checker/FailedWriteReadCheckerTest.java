package io.strata.chaos.checker;

import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static io.strata.chaos.checker.HistoryBuilder.m;
import static org.assertj.core.api.Assertions.assertThat;

class FailedWriteReadCheckerTest {
    private final FailedWriteReadChecker checker = new FailedWriteReadChecker();

    @Test
    void aFailedSendThatAPollOrDrainShowsIsFound() {
        HistoryBuilder h = new HistoryBuilder();
        h.ack(1, "p-0", 10, 0);
        int failed = h.send(1, "p-0", 11, Op.Type.FAIL, -1);
        int poll = h.poll(2, false, m("p-0", 0, 10), m("p-0", 1, 11));
        h.drain(true, Map.of("p-0", 2L), m("p-0", 0, 10), m("p-0", 1, 11));
        assertThat(checker.check(h.build())).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Anomaly.Kind.FAILED_WRITE_READ);
            assertThat(a.partition()).isEqualTo("p-0");
            assertThat(a.offsets()).containsExactly(1L);
            assertThat(a.values()).containsExactly(11L);
            assertThat(a.ops()).containsExactly(failed, poll);
        });
    }

    @Test
    void unknownSendsMayAppearAndFailedOnesThatStayAbsentAreClean() {
        HistoryBuilder h = new HistoryBuilder();
        h.send(1, "p-0", 10, Op.Type.INFO, -1);
        h.send(1, "p-0", 11, Op.Type.FAIL, -1);
        h.txn(3, Op.Type.FAIL, MicroOp.send("p-1", 0, 12));
        h.poll(2, false, m("p-0", 0, 10), m("p-1", 0, 12));
        h.drain(false, Map.of("p-0", 1L, "p-1", 2L), m("p-0", 0, 10), m("p-1", 0, 12));
        assertThat(checker.check(h.build())).isEmpty();
    }

    @Test
    void theSameValueInAnotherPartitionIsNotTheFailedWrite() {
        HistoryBuilder h = new HistoryBuilder();
        h.send(1, "p-0", 11, Op.Type.FAIL, -1);
        h.poll(2, true, m("p-1", 0, 11));
        assertThat(checker.check(h.build())).isEmpty();
    }
}
