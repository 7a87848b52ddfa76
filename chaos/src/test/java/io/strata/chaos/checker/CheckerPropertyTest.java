package io.strata.chaos.checker;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.chaos.history.History;
import io.strata.chaos.history.Op;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Random histories of a correct log give no anomaly; one planted anomaly of each kind is found, with
 * nothing unexplained beside it. A failing seed becomes a named test below.
 */
class CheckerPropertyTest {
    private static final int SEEDS = 250;
    private static final int STEPS = 300;
    private final Checker checker = new Checker();

    @Test
    void randomCleanHistoriesHaveNoAnomalyAndEveryPlantedOneIsFound() {
        Map<Anomaly.Kind, Integer> planted = new EnumMap<>(Anomaly.Kind.class);
        for (int seed = 0; seed < SEEDS; seed++) {
            checkSeed(seed, planted);
        }
        // the generator must give every planter victims in most seeds, or the property proves little
        for (Anomaly.Kind kind : Anomaly.Kind.values()) {
            assertThat(planted.getOrDefault(kind, 0)).as("seeds where %s was planted", kind).isGreaterThan(SEEDS / 2);
        }
    }

    @Test
    void generatorCoversTheCasesTheCheckersDistinguish() {
        int infoSends = 0;
        int failedTxns = 0;
        int infoTxns = 0;
        int interleavedTxns = 0;
        int readEdges = 0;
        int writeEdges = 0;
        int readCommittedPollsOfTxnData = 0;
        for (int seed = 0; seed < 50; seed++) {
            History history = History.of(new CorrectLogSimulator(seed).run(STEPS));
            java.util.Set<Integer> inFlight = new java.util.HashSet<>();
            for (Op op : history.ops()) {
                if (op.function() == Op.Function.TXN) {
                    if (op.type() == Op.Type.INVOKE) {
                        if (!inFlight.isEmpty()) {
                            interleavedTxns++;
                        }
                        inFlight.add(op.process());
                    } else {
                        inFlight.remove(op.process());
                        failedTxns += op.type() == Op.Type.FAIL ? 1 : 0;
                        infoTxns += op.type() == Op.Type.INFO ? 1 : 0;
                    }
                }
                infoSends += op.function() == Op.Function.SEND && op.type() == Op.Type.INFO ? 1 : 0;
                if (op.function() == Op.Function.POLL && op.type() == Op.Type.OK
                        && ((io.strata.chaos.history.PollValue) op.value()).readCommitted()) {
                    readCommittedPollsOfTxnData += ((io.strata.chaos.history.PollValue) op.value()).messages().stream()
                            .filter(m -> m.partition().startsWith("t-")).count() > 1 ? 1 : 0;
                }
            }
            TxnDependencyGraph graph = new TxnDependencyGraph(history);
            int[] counts = new int[2];
            graph.wrEdges().forEach((from, to) -> counts[0]++);
            graph.wwEdges().forEach((from, to) -> counts[1]++);
            readEdges += counts[0];
            writeEdges += counts[1];
        }
        assertThat(List.of(infoSends, failedTxns, infoTxns, interleavedTxns, readEdges, writeEdges, readCommittedPollsOfTxnData))
                .as("info sends, failed txns, info txns, interleaved txns, wr edges, ww edges, rc polls of txn data")
                .allSatisfy(count -> assertThat(count).isGreaterThan(20));
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 1, 42})
    void namedSeedsStayClean(long seed) {
        checkSeed(seed, new EnumMap<>(Anomaly.Kind.class));
    }

    private void checkSeed(long seed, Map<Anomaly.Kind, Integer> planted) {
        List<Op> clean = new CorrectLogSimulator(seed).run(STEPS);
        assertThat(checker.check(History.of(clean))).as("clean history of seed %d", seed).isEmpty();
        Random random = new Random(seed * 31 + 7);
        for (Anomaly.Kind kind : Anomaly.Kind.values()) {
            AnomalyPlanter.Planted plant = AnomalyPlanter.plant(clean, kind, random);
            if (plant == null) {
                continue;
            }
            planted.merge(kind, 1, Integer::sum);
            List<Anomaly> found = checker.check(History.of(plant.ops()));
            assertThat(found).as("seed %d, planted %s", seed, kind)
                    .anySatisfy(a -> {
                        assertThat(a.kind()).isEqualTo(kind);
                        if (plant.value() != null) {
                            assertThat(a.values()).contains(plant.value());
                        }
                    })
                    .allSatisfy(a -> assertThat(a.kind()).isIn(kindAndCollateral(plant)));
        }
    }

    private static List<Anomaly.Kind> kindAndCollateral(AnomalyPlanter.Planted plant) {
        List<Anomaly.Kind> allowed = new java.util.ArrayList<>(plant.collateral());
        allowed.add(plant.kind());
        return allowed;
    }
}
