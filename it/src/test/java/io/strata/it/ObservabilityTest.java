package io.strata.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.strata.server.metrics.PrometheusText;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The metrics endpoint of a real broker after real clients used it: a producer writes
 * {@value #RECORDS} records one request at a time, a consumer group reads them and commits
 * {@value #COMMITTED}; then scrapes must show exactly that (requests, latency histogram counts,
 * bytes, messages, offsets, lag), the exposition must pass a real Prometheus parser in both
 * formats, and every metric the Grafana dashboard and the alert rules use must exist.
 */
class ObservabilityTest {
    static final int RECORDS = 40;
    static final int COMMITTED = 25;
    static final int VALUE_BYTES = 100;
    static final String TOPIC = "observed";
    static final String GROUP = "observed-group";
    static final long TIMEOUT_MS = 30_000;
    /** The names our dashboards and alerts may use; anything else in an expression is PromQL. */
    private static final Pattern METRIC_NAME = Pattern.compile("\\b((?:kafka|jvm|process|strata)_[a-zA-Z0-9_]+)");

    @TempDir
    static Path dataDir;
    private static StrataTestServer server;
    private static int metricsPort;
    private static long producedValueBytes;
    private static long consumedValueBytes;

    @BeforeAll
    static void produceAndConsume() throws Exception {
        server = new StrataTestServer(dataDir, Map.of("offsets.topic.num.partitions", "3"));
        metricsPort = server.server().metricsPort();
        Properties common = new Properties();
        common.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        try (Admin admin = Admin.create(common)) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
        }
        Properties producerProperties = new Properties();
        producerProperties.putAll(common);
        producerProperties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        producerProperties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        producerProperties.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProperties.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProperties)) {
            for (int i = 0; i < RECORDS; i++) {
                byte[] value = new byte[VALUE_BYTES];
                Arrays.fill(value, (byte) ('a' + i % 26));
                // One record, one Produce request: wait for each before sending the next.
                producer.send(new ProducerRecord<>(TOPIC, value)).get();
                producedValueBytes += value.length;
            }
        }
        Properties consumerProperties = new Properties();
        consumerProperties.putAll(common);
        consumerProperties.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        consumerProperties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumerProperties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        consumerProperties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        consumerProperties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProperties)) {
            consumer.subscribe(List.of(TOPIC));
            int consumed = 0;
            long deadline = System.currentTimeMillis() + TIMEOUT_MS;
            while (consumed < RECORDS) {
                assertThat(System.currentTimeMillis()).as("consumed %d of %d records", consumed, RECORDS).isLessThan(deadline);
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    consumed++;
                    consumedValueBytes += record.value().length;
                }
            }
            // Leave RECORDS - COMMITTED records unconsumed as far as the group knows.
            consumer.commitSync(Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(COMMITTED)));
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void countersMovedByWhatTheClientsDid() throws Exception {
        // The broker records a request when its response is written: wait for the last one.
        PrometheusText scrape = MetricsScrape.awaitScrape(metricsPort, TIMEOUT_MS, RECORDS + " Produce requests",
            text -> text.sum("kafka_network_requestmetrics_requests_total", "request", "Produce") >= RECORDS);
        if (Files.isDirectory(Path.of("target"))) {
            // Kept for whoever debugs a failure (and for reading what a real scrape looks like).
            Files.writeString(Path.of("target/observability-scrape.prom"), MetricsScrape.text(metricsPort));
        }
        assertThat(scrape.sum("kafka_network_requestmetrics_requests_total", "request", "Produce")).isEqualTo(RECORDS);
        for (String stage : List.of("requestqueuetimems", "localtimems", "remotetimems", "responsesendtimems", "totaltimems")) {
            assertThat(scrape.sum("kafka_network_requestmetrics_" + stage + "_count", "request", "Produce")).as(stage).isEqualTo(RECORDS);
            assertThat(scrape.sum("kafka_network_requestmetrics_" + stage + "_bucket", "request", "Produce", "le", "+Inf")).as(stage)
                .isEqualTo(RECORDS);
        }
        assertThat(scrape.sum("kafka_network_requestmetrics_errors_total", "request", "Produce", "error", "NONE")).isEqualTo(RECORDS);
        assertThat(scrape.sum("kafka_network_requestmetrics_requests_total", "request", "FetchConsumer"))
            .isEqualTo(scrape.sum("kafka_network_requestmetrics_requests_total", "request", "Fetch")).isPositive();

        assertThat(scrape.sum("kafka_server_brokertopicmetrics_bytesin_total", "topic", TOPIC)).isGreaterThanOrEqualTo(producedValueBytes);
        assertThat(scrape.sum("kafka_server_brokertopicmetrics_messagesin_total", "topic", TOPIC)).isEqualTo(RECORDS);
        assertThat(scrape.sum("kafka_server_brokertopicmetrics_totalproducerequests_total", "topic", TOPIC)).isEqualTo(RECORDS);
        assertThat(scrape.sum("kafka_server_brokertopicmetrics_failedproducerequests_total", "topic", TOPIC)).isZero();
        assertThat(scrape.sum("kafka_server_brokertopicmetrics_bytesout_total", "topic", TOPIC)).isGreaterThanOrEqualTo(consumedValueBytes);
        assertThat(scrape.sum("kafka_server_brokertopicmetrics_totalfetchrequests_total", "topic", TOPIC)).isPositive();

        assertThat(scrape.sum("kafka_log_log_logendoffset", "topic", TOPIC, "partition", "0")).isEqualTo(RECORDS);
        assertThat(scrape.sum("kafka_log_log_highwatermark", "topic", TOPIC, "partition", "0")).isEqualTo(RECORDS);
        assertThat(scrape.sum("kafka_log_log_logstartoffset", "topic", TOPIC, "partition", "0")).isZero();
        assertThat(scrape.sum("kafka_log_log_numlogsegments", "topic", TOPIC, "partition", "0")).isEqualTo(1);
        assertThat(scrape.sum("kafka_log_log_size", "topic", TOPIC, "partition", "0")).isGreaterThanOrEqualTo(producedValueBytes);
        assertThat(scrape.sum("kafka_server_replicamanager_underreplicatedpartitions")).isZero();
        assertThat(scrape.sum("kafka_controller_kafkacontroller_offlinepartitionscount")).isZero();
        assertThat(scrape.sum("kafka_server_socketservermetrics_connection_creation_total", "listener", "PLAINTEXT")).isPositive();
        assertThat(scrape.sum("kafka_server_kafkaserver_brokerstate")).isEqualTo(3);
        assertThat(scrape.samples("kafka_server_delayedoperationpurgatory_purgatorysize")).extracting(s -> s.label("delayed_operation"))
            .containsExactlyInAnyOrder("Produce", "Fetch");
        assertThat(scrape.sum("process_open_fds")).isPositive();
        assertThat(scrape.sum("jvm_memory_used_bytes", "area", "heap")).isPositive();
    }

    @Test
    void lagIsWhatTheGroupLeftUnconsumed() throws Exception {
        PrometheusText scrape = MetricsScrape.awaitScrape(metricsPort, TIMEOUT_MS, "the group's committed offset",
            text -> text.sum("kafka_consumergroup_current_offset", "consumergroup", GROUP, "topic", TOPIC) == COMMITTED);
        assertThat(scrape.sum("kafka_consumergroup_lag", "consumergroup", GROUP, "topic", TOPIC, "partition", "0")).isEqualTo(RECORDS - COMMITTED);
        assertThat(scrape.sum("kafka_consumergroup_members", "consumergroup", GROUP)).isZero();
        assertThat(scrape.samples("kafka_consumergroup_state", s -> GROUP.equals(s.label("consumergroup"))))
            .singleElement().satisfies(s -> assertThat(s.label("protocol")).isEqualTo("classic"));
        assertThat(scrape.sum("kafka_consumergroup_rebalances_total", "consumergroup", GROUP)).isGreaterThanOrEqualTo(1);
        assertThat(scrape.sum("kafka_coordinator_group_groupmetadatamanager_numgroups")).isGreaterThanOrEqualTo(1);
    }

    @Test
    void replicationMetricsDescribeASingleNodeAsFullyInSync() throws Exception {
        PrometheusText scrape = MetricsScrape.parsed(metricsPort);
        String[] partition = {"topic", TOPIC, "partition", "0"};
        assertThat(scrape.sum("kafka_cluster_partition_underreplicated", partition)).isZero();
        assertThat(scrape.sum("kafka_cluster_partition_underminisr", partition)).isZero();
        // RF 1 with min.insync.replicas 1: the lone replica is exactly at min ISR, as Kafka reports it.
        assertThat(scrape.sum("kafka_cluster_partition_atminisr", partition)).isEqualTo(1);
        assertThat(scrape.sum("kafka_cluster_partition_insyncreplicascount", partition)).isEqualTo(1);
        assertThat(scrape.sum("kafka_cluster_partition_replicascount", partition)).isEqualTo(1);
        double hosted = scrape.sum("kafka_server_replicamanager_partitioncount");
        assertThat(hosted).as("the topic and the offsets topic's partitions").isGreaterThanOrEqualTo(1);
        assertThat(scrape.sum("kafka_server_replicamanager_leadercount")).isEqualTo(hosted);
        assertThat(scrape.sum("kafka_server_replicamanager_atminisrpartitioncount")).isEqualTo(hosted);
        for (String zero : List.of("kafka_server_replicamanager_underminisrpartitioncount", "kafka_server_replicamanager_offlinereplicacount",
            "kafka_server_replicamanager_reassigningpartitions", "kafka_server_replicamanager_isrshrinks_total",
            "kafka_server_replicamanager_isrexpands_total", "kafka_server_replicamanager_failedisrupdates_total",
            "kafka_server_brokertopicmetrics_replicationbytesin_total", "kafka_server_brokertopicmetrics_replicationbytesout_total",
            "kafka_server_replicafetchermanager_maxlag", "kafka_server_replicafetchermanager_failedpartitionscount",
            "kafka_server_replicafetchermanager_deadthreadcount", "kafka_server_leaderreplication_byte_rate",
            "kafka_server_followerreplication_byte_rate", "kafka_server_brokertopicmetrics_reassignmentbytesin_total",
            "kafka_server_brokertopicmetrics_reassignmentbytesout_total", "strata_replication_follower_reads_for_consumers_total",
            "kafka_controller_controllerstats_uncleanleaderelections_total",
            "kafka_controller_controllerstats_electionfromeligibleleaderreplicas_total",
            "kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total",
            "kafka_server_alterlogdirsreplication_byte_rate", "kafka_server_replicaalterlogdirsmanager_maxlag", "strata_log_dir_moves",
            "strata_log_dir_move_failures_total")) {
            assertThat(scrape.samples(zero)).as(zero).singleElement().satisfies(sample -> assertThat(sample.value()).as(zero).isZero());
        }
        // The consumer's incremental fetch sessions: however many it left open, the gauges are there.
        assertThat(scrape.samples("kafka_server_fetchsessioncache_numincrementalfetchsessions")).singleElement()
            .satisfies(sample -> assertThat(sample.value()).isGreaterThanOrEqualTo(0));
        assertThat(scrape.has("kafka_server_fetchsessioncache_numincrementalfetchpartitionscached")).isTrue();
        assertThat(scrape.has("strata_controller_broker_probe_refusals_total")).as("a single node runs no probe of other brokers").isFalse();
    }

    @Test
    void theExpositionPassesPromtool() throws Exception {
        ExternalTools.require("promtool (Debian package prometheus)", ExternalTools.onPath("promtool"));
        String scrape = MetricsScrape.text(metricsPort);
        // check metrics parses the text format and lints it (naming, units, counters' _total, help texts).
        String problems = ExternalTools.run(List.of("promtool", "check", "metrics"), scrape, 60);
        assertThat(problems).as("promtool check metrics").isEmpty();
    }

    @Test
    void theOpenMetricsExpositionPassesThePrometheusPythonParser() throws Exception {
        String python = Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : "python3";
        ExternalTools.require("the Prometheus Python client (Debian package python3-prometheus-client)", hasPythonPrometheusClient(python));
        HttpResponse<String> response = MetricsScrape.get(metricsPort, "/metrics", MetricsScrape.OPENMETRICS_ACCEPT);
        assertThat(response.headers().firstValue("Content-Type"))
            .hasValueSatisfying(type -> assertThat(type).startsWith("application/openmetrics-text"));
        String script = "import sys\n"
            + "from prometheus_client.openmetrics.parser import text_string_to_metric_families\n"
            + "families = list(text_string_to_metric_families(sys.stdin.read()))\n"
            + "print(sum(len(f.samples) for f in families))\n";
        String out = ExternalTools.run(List.of(python, "-c", script), response.body(), 60);
        assertThat(Long.parseLong(out.strip())).isEqualTo(PrometheusText.parse(response.body()).samples().size());
    }

    private static boolean hasPythonPrometheusClient(String python) {
        try {
            ExternalTools.run(List.of(python, "-c", "import prometheus_client.openmetrics.parser"), null, 30);
            return true;
        } catch (Exception | AssertionError e) {
            return false;
        }
    }

    @Test
    void readinessAndLivenessAreGreenOnARunningBroker() throws Exception {
        HttpResponse<String> ready = MetricsScrape.get(metricsPort, "/health/ready", null);
        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
        JsonNode body = new ObjectMapper().readTree(ready.body());
        assertThat(body.get("status").asText()).isEqualTo("ready");
        assertThat(body.get("checks").get("logs").asText()).isEqualTo("ok");
        assertThat(MetricsScrape.get(metricsPort, "/health/live", null).statusCode()).isEqualTo(200);
    }

    @Test
    void everyMetricTheGrafanaDashboardUsesExists() throws Exception {
        Path dashboard = repositoryRoot().resolve("deploy/grafana/strata.json");
        JsonNode json = new ObjectMapper().readTree(Files.readString(dashboard));
        assertThat(json.get("panels").size()).isGreaterThan(5);
        Set<String> used = new TreeSet<>();
        collectQueries(json, used);
        assertThat(used).isNotEmpty();
        assertThat(missingFromScrape(used)).as("metrics the dashboard uses that a scrape lacks").isEmpty();
    }

    @Test
    void theAlertRulesPassPromtoolAndUseExistingMetrics() throws Exception {
        Path rules = repositoryRoot().resolve("deploy/prometheus/alerts.yml");
        Set<String> used = new TreeSet<>();
        Matcher matcher = METRIC_NAME.matcher(Files.readString(rules));
        while (matcher.find()) {
            used.add(matcher.group(1));
        }
        assertThat(used).isNotEmpty();
        assertThat(missingFromScrape(used)).as("metrics the alert rules use that a scrape lacks").isEmpty();
        ExternalTools.require("promtool (Debian package prometheus)", ExternalTools.onPath("promtool"));
        ExternalTools.run(List.of("promtool", "check", "rules", rules.toString()), null, 60);
        // alerts_test.yml: the lag, replication, saturation and disk alerts fire on the series they should.
        ExternalTools.run(List.of("promtool", "test", "rules", rules.resolveSibling("alerts_test.yml").toString()), null, 60);
    }

    private static Set<String> missingFromScrape(Set<String> names) throws Exception {
        // The group has committed offsets by now; wait for them so lag series exist.
        PrometheusText scrape = MetricsScrape.awaitScrape(metricsPort, TIMEOUT_MS, "group lag series",
            text -> text.has("kafka_consumergroup_lag"));
        Set<String> present = scrape.samples().stream().map(PrometheusText.Sample::name).collect(Collectors.toSet());
        return names.stream().filter(name -> !present.contains(name)).collect(Collectors.toCollection(TreeSet::new));
    }

    /** Every metric name in the dashboard's queries ("expr") and template variables ("query", "definition"). */
    private static void collectQueries(JsonNode node, Set<String> names) {
        if (node.isObject()) {
            node.fields().forEachRemaining(field -> {
                if (field.getValue().isTextual() && Set.of("expr", "query", "definition").contains(field.getKey())) {
                    Matcher matcher = METRIC_NAME.matcher(field.getValue().asText());
                    while (matcher.find()) {
                        names.add(matcher.group(1));
                    }
                } else {
                    collectQueries(field.getValue(), names);
                }
            });
        } else if (node.isArray()) {
            node.forEach(child -> collectQueries(child, names));
        }
    }

    static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.exists(dir.resolve("deploy"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new AssertionError("no deploy/ directory above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }
}
