package io.strata.chaos.checker;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import org.junit.jupiter.api.Test;

class CycleCheckerTest {
    private final WriteCycleChecker g0 = new WriteCycleChecker();
    private final ReadCycleChecker g1c = new ReadCycleChecker();

    @Test
    void sequentialTxnsOfOneProducerInOffsetOrderAreClean() {
        HistoryBuilder h = new HistoryBuilder();
        h.txn(5, Op.Type.OK, MicroOp.send("a", 0, 1), MicroOp.send("b", 0, 2));
        h.txn(5, Op.Type.OK, MicroOp.send("a", 2, 3), MicroOp.send("b", 2, 4));
        h.txn(6, Op.Type.OK, MicroOp.poll("a", 0, 1), MicroOp.send("c", 0, 5));
        h.txn(7, Op.Type.OK, MicroOp.poll("c", 0, 5), MicroOp.poll("b", 2, 4), MicroOp.send("d", 0, 6));
        assertThat(g0.check(h.build())).isEmpty();
        assertThat(g1c.check(h.build())).isEmpty();
    }

    @Test
    void interleavedTxnsOfDifferentProducersAreLegal() {
        HistoryBuilder h = new HistoryBuilder();
        // Kafka appends on send: concurrent producers' records interleave, and one may read the other's commit.
        h.txn(5, Op.Type.OK, MicroOp.send("a", 0, 1), MicroOp.send("b", 1, 2), MicroOp.poll("c", 0, 30));
        h.txn(6, Op.Type.OK, MicroOp.send("b", 0, 3), MicroOp.send("a", 1, 4), MicroOp.send("c", 0, 30));
        assertThat(g0.check(h.build())).isEmpty();
        assertThat(g1c.check(h.build())).isEmpty();
    }

    @Test
    void oneProducersTxnsOrderedBothWaysAreG0() {
        HistoryBuilder h = new HistoryBuilder();
        int first = h.txn(5, Op.Type.OK, MicroOp.send("a", 0, 1), MicroOp.send("b", 1, 2));
        int second = h.txn(5, Op.Type.OK, MicroOp.send("a", 1, 3), MicroOp.send("b", 0, 4));
        assertThat(g0.check(h.build())).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Anomaly.Kind.CYCLE_G0);
            assertThat(a.ops()).containsExactly(first, second);
        });
        assertThat(g1c.check(h.build())).isEmpty();
    }

    @Test
    void aLaterTxnOfOneProducerWrittenBelowItsEarlierOneIsG0() {
        HistoryBuilder h = new HistoryBuilder();
        int first = h.txn(5, Op.Type.OK, MicroOp.send("a", 5, 1), MicroOp.send("a", 6, 2));
        int second = h.txn(5, Op.Type.OK, MicroOp.send("a", 3, 3), MicroOp.send("a", 4, 4));
        assertThat(g0.check(h.build())).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Anomaly.Kind.CYCLE_G0);
            assertThat(a.ops()).containsExactly(first, second);
        });
    }

    @Test
    void processOrderSkipsAbortedTxnsAndStartsAgainAfterAnUnknownOne() {
        HistoryBuilder h = new HistoryBuilder();
        h.txn(5, Op.Type.OK, MicroOp.send("a", 0, 1));
        h.txn(5, Op.Type.FAIL, MicroOp.send("a", 1, 2));
        h.txn(5, Op.Type.OK, MicroOp.send("a", 2, 3));
        // An info txn (read, so committed) may still be committing when the next one runs: no order after it.
        h.txn(5, Op.Type.INFO, MicroOp.send("a", 9, 4));
        h.txn(5, Op.Type.OK, MicroOp.send("a", 4, 5));
        h.poll(8, true, HistoryBuilder.m("a", 9, 4));
        assertThat(g0.check(h.build())).isEmpty();

        HistoryBuilder inverted = new HistoryBuilder();
        int first = inverted.txn(5, Op.Type.OK, MicroOp.send("a", 3, 1));
        inverted.txn(5, Op.Type.FAIL, MicroOp.send("a", 4, 2));
        int third = inverted.txn(5, Op.Type.OK, MicroOp.send("a", 0, 3));
        assertThat(g0.check(inverted.build())).singleElement().satisfies(a -> assertThat(a.ops()).containsExactly(first, third));
    }

    @Test
    void txnsReadingEachOthersWritesAreG1c() {
        HistoryBuilder h = new HistoryBuilder();
        h.txn(4, Op.Type.OK, MicroOp.send("z", 0, 99));
        int first = h.txn(5, Op.Type.OK, MicroOp.send("a", 0, 1), MicroOp.poll("b", 0, 2));
        int second = h.txn(6, Op.Type.INFO, MicroOp.send("b", 0, 2), MicroOp.poll("a", 0, 1));
        assertThat(g1c.check(h.build())).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Anomaly.Kind.CYCLE_G1C);
            assertThat(a.ops()).containsExactly(first, second);
        });
        assertThat(g0.check(h.build())).isEmpty();
    }

    @Test
    void readOfAnAbortedTxnMakesNoEdge() {
        HistoryBuilder h = new HistoryBuilder();
        h.txn(5, Op.Type.OK, MicroOp.send("a", 0, 1), MicroOp.poll("b", 0, 2));
        h.txn(6, Op.Type.FAIL, MicroOp.send("b", 0, 2), MicroOp.poll("a", 0, 1));
        assertThat(g1c.check(h.build())).isEmpty();
    }

    @Test
    void tarjanFindsEveryComponentOfALongChainWithoutRecursion() {
        int nodes = 200_000;
        int[] start = new int[nodes + 1];
        int[] target = new int[nodes];
        for (int i = 0; i < nodes; i++) {
            start[i] = i;
            target[i] = (i + 1) % nodes;
        }
        start[nodes] = nodes;
        assertThat(StronglyConnectedComponents.nonTrivial(nodes, start, target)).singleElement()
                .satisfies(c -> assertThat(c).hasSize(nodes));
        target[nodes - 1] = nodes - 1;
        assertThat(StronglyConnectedComponents.nonTrivial(nodes, start, target)).isEmpty();
    }
}
