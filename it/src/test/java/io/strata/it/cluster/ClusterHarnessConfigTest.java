package io.strata.it.cluster;

import io.strata.server.config.ServerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link ClusterHarness} writes, without starting a process: every node's configuration
 * passes Strata's (Kafka's) cluster rules for its roles, and no port is used twice.
 */
class ClusterHarnessConfigTest {
    @TempDir
    Path dir;

    @Test
    void combinedNodesAreVotersWithABrokerAndAControllerListener() {
        ClusterHarness cluster = ClusterHarness.combined(dir, 3);
        for (ClusterHarness.Node node : cluster.nodes()) {
            ServerConfig config = ServerConfig.fromMap(node.config());
            assertThat(config.isBroker()).isTrue();
            assertThat(config.isController()).isTrue();
            assertThat(config.quorumVoters()).hasSize(3);
            assertThat(config.controllerEndpoint().port()).isEqualTo(node.controllerPort());
        }
        assertThat(cluster.voters()).matches("1@127\\.0\\.0\\.1:\\d+,2@127\\.0\\.0\\.1:\\d+,3@127\\.0\\.0\\.1:\\d+");
        assertThat(cluster.clusterId()).hasSize(22);
        assertDistinctPorts(cluster);
    }

    @Test
    void splitNodesAreControllerOnlyVotersAndBrokerOnlyObservers() {
        ClusterHarness cluster = ClusterHarness.split(dir, 3, 3);
        assertThat(cluster.controllers()).extracting(ClusterHarness.Node::id).containsExactly(1, 2, 3);
        assertThat(cluster.brokers()).extracting(ClusterHarness.Node::id).containsExactly(4, 5, 6);
        for (ClusterHarness.Node node : cluster.nodes()) {
            ServerConfig config = ServerConfig.fromMap(node.config());
            assertThat(config.isController()).as("%s", node).isEqualTo(node.id() <= 3);
            assertThat(config.isBroker()).as("%s", node).isEqualTo(node.id() > 3);
            assertThat(config.quorumVoters()).hasSize(3);
        }
        assertThat(cluster.bootstrapServers().split(",")).hasSize(3);
        assertThat(cluster.controllerBootstrapServers().split(",")).hasSize(3);
        assertDistinctPorts(cluster);
    }

    private static void assertDistinctPorts(ClusterHarness cluster) {
        List<Integer> ports = new ArrayList<>();
        for (ClusterHarness.Node node : cluster.nodes()) {
            if (node.isBroker()) {
                ports.add(node.brokerPort());
            }
            if (node.isController()) {
                ports.add(node.controllerPort());
            }
        }
        assertThat(ports).doesNotHaveDuplicates().allMatch(port -> port > 0);
    }
}
