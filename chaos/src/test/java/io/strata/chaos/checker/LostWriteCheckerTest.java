package io.strata.chaos.checker;

import static io.strata.chaos.checker.HistoryBuilder.m;
import static org.assertj.core.api.Assertions.assertThat;

import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LostWriteCheckerTest {
    private final LostWriteChecker checker = new LostWriteChecker();

    @Test
    void everyAcknowledgedValueDrainedIsClean() {
        HistoryBuilder h = new HistoryBuilder();
        h.ack(0, "p-0", 10, 0);
        h.ack(0, "p-0", 11, 1);
        h.drain(true, Map.of("p-0", 2L), m("p-0", 0, 10), m("p-0", 1, 11));
        assertThat(checker.check(h.build())).isEmpty();
    }

    @Test
    void acknowledgedValueMissingFromDrainThatReachedPastItIsLost() {
        HistoryBuilder h = new HistoryBuilder();
        h.ack(0, "p-0", 10, 0);
        int lost = h.ack(0, "p-0", 11, 1);
        h.ack(0, "p-0", 12, 2);
        int drain = h.drain(true, Map.of("p-0", 3L), m("p-0", 0, 10), m("p-0", 2, 12));
        List<Anomaly> anomalies = checker.check(h.build());
        assertThat(anomalies).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Anomaly.Kind.LOST_WRITE);
            assertThat(a.values()).containsExactly(11L);
            assertThat(a.offsets()).containsExactly(1L);
            assertThat(a.ops()).containsExactly(lost, drain);
        });
    }

    @Test
    void drainThatStoppedBeforeTheOffsetDoesNotCountItLost() {
        HistoryBuilder h = new HistoryBuilder();
        h.ack(0, "p-0", 10, 0);
        h.ack(0, "p-0", 11, 1);
        h.drain(true, Map.of("p-0", 1L), m("p-0", 0, 10));
        assertThat(checker.check(h.build())).isEmpty();
    }

    @Test
    void infoAndFailedSendsMayBeAbsent() {
        HistoryBuilder h = new HistoryBuilder();
        h.send(0, "p-0", 10, Op.Type.INFO, -1);
        h.send(1, "p-0", 11, Op.Type.FAIL, -1);
        h.ack(2, "p-0", 12, 0);
        h.drain(true, Map.of("p-0", 1L), m("p-0", 0, 12));
        assertThat(checker.check(h.build())).isEmpty();
    }

    @Test
    void committedTxnValueWithUnknownOffsetMustBeInEveryDrainOfItsPartition() {
        HistoryBuilder h = new HistoryBuilder();
        h.txn(5, Op.Type.OK, MicroOp.send("t-0", -1, 20), MicroOp.send("t-0", -1, 21));
        h.txn(6, Op.Type.INFO, MicroOp.send("t-0", -1, 30));
        h.drain(true, Map.of("t-0", 3L), m("t-0", 0, 20));
        List<Anomaly> anomalies = checker.check(h.build());
        assertThat(anomalies).extracting(Anomaly::kind, Anomaly::values)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(Anomaly.Kind.LOST_WRITE, List.of(21L)));
    }
}
