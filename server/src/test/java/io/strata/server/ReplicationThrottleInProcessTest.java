package io.strata.server;

import io.strata.server.replica.Partition;
import io.strata.storage.TopicPartition;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A follower restarted behind its leader catches up under {@code leader.replication.throttled.rate}
 * and {@code leader.replication.throttled.replicas=*} no faster than about the throttle: the data is
 * many times the quota window's burst allowance (10 windows × the rate), so the measured average
 * over the catch-up is bounded above by twice the rate. Only an upper bound is asserted (a slow
 * machine only makes the catch-up slower).
 */
class ReplicationThrottleInProcessTest {
    private static final String TOPIC = "throttled";
    private static final long RATE_BYTES_PER_SECOND = 200_000;
    private static final int RECORD_BYTES = 1_000;
    private static final int RECORDS = 6_000;
    private static final Map<String, String> SETTINGS = Map.of("broker.session.timeout.ms", "3000", "broker.heartbeat.interval.ms", "500",
        "replica.fetch.wait.max.ms", "100", "replica.fetch.max.bytes", "65536", "replica.fetch.backoff.ms", "100");

    @TempDir
    Path dir;

    @Test
    void aRestartedFollowerCatchesUpAtRoughlyTheLeaderThrottle() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(dir, 3, SETTINGS)) {
            Properties adminProperties = new Properties();
            adminProperties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
            try (Admin admin = Admin.create(adminProperties)) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 3).configs(Map.of("min.insync.replicas", "1"))))
                    .all().get(30, TimeUnit.SECONDS);
                cluster.awaitLeaders(TOPIC, 1, 30_000);
                int leader = cluster.leader(TOPIC, 0);
                int follower = leader == 3 ? 2 : 3;
                int observer = 6 - leader - follower;
                cluster.server(follower).close();
                InProcessCluster.awaitCondition(() -> cluster.server(observer).metadata().image().topic(TOPIC).partition(0).isr().length == 2,
                    30_000, "the stopped follower out of the ISR");

                produce(cluster);
                long leaderEnd = partition(cluster, leader).log().logEndOffset();
                long dataBytes = partition(cluster, leader).log().size();
                assertThat(dataBytes).as("many times the burst allowance of 10 windows").isGreaterThanOrEqualTo(25 * RATE_BYTES_PER_SECOND);

                admin.incrementalAlterConfigs(Map.of(
                    new ConfigResource(ConfigResource.Type.BROKER, ""), List.of(new AlterConfigOp(
                        new ConfigEntry("leader.replication.throttled.rate", Long.toString(RATE_BYTES_PER_SECOND)), AlterConfigOp.OpType.SET)),
                    new ConfigResource(ConfigResource.Type.TOPIC, TOPIC), List.of(new AlterConfigOp(
                        new ConfigEntry("leader.replication.throttled.replicas", "*"), AlterConfigOp.OpType.SET))))
                    .all().get(30, TimeUnit.SECONDS);
                InProcessCluster.awaitCondition(() -> cluster.server(leader).replicationQuotas().get(0).upperBound() == RATE_BYTES_PER_SECOND
                    && cluster.server(leader).replicationQuotas().get(0).isThrottled(new TopicPartition(TOPIC, 0)), 30_000, "the throttle on the leader");

                long startNanos = System.nanoTime();
                cluster.restart(follower);
                InProcessCluster.awaitCondition(() -> {
                    Partition replica = partition(cluster, follower);
                    return replica != null && replica.log().logEndOffset() == leaderEnd;
                }, 120_000, "the restarted follower to catch up");
                double elapsedSeconds = (System.nanoTime() - startNanos) / 1e9;
                double measured = dataBytes / elapsedSeconds;
                assertThat(measured).as("catch-up rate in bytes/s over %.1f s for %d bytes", elapsedSeconds, dataBytes)
                    .isLessThanOrEqualTo(2.0 * RATE_BYTES_PER_SECOND);
                assertThat(cluster.server(leader).replicationQuotas().get(0).byteRate()).as("the leader counted the throttled bytes").isPositive();
            }
        }
    }

    private static Partition partition(InProcessCluster cluster, int node) {
        return cluster.server(node).replicaManager().partition(new TopicPartition(TOPIC, 0));
    }

    private static void produce(InProcessCluster cluster) throws Exception {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        properties.put(ProducerConfig.ACKS_CONFIG, "1");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        byte[] value = new byte[RECORD_BYTES];
        new java.util.Random(7).nextBytes(value);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(properties)) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(TOPIC, 0, null, value));
            }
            producer.flush();
        }
    }
}
