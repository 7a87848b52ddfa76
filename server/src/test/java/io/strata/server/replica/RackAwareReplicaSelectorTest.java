package io.strata.server.replica;

import io.strata.common.config.ConfigException;
import io.strata.server.config.ServerConfig;
import io.strata.storage.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Kafka's RackAwareReplicaSelector rules, and which {@code replica.selector.class} values start a broker. */
class RackAwareReplicaSelectorTest {
    private static final TopicPartition PARTITION = new TopicPartition("t", 0);
    private final RackAwareReplicaSelector selector = new RackAwareReplicaSelector();
    private final ReplicaSelector.ReplicaView leader = new ReplicaSelector.ReplicaView(1, "r0", 100, 0);

    private int select(String clientRack, ReplicaSelector.ReplicaView... followers) {
        List<ReplicaSelector.ReplicaView> replicas = new java.util.ArrayList<>(List.of(followers));
        replicas.add(0, leader);
        return selector.select(PARTITION, new ClientMetadata(clientRack, "c", "PLAINTEXT"),
            new ReplicaSelector.PartitionView(replicas, leader)).orElseThrow().brokerId();
    }

    @Test
    void aClientOnAFollowersRackIsSentToIt() {
        assertThat(select("r2", new ReplicaSelector.ReplicaView(2, "r1", 100, 0), new ReplicaSelector.ReplicaView(3, "r2", 90, 0))).isEqualTo(3);
    }

    @Test
    void theLeaderIsPreferredWhenItIsOnTheClientsRack() {
        assertThat(select("r0", new ReplicaSelector.ReplicaView(2, "r0", 100, 0))).isEqualTo(1);
    }

    @Test
    void amongFollowersOnTheRackTheHighestLogEndThenTheMostRecentlyCaughtUpWins() {
        assertThat(select("r1", new ReplicaSelector.ReplicaView(2, "r1", 80, 0), new ReplicaSelector.ReplicaView(3, "r1", 95, 5_000))).isEqualTo(3);
        assertThat(select("r1", new ReplicaSelector.ReplicaView(2, "r1", 95, 10), new ReplicaSelector.ReplicaView(3, "r1", 95, 5_000))).isEqualTo(2);
    }

    @Test
    void noClientRackOrNoReplicaOnItMeansTheLeader() {
        assertThat(select("", new ReplicaSelector.ReplicaView(2, "r1", 100, 0))).isEqualTo(1);
        assertThat(select("r9", new ReplicaSelector.ReplicaView(2, "r1", 100, 0))).isEqualTo(1);
        assertThat(select(null, new ReplicaSelector.ReplicaView(2, null, 100, 0))).isEqualTo(1);
    }

    @Test
    void kafkasClassNameMapsToOurSelectorAndAnUnknownOneFailsTheConfig() {
        assertThat(ReplicaSelectors.create(ReplicaSelectors.KAFKA_RACK_AWARE)).isInstanceOf(RackAwareReplicaSelector.class);
        assertThat(ReplicaSelectors.create(RackAwareReplicaSelector.class.getName())).isInstanceOf(RackAwareReplicaSelector.class);
        assertThat(ReplicaSelectors.create(null)).isNull();
        assertThat(ServerConfig.fromMap(Map.of()).replicaSelector()).isNull();
        assertThatThrownBy(() -> ServerConfig.fromMap(Map.of("replica.selector.class", "com.example.Nope")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("replica.selector.class").hasMessageContaining("com.example.Nope");
    }
}
