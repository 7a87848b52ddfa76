package io.strata.server;

import io.strata.metadata.PartitionRegistration;
import io.strata.metadata.ReplicationControl;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * KIP-966's config and feature rules (KAFKA-16540) through Kafka's own Admin client against
 * three in-process nodes, on the real request path (broker handler, forwarding, controller):
 * an RF=3 topic with min.insync.replicas=3 loses one node, whose replica goes to the ELR that
 * DescribeTopicPartitions reports; a broker-level min.insync.replicas and the removal of the
 * cluster-level one are refused with INVALID_CONFIG and Kafka's messages; changing the topic's
 * min.insync.replicas clears its ELR (not another topic's), setting the cluster-level one, even to
 * the value it has, clears every ELR; {@code eligible.leader.replicas.version} goes off with
 * SAFE_DOWNGRADE, and afterwards a broker-level min.insync.replicas is accepted.
 */
class ElrAdminInProcessTest {
    private static final String TOPIC = "elr";
    private static final String OTHER = "other";
    private static final Map<String, String> FAST_FENCING = Map.of("broker.session.timeout.ms", "3000", "broker.heartbeat.interval.ms", "500",
        "replica.fetch.wait.max.ms", "100");
    private static final long WAIT_MS = 30_000;

    @TempDir
    Path dir;

    @Test
    void minIsrRulesAndTheElrFeatureDowngradeThroughTheAdminClient() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(dir, 3, FAST_FENCING)) {
            try (Admin admin = admin(cluster)) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 3).configs(Map.of("min.insync.replicas", "3")),
                        new NewTopic(OTHER, 1, (short) 3).configs(Map.of("min.insync.replicas", "3"))))
                    .all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            }
            cluster.awaitLeaders(TOPIC, 1, WAIT_MS);
            cluster.awaitLeaders(OTHER, 1, WAIT_MS);
            int leader = cluster.leader(TOPIC, 0);
            int stopped = leader == 3 ? 2 : 3;
            cluster.server(stopped).close();
            InProcessCluster.awaitCondition(() -> {
                for (String topic : List.of(TOPIC, OTHER)) {
                    PartitionRegistration partition = cluster.server(leader).metadata().image().topic(topic).partition(0);
                    if (partition.isr().length != 2 || partition.elr().length != 1) {
                        return false;
                    }
                }
                return true;
            }, WAIT_MS, "the stopped node " + stopped + " moved from the ISR to the ELR");

            try (Admin admin = admin(cluster, leader)) {
                awaitDescribed(admin, TOPIC, List.of(stopped), "node " + stopped + " in the ELR");
                awaitDescribed(admin, OTHER, List.of(stopped), "node " + stopped + " in the ELR of " + OTHER);
                assertThat(ids(describe(admin, TOPIC).lastKnownElr())).isEmpty();

                assertThatThrownBy(() -> alter(admin, new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(leader)),
                    new AlterConfigOp(new ConfigEntry("min.insync.replicas", "2"), AlterConfigOp.OpType.SET)))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(InvalidConfigurationException.class)
                    .hasMessage("Broker-level min.insync.replicas cannot be altered while ELR is enabled.");
                assertThatThrownBy(() -> alter(admin, new ConfigResource(ConfigResource.Type.BROKER, ""),
                    new AlterConfigOp(new ConfigEntry("min.insync.replicas", ""), AlterConfigOp.OpType.DELETE)))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(InvalidConfigurationException.class)
                    .hasMessage("Cluster-level min.insync.replicas cannot be removed while ELR is enabled.");
                assertThat(ids(describe(admin, TOPIC).elr())).as("refused changes clear nothing").containsExactly(stopped);

                alter(admin, new ConfigResource(ConfigResource.Type.TOPIC, TOPIC),
                    new AlterConfigOp(new ConfigEntry("min.insync.replicas", "2"), AlterConfigOp.OpType.SET));
                awaitDescribed(admin, TOPIC, List.of(), "the topic's min ISR change cleared its ELR");
                assertThat(ids(describe(admin, TOPIC).lastKnownElr())).isEmpty();
                assertThat(describe(admin, TOPIC).isr()).hasSize(2);
                assertThat(ids(describe(admin, OTHER).elr())).as("another topic keeps its ELR").containsExactly(stopped);

                // The cluster-level value set to the value it has: still a change that clears every ELR, as Kafka.
                alter(admin, new ConfigResource(ConfigResource.Type.BROKER, ""),
                    new AlterConfigOp(new ConfigEntry("min.insync.replicas", "1"), AlterConfigOp.OpType.SET));
                awaitDescribed(admin, OTHER, List.of(), "the cluster-level min ISR change cleared every ELR");

                // Kafka's client refuses a level-0 update of type UPGRADE itself; the controller's own refusal is in ElrControllerTest.
                admin.updateFeatures(Map.of(ReplicationControl.ELR_FEATURE, new FeatureUpdate((short) 0, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE)),
                    new UpdateFeaturesOptions()).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
                InProcessCluster.awaitCondition(() -> !ReplicationControl.elrEnabled(cluster.server(leader).metadata().image()), WAIT_MS,
                    "ELR off on node " + leader);
                FinalizedVersionRange elr = admin.describeFeatures().featureMetadata().get(WAIT_MS, TimeUnit.MILLISECONDS)
                    .finalizedFeatures().get(ReplicationControl.ELR_FEATURE);
                assertThat(elr == null || elr.maxVersionLevel() == 0).as("finalized %s", elr).isTrue();

                alter(admin, new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(leader)),
                    new AlterConfigOp(new ConfigEntry("min.insync.replicas", "2"), AlterConfigOp.OpType.SET));
                InProcessCluster.awaitCondition(() -> "2".equals(cluster.server(leader).metadata().image()
                    .configs(io.strata.metadata.ConfigResource.broker(Integer.toString(leader))).get("min.insync.replicas")), WAIT_MS,
                    "the broker-level min ISR written with ELR off");
            }
        }
    }

    private static void alter(Admin admin, ConfigResource resource, AlterConfigOp op) throws Exception {
        admin.incrementalAlterConfigs(Map.of(resource, List.of(op))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
    }

    private static TopicPartitionInfo describe(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(WAIT_MS, TimeUnit.MILLISECONDS).get(topic).partitions().get(0);
    }

    /** Waits until DescribeTopicPartitions reports exactly {@code elr} as the ELR of {@code topic}-0. */
    private static void awaitDescribed(Admin admin, String topic, List<Integer> elr, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        List<Integer> seen = ids(describe(admin, topic).elr());
        while (!seen.equals(elr)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what + ": the ELR is " + seen);
            }
            Thread.sleep(50);
            seen = ids(describe(admin, topic).elr());
        }
    }

    private static List<Integer> ids(List<Node> nodes) {
        return nodes.stream().map(Node::id).toList();
    }

    private static Admin admin(InProcessCluster cluster) {
        return admin(cluster.bootstrap());
    }

    /** An Admin that bootstraps from node {@code id} only, so it never starts at a stopped node. */
    private static Admin admin(InProcessCluster cluster, int id) {
        return admin("127.0.0.1:" + cluster.server(id).boundPort("PLAINTEXT"));
    }

    private static Admin admin(String bootstrap) {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(properties);
    }
}
