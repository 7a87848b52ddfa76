package io.strata.chaos.cluster;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ChaosClusterConfigTest {
    @Test
    void eachNodeListensOnItsNamespaceAddressAndEveryNodeIsAVoter() {
        ChaosCluster cluster = new ChaosCluster(5, 3, Path.of("/tmp/run"), Path.of("strata.jar"), List.of(),
            Map.of("broker.session.timeout.ms", "6000"), 1);
        assertThat(cluster.bootstrapServers()).isEqualTo("10.77.5.1:9092,10.77.5.2:9092,10.77.5.3:9092");
        String properties = cluster.properties(2);
        assertThat(properties)
            .contains("node.id=2\n")
            .contains("process.roles=broker,controller\n")
            .contains("listeners=PLAINTEXT://10.77.5.2:9092,CONTROLLER://10.77.5.2:9093\n")
            .contains("advertised.listeners=PLAINTEXT://10.77.5.2:9092\n")
            .contains("controller.quorum.voters=1@10.77.5.1:9093,2@10.77.5.2:9093,3@10.77.5.3:9093\n")
            .contains("metrics.listener=http://10.77.5.2:9100\n")
            .contains("log.dirs=/tmp/run/node-2/data\n")
            .contains("min.insync.replicas=2\n")
            .contains("broker.session.timeout.ms=6000\n");
    }

    @Test
    void clusterIdIsKafkasBase64FormAndSeeded() {
        String id = ChaosCluster.clusterId(new Random(3));
        assertThat(id).hasSize(22).doesNotStartWith("-").isEqualTo(ChaosCluster.clusterId(new Random(3)));
        assertThat(Base64.getUrlDecoder().decode(id)).hasSize(16);
    }

    @Test
    void refusesRunsAndNodesOutsideTheAddressRange() {
        assertThatThrownBy(() -> new ChaosCluster(0, 3, Path.of("r"), Path.of("j"), List.of(), Map.of(), 1))
            .hasMessageContaining("run=0");
        assertThatThrownBy(() -> new ChaosCluster(1, 10, Path.of("r"), Path.of("j"), List.of(), Map.of(), 1))
            .hasMessageContaining("nodes=10");
    }
}
