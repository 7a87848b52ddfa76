package io.strata.server;

import io.strata.server.security.TestCertificates;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three combined nodes whose every listener is SSL with {@code ssl.client.auth=required}: the
 * raft quorum, broker-to-controller traffic and replica fetching all run over mutual TLS (a
 * node's own connections present its certificate), so the cluster forms, creates a replicated
 * topic, and acknowledges acks=all writes only once the followers fetched them.
 */
class TlsClusterTest {
    @TempDir
    Path dir;

    @Test
    void aClusterWhoseEveryListenerIsMutualTlsFormsAndReplicates() throws Exception {
        TestCertificates certificates = TestCertificates.create(dir, "ca");
        TestCertificates.Entity node = certificates.issue("ca", "node");
        Map<String, String> overrides = new HashMap<>();
        overrides.put("listener.security.protocol.map", "PLAINTEXT:SSL,CONTROLLER:SSL");
        overrides.put("ssl.keystore.type", "PKCS12");
        overrides.put("ssl.keystore.location", node.pkcs12().toString());
        overrides.put("ssl.keystore.password", TestCertificates.PASSWORD);
        overrides.put("ssl.truststore.type", "PKCS12");
        overrides.put("ssl.truststore.location", certificates.trustStorePkcs12("ca").toString());
        overrides.put("ssl.truststore.password", TestCertificates.PASSWORD);
        overrides.put("ssl.client.auth", "required");
        overrides.put("offsets.topic.replication.factor", "3");
        overrides.put("min.insync.replicas", "2");
        try (InProcessCluster cluster = InProcessCluster.start(dir.resolve("nodes"), 3, overrides)) {
            Properties client = new Properties();
            client.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
            client.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SSL");
            client.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
            client.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, certificates.caCertificate("ca").toString());
            client.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PEM");
            client.put(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, node.pemStore().toString());
            try (Admin admin = Admin.create(client)) {
                assertThat(admin.describeCluster().nodes().get(60, TimeUnit.SECONDS)).hasSize(3);
                admin.createTopics(List.of(new NewTopic("replicated", 3, (short) 3))).all().get(60, TimeUnit.SECONDS);
                Properties producerProperties = new Properties();
                producerProperties.putAll(client);
                producerProperties.put(ProducerConfig.ACKS_CONFIG, "all");
                try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties, new StringSerializer(), new StringSerializer())) {
                    for (int i = 0; i < 300; i++) {
                        producer.send(new ProducerRecord<>("replicated", i % 3, "k" + i, "v" + i)).get(60, TimeUnit.SECONDS);
                    }
                }
                // Every replica caught up over TLS: each partition's ISR holds all three nodes.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                boolean allInSync = false;
                while (!allInSync && System.nanoTime() < deadline) {
                    TopicDescription description = admin.describeTopics(List.of("replicated")).allTopicNames().get(30, TimeUnit.SECONDS).get("replicated");
                    allInSync = description.partitions().stream().allMatch(partition -> partition.isr().size() == 3);
                }
                assertThat(allInSync).as("all replicas in sync").isTrue();
            }
        }
    }
}
