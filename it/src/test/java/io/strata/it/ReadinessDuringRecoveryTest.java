package io.strata.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.strata.common.Time;
import io.strata.server.StrataServer;
import io.strata.server.config.ServerConfig;
import io.strata.server.metrics.PrometheusText;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /health/ready} answers 503 with the reason while a large data directory recovers after
 * an unclean shutdown, and 200 once the broker runs; {@code /health/live} is 200 throughout.
 */
class ReadinessDuringRecoveryTest {
    /** Enough partition logs that recovering them on one thread takes a while on any machine. */
    static final int PARTITIONS = 1500;
    static final long TIMEOUT_MS = 120_000;

    @TempDir
    Path dataDir;

    private Map<String, String> settings(int port) {
        Map<String, String> properties = new HashMap<>();
        properties.put("listeners", "PLAINTEXT://127.0.0.1:" + port);
        properties.put("log.dirs", dataDir.toString());
        properties.put("metrics.listener", "http://127.0.0.1:0");
        properties.put("num.recovery.threads.per.data.dir", "1");
        properties.put("offsets.topic.num.partitions", "1");
        properties.put("transaction.state.log.num.partitions", "1");
        return properties;
    }

    /** A data directory of {@link #PARTITIONS} partitions with a batch each, left as after a crash. */
    private void writeDataDirectoryAndCrash() throws Exception {
        StrataServer server = new StrataServer(ServerConfig.fromMap(settings(0)), Time.SYSTEM);
        try {
            server.startup();
            Properties properties = new Properties();
            properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.boundPort());
            try (Admin admin = Admin.create(properties)) {
                admin.createTopics(List.of(new NewTopic("bulk", PARTITIONS, (short) 1))).all().get(60, TimeUnit.SECONDS);
            }
            properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            properties.put(ProducerConfig.LINGER_MS_CONFIG, "20");
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(properties)) {
                List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
                for (int partition = 0; partition < PARTITIONS; partition++) {
                    sent.add(producer.send(new ProducerRecord<>("bulk", partition, null, new byte[512])));
                }
                for (java.util.concurrent.Future<?> each : sent) {
                    each.get(60, TimeUnit.SECONDS);
                }
            }
        } finally {
            server.close();
        }
        // As after a crash: no clean-shutdown marker and no recovery points, so every segment is recovered.
        Files.delete(dataDir.resolve(".kafka_cleanshutdown"));
        Files.delete(dataDir.resolve("recovery-point-offset-checkpoint"));
    }

    @Test
    void notReadyWithTheReasonWhileLogsRecoverThenReady() throws Exception {
        writeDataDirectoryAndCrash();
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        StrataServer server = new StrataServer(ServerConfig.fromMap(settings(port)), Time.SYSTEM);
        CompletableFuture<Void> startup = CompletableFuture.runAsync(() -> {
            try {
                server.startup();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
            int metricsPort;
            while ((metricsPort = server.metricsPort()) < 0) {
                assertThat(System.nanoTime()).as("metrics endpoint bound").isLessThan(deadline);
                assertThat(startup).isNotCompletedExceptionally();
                LockSupport.parkNanos(1_000_000);
            }
            ObjectMapper json = new ObjectMapper();
            long boundNanos = System.nanoTime();
            int recoveringProbes = 0;
            String recoveringReason = null;
            java.util.Set<String> reasons = new java.util.LinkedHashSet<>();
            double remainingSeen = 0;
            double stateSeen = 0;
            while (true) {
                assertThat(System.nanoTime()).as("ready before the deadline").isLessThan(deadline);
                assertThat(MetricsScrape.get(metricsPort, "/health/live", null).statusCode()).isEqualTo(200);
                HttpResponse<String> ready = MetricsScrape.get(metricsPort, "/health/ready", null);
                JsonNode body = json.readTree(ready.body());
                if (ready.statusCode() == 200) {
                    assertThat(body.get("status").asText()).isEqualTo("ready");
                    assertThat(startup).isCompleted();
                    break;
                }
                assertThat(ready.statusCode()).isEqualTo(503);
                assertThat(body.get("status").asText()).isEqualTo("not ready");
                assertThat(body.get("reason").asText()).isNotBlank();
                String reason = body.get("reason").asText();
                reasons.add(reason.replaceAll("\\d+", "N"));
                if (reason.startsWith("logs: log recovery in progress (unclean shutdown)")) {
                    recoveringProbes++;
                }
                if (reason.startsWith("logs: log recovery in progress (unclean shutdown)") && recoveringReason == null) {
                    recoveringReason = reason;
                    PrometheusText scrape = MetricsScrape.parsed(metricsPort);
                    remainingSeen = scrape.sum("kafka_log_logmanager_remaininglogstorecover");
                    stateSeen = scrape.sum("kafka_server_kafkaserver_brokerstate");
                }
                LockSupport.parkNanos(5_000_000);
            }
            System.out.printf("ready %d ms after the endpoint was bound; %d probes saw log recovery; reasons: %s%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - boundNanos), recoveringProbes, reasons);
            assertThat(recoveringReason).as("a 503 during log recovery; saw %s", reasons).isNotNull().matches(".*: \\d+ partition logs remaining");
            assertThat(remainingSeen).isPositive();
            assertThat(stateSeen).as("broker state while recovering (Kafka's RecoveringFromUncleanShutdown)").isEqualTo(2);
            assertThat(MetricsScrape.parsed(metricsPort).sum("kafka_log_logmanager_remaininglogstorecover")).isZero();
        } finally {
            startup.handle((ok, error) -> null).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            server.close();
        }
    }
}
