package io.strata.bench;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BenchClusterTest {
    @Test
    void percentileIsTheNearestRankOfTheSortedValues() {
        long[] sorted = new long[1000];
        for (int index = 0; index < sorted.length; index++) {
            sorted[index] = index + 1;
        }

        assertThat(BenchCluster.percentile(sorted, 50)).isEqualTo(500);
        assertThat(BenchCluster.percentile(sorted, 99)).isEqualTo(990);
        assertThat(BenchCluster.percentile(sorted, 99.9)).isEqualTo(999);
        assertThat(BenchCluster.percentile(sorted, 100)).isEqualTo(1000);
        assertThat(BenchCluster.percentile(new long[] {7}, 99.9)).isEqualTo(7);
    }

    @Test
    void percentileOfNothingIsRefused() {
        assertThatThrownBy(() -> BenchCluster.percentile(new long[0], 50)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("percent=50");
    }

    @Test
    void bootstrapExceptLeavesOutOneNodeInNodeIdOrder() {
        BenchCluster cluster = new BenchCluster(Map.of("name", "kafka", "bootstrap", "h:1,h:2,h:3", "out", "/dev/null"));

        assertThat(cluster.bootstrapExcept(2)).isEqualTo("h:1,h:3");
        assertThat(cluster.listener(3)).isEqualTo("h:3");
        assertThat(cluster.nodeCount()).isEqualTo(3);
    }

    @Test
    void pidFilesMustNameOneFilePerNode() {
        assertThatThrownBy(() -> new BenchCluster(Map.of("name", "kafka", "bootstrap", "h:1,h:2,h:3", "out", "/dev/null",
            "pid-files", "a,b"))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2 files for 3 nodes");
    }

    @Test
    void optionsComeInPairs() {
        assertThat(ReplicationBench.parse(new String[] {"--name", "strata", "--phases", "latency"}))
            .containsEntry("name", "strata").containsEntry("phases", "latency");
        assertThatThrownBy(() -> ReplicationBench.parse(new String[] {"--name"})).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ReplicationBench.parse(new String[] {"name", "x"})).isInstanceOf(IllegalArgumentException.class);
    }
}
