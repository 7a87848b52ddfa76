package io.strata.it.cluster;

import io.strata.it.KafkaTool;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.RaftVoterEndpoint;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.tools.MetadataQuorumCommand;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * KIP-853 end to end with real processes: controller 1 formatted {@code --standalone} (the only
 * voter), controllers 2 and 3 formatted {@code --no-initial-controllers} (observers that find the
 * leader through {@code controller.quorum.bootstrap.servers}), and a broker. The observers are added
 * with kafka-clients {@code Admin.addRaftVoter}; {@code describeMetadataQuorum} and Kafka's own
 * {@code kafka-metadata-quorum describe --status / --replication} report three voters with their
 * directory ids; topics are created; the first leader is killed with SIGKILL and one of the added
 * voters takes over; the dead voter is removed with {@code Admin.removeRaftVoter}.
 */
@Tag("cluster")
@ExtendWith(PrintClusterLogsOnFailure.class)
class DynamicQuorumClusterTest {
    private static final Duration DEADLINE = Duration.ofSeconds(45);

    @TempDir
    Path dir;

    private ClusterHarness cluster;

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void controllersJoinAStandaloneQuorumWhichSurvivesItsFirstLeader() throws Exception {
        cluster = ClusterHarness.dynamicSplit(dir, 3, 1);
        cluster.start();
        QuorumInfo three;
        try (Admin admin = cluster.controllerAdmin()) {
            ClusterHarness.waitUntil(() -> describe(admin).observers().stream().map(QuorumInfo.ReplicaState::replicaId).collect(Collectors.toSet())
                .containsAll(Set.of(2, 3)), DEADLINE, "controllers 2 and 3 fetch from the standalone leader as observers");
            QuorumInfo before = describe(admin);
            assertThat(before.voters()).extracting(QuorumInfo.ReplicaState::replicaId).containsExactly(1);
            Map<Integer, Uuid> directoryIds = before.observers().stream().collect(Collectors.toMap(QuorumInfo.ReplicaState::replicaId,
                QuorumInfo.ReplicaState::replicaDirectoryId, (a, b) -> a));
            for (int id : List.of(2, 3)) {
                assertThat(directoryIds.get(id)).as("directory id of observer %d", id).isNotEqualTo(Uuid.ZERO_UUID);
            }
            // Controller 2 with Admin.addRaftVoter on bootstrap.controllers.
            RaftVoterEndpoint endpoint = new RaftVoterEndpoint("CONTROLLER", "127.0.0.1", cluster.node(2).controllerPort());
            ClusterHarness.waitUntil(() -> {
                admin.addRaftVoter(2, directoryIds.get(2), Set.of(endpoint)).all().get(15, TimeUnit.SECONDS);
                return true;
            }, DEADLINE, "controller 2 is added as a voter");
            // Controller 3 with Kafka's `kafka-metadata-quorum add-controller`, given the controller's own configuration (it reads
            // the directory id from its meta.properties), through a broker (bootstrap.servers), which forwards it.
            Path controllerConfig = dir.resolve("node-3.properties");
            java.util.Properties properties = new java.util.Properties();
            properties.putAll(cluster.node(3).config());
            try (java.io.Writer writer = Files.newBufferedWriter(controllerConfig)) {
                properties.store(writer, "controller 3");
            }
            String brokers = cluster.bootstrapServers();
            ClusterHarness.waitUntil(() -> {
                KafkaTool.Result added = KafkaTool.run(MetadataQuorumCommand::main, "--bootstrap-server", brokers, "--command-config",
                    controllerConfig.toString(), "add-controller");
                assertThat(added.exitCode()).as("%s", added).isZero();
                return true;
            }, DEADLINE, "kafka-metadata-quorum add-controller adds controller 3 through a broker");
            ClusterHarness.waitUntil(() -> describe(admin).voters().stream().map(QuorumInfo.ReplicaState::replicaId).collect(Collectors.toSet())
                .equals(Set.of(1, 2, 3)), DEADLINE, "three voters");
            three = describe(admin);
            assertThat(three.voters()).allSatisfy(voter -> assertThat(voter.replicaDirectoryId()).isNotEqualTo(Uuid.ZERO_UUID));
            assertThat(three.voters()).filteredOn(voter -> voter.replicaId() == 2).first()
                .satisfies(voter -> assertThat(voter.replicaDirectoryId()).isEqualTo(directoryIds.get(2)));
        }

        String controllers = cluster.controllerBootstrapServers();
        KafkaTool.Result status = KafkaTool.run(MetadataQuorumCommand::main, "--bootstrap-controller", controllers, "describe", "--status");
        assertThat(status.exitCode()).as("%s", status).isZero();
        assertThat(status.lines()).as("%s", status).anySatisfy(line -> assertThat(line).startsWith("CurrentVoters:").contains("\"id\": 1")
            .contains("\"id\": 2").contains("\"id\": 3"));
        KafkaTool.Result replication = KafkaTool.run(MetadataQuorumCommand::main, "--bootstrap-controller", controllers, "describe", "--replication");
        assertThat(replication.exitCode()).as("%s", replication).isZero();
        List<String> rows = replication.lines();
        assertThat(rows.stream().filter(row -> row.trim().endsWith("Leader") || row.trim().endsWith("Follower")).count()).as("%s", replication)
            .isEqualTo(3);

        try (Admin brokerAdmin = cluster.admin()) {
            brokerAdmin.createTopics(List.of(new NewTopic("dynamic-before", 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }

        int firstLeader = cluster.awaitActiveController(DEADLINE);
        assertThat(firstLeader).isEqualTo(1);
        cluster.node(1).kill9();
        // A fresh client per attempt, bootstrapped from the live controllers: one made before the election may keep a stale active controller.
        ClusterHarness.waitUntil(() -> {
            try (Admin admin = liveControllerAdmin()) {
                return Set.of(2, 3).contains(describe(admin).leaderId());
            }
        }, DEADLINE, "a new leader among the added voters");
        try (Admin brokerAdmin = cluster.admin()) {
            ClusterHarness.waitUntil(() -> {
                brokerAdmin.createTopics(List.of(new NewTopic("dynamic-after", 2, (short) 1))).all().get(15, TimeUnit.SECONDS);
                return true;
            }, DEADLINE, "a topic is created after the failover");
        }
        Uuid deadDirectory = three.voters().stream().filter(voter -> voter.replicaId() == 1).findFirst().orElseThrow().replicaDirectoryId();
        // Through a broker (bootstrap.servers): forwarded to the new active controller.
        ClusterHarness.waitUntil(() -> {
            try (Admin admin = cluster.admin()) {
                admin.removeRaftVoter(1, deadDirectory).all().get(15, TimeUnit.SECONDS);
                return true;
            }
        }, DEADLINE, "the dead voter 1 is removed through a broker");
        ClusterHarness.waitUntil(() -> {
            try (Admin admin = liveControllerAdmin()) {
                return describe(admin).voters().stream().map(QuorumInfo.ReplicaState::replicaId).collect(Collectors.toSet()).equals(Set.of(2, 3));
            }
        }, DEADLINE, "two voters left");
    }

    private Admin liveControllerAdmin() {
        java.util.Properties properties = new java.util.Properties();
        properties.put(org.apache.kafka.clients.admin.AdminClientConfig.BOOTSTRAP_CONTROLLERS_CONFIG, cluster.controllers().stream()
            .filter(ClusterHarness.Node::isAlive).map(node -> "127.0.0.1:" + node.controllerPort()).collect(Collectors.joining(",")));
        properties.put(org.apache.kafka.clients.admin.AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        properties.put(org.apache.kafka.clients.admin.AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        return Admin.create(properties);
    }

    private static QuorumInfo describe(Admin admin) throws Exception {
        return admin.describeMetadataQuorum().quorumInfo().get(10, TimeUnit.SECONDS);
    }
}
