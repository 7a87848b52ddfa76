package io.strata.server;

import io.strata.server.metrics.PrometheusText;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The replication metrics on the metrics endpoints of three in-process nodes: while an RF=3 topic
 * replicates, followers count replication bytes in, leaders replication bytes out, and the fetcher
 * metrics are there; once a node stops and is fenced, the survivors' leaders report every partition
 * of the topic under-replicated and at min ISR (2 of 3 in sync, min.insync.replicas 2).
 */
class ReplicationMetricsInProcessTest {
    private static final String TOPIC = "watched";
    private static final int PARTITIONS = 3;
    private static final Map<String, String> FAST_FENCING = Map.of("broker.session.timeout.ms", "3000", "broker.heartbeat.interval.ms", "500",
        "replica.fetch.wait.max.ms", "100");
    private static final long TIMEOUT_MS = 30_000;

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void survivorsReportUnderReplicatedPartitionsAfterANodeStops() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(dir, 3, FAST_FENCING)) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 3).configs(Map.of("min.insync.replicas", "2"))))
                    .all().get(30, TimeUnit.SECONDS);
            }
            cluster.awaitLeaders(TOPIC, PARTITIONS, TIMEOUT_MS);
            produce(cluster, 300);

            List<Integer> all = List.of(1, 2, 3);
            awaitScrapes(cluster, all, "replication bytes in on the followers and out on the leaders",
                scrapes -> sum(scrapes, "kafka_server_brokertopicmetrics_replicationbytesin_total") > 0
                    && sum(scrapes, "kafka_server_brokertopicmetrics_replicationbytesout_total") > 0);
            for (int node : all) {
                PrometheusText scrape = scrape(cluster, node);
                assertThat(scrape.has("kafka_server_replicafetchermanager_maxlag")).as("fetcher max lag on node %d", node).isTrue();
                assertThat(scrape.sum("kafka_server_replicafetchermanager_deadthreadcount")).as("dead fetchers on node %d", node).isZero();
                assertThat(scrape.sum("kafka_server_replicamanager_underreplicatedpartitions")).as("node %d before the stop", node).isZero();
            }

            cluster.server(3).close();
            List<Integer> survivors = List.of(1, 2);
            List<PrometheusText> scrapes = awaitScrapes(cluster, survivors, "every partition of " + TOPIC + " under-replicated on its leader",
                current -> sum(current, "kafka_cluster_partition_underreplicated", "topic", TOPIC) == PARTITIONS);
            assertThat(sum(scrapes, "kafka_cluster_partition_atminisr", "topic", TOPIC)).isEqualTo(PARTITIONS);
            assertThat(sum(scrapes, "kafka_cluster_partition_underminisr", "topic", TOPIC)).isZero();
            assertThat(sum(scrapes, "kafka_cluster_partition_insyncreplicascount", "topic", TOPIC)).isEqualTo(2 * PARTITIONS);
            assertThat(sum(scrapes, "kafka_cluster_partition_replicascount", "topic", TOPIC)).isEqualTo(3 * PARTITIONS);
            assertThat(sum(scrapes, "kafka_server_replicamanager_underreplicatedpartitions")).isGreaterThanOrEqualTo(PARTITIONS);
            assertThat(sum(scrapes, "kafka_server_replicamanager_atminisrpartitioncount")).isGreaterThanOrEqualTo(PARTITIONS);
            for (PrometheusText scrape : scrapes) {
                assertThat(scrape.has("kafka_server_replicafetchermanager_maxlag")).isTrue();
                assertThat(scrape.has("kafka_server_replicafetchermanager_failedpartitionscount")).isTrue();
            }
        }
    }

    @Test
    void aReassignmentCountsItsBytesOnTheLeaderAndTheAddingReplica() throws Exception {
        String moved = "moved";
        org.apache.kafka.common.TopicPartition partition = new org.apache.kafka.common.TopicPartition(moved, 0);
        try (InProcessCluster cluster = InProcessCluster.start(dir, 3, FAST_FENCING);
             Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()))) {
            admin.createTopics(List.of(new NewTopic(moved, Map.of(0, List.of(1))))).all().get(30, TimeUnit.SECONDS);
            cluster.awaitLeaders(moved, 1, TIMEOUT_MS);
            produce(cluster, moved, 1, 300);
            List<Integer> all = List.of(1, 2, 3);
            for (int node : all) {
                PrometheusText scrape = scrape(cluster, node);
                assertThat(scrape.sum("kafka_server_brokertopicmetrics_reassignmentbytesin_total")).as("node %d before", node).isZero();
                assertThat(scrape.sum("kafka_server_brokertopicmetrics_reassignmentbytesout_total")).as("node %d before", node).isZero();
                assertThat(scrape.has("kafka_controller_controllerstats_uncleanleaderelections_total")).as("node %d", node).isTrue();
                assertThat(scrape.has("kafka_controller_controllerstats_electionfromeligibleleaderreplicas_total")).as("node %d", node).isTrue();
                assertThat(scrape.has("strata_controller_broker_probe_refusals_total")).as("the probe runs on node %d", node).isTrue();
                assertThat(scrape.has("kafka_server_fetchsessioncache_numincrementalfetchsessions")).as("node %d", node).isTrue();
            }

            admin.alterPartitionReassignments(Map.of(partition,
                java.util.Optional.of(new org.apache.kafka.clients.admin.NewPartitionReassignment(List.of(1, 2))))).all().get(30, TimeUnit.SECONDS);
            List<PrometheusText> scrapes = awaitScrapes(cluster, all, "the reassignment's bytes counted out on node 1 and in on node 2",
                current -> current.get(0).sum("kafka_server_brokertopicmetrics_reassignmentbytesout_total") > 0
                    && current.get(1).sum("kafka_server_brokertopicmetrics_reassignmentbytesin_total") > 0);
            PrometheusText leader = scrapes.get(0);
            PrometheusText adding = scrapes.get(1);
            assertThat(leader.sum("kafka_server_brokertopicmetrics_reassignmentbytesout_total"))
                .as("reassignment bytes are part of the replication bytes").isLessThanOrEqualTo(leader.sum("kafka_server_brokertopicmetrics_replicationbytesout_total"));
            assertThat(adding.sum("kafka_server_brokertopicmetrics_reassignmentbytesin_total"))
                .isLessThanOrEqualTo(adding.sum("kafka_server_brokertopicmetrics_replicationbytesin_total"));
            assertThat(scrapes.get(2).sum("kafka_server_brokertopicmetrics_reassignmentbytesin_total")).as("node 3 takes no part").isZero();
            // The adding replica's fetcher holds an incremental fetch session on the leader.
            assertThat(leader.sum("kafka_server_fetchsessioncache_numincrementalfetchsessions")).isGreaterThanOrEqualTo(1);
            assertThat(leader.sum("kafka_server_fetchsessioncache_numincrementalfetchpartitionscached")).isGreaterThanOrEqualTo(1);
            assertThat(sum(scrapes, "kafka_controller_controllerstats_uncleanleaderelections_total")).isZero();
        }
    }

    private static void produce(InProcessCluster cluster, int records) throws Exception {
        produce(cluster, TOPIC, PARTITIONS, records);
    }

    private static void produce(InProcessCluster cluster, String topic, int partitions, int records) throws Exception {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, i % partitions, null, "value-" + i)));
            }
            for (Future<RecordMetadata> future : sent) {
                future.get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Scrapes {@code nodes} until {@code condition} holds over the scrapes, or fails after {@link #TIMEOUT_MS}. */
    private List<PrometheusText> awaitScrapes(InProcessCluster cluster, List<Integer> nodes, String what,
                                              java.util.function.Predicate<List<PrometheusText>> condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (true) {
            List<PrometheusText> scrapes = new ArrayList<>();
            for (int node : nodes) {
                scrapes.add(scrape(cluster, node));
            }
            if (condition.test(scrapes)) {
                return scrapes;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + TIMEOUT_MS + " ms waiting for " + what);
            }
            Thread.sleep(100);
        }
    }

    private PrometheusText scrape(InProcessCluster cluster, int node) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cluster.server(node).metricsPort() + "/metrics"))
            .timeout(Duration.ofSeconds(10)).GET().build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("scrape of node %d", node).isEqualTo(200);
        return PrometheusText.parse(response.body());
    }

    private static double sum(List<PrometheusText> scrapes, String name, String... labels) {
        double total = 0;
        for (PrometheusText scrape : scrapes) {
            total += scrape.sum(name, labels);
        }
        return total;
    }
}
