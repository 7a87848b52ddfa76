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
