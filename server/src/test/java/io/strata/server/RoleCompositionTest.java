package io.strata.server;

import io.strata.common.Time;
import io.strata.metadata.BrokerRegistration;
import io.strata.protocol.Uuids;
import io.strata.server.config.ServerConfig;
import io.strata.server.metrics.ExpositionFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A node is composed by role: a controller-only node has no broker part (no replicas,
 * coordinators or purgatories, and its scrape has no broker families), a broker-only node has no
 * controller, and the shared part's start-up phases run only in order.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RoleCompositionTest {
    private static final long TIMEOUT_MS = 30_000;

    @Test
    void aControllerOnlyNodeHasNoBrokerPartAndABrokerOnlyNodeNoController(@TempDir Path dir) throws Exception {
        int controllerPort = freePort();
        String voters = "1@127.0.0.1:" + controllerPort;
        String clusterId = Uuids.toBase64(new UUID(0x1234_5678L, 0x9abc_def0L));
        Map<String, String> controllerConfig = common(dir.resolve("controller"), voters, clusterId);
        controllerConfig.put("node.id", "1");
        controllerConfig.put("process.roles", "controller");
        controllerConfig.put("listeners", "CONTROLLER://127.0.0.1:" + controllerPort);
        Map<String, String> brokerConfig = common(dir.resolve("broker"), voters, clusterId);
        brokerConfig.put("node.id", "2");
        brokerConfig.put("process.roles", "broker");
        brokerConfig.put("listeners", "PLAINTEXT://127.0.0.1:0");
        brokerConfig.put("advertised.listeners", "PLAINTEXT://127.0.0.1:0");
        brokerConfig.put("inter.broker.listener.name", "PLAINTEXT");

        try (StrataServer controller = new StrataServer(ServerConfig.fromMap(controllerConfig), Time.SYSTEM);
             StrataServer broker = new StrataServer(ServerConfig.fromMap(brokerConfig), Time.SYSTEM)) {
            controller.startup();
            assertThat(controller.isStarted()).isTrue();
            InProcessCluster.awaitCondition(controller::isMetadataLoaded, TIMEOUT_MS, "the controller to apply what its quorum committed");
            assertThat(controller.controller()).isNotNull();
            assertThat(controller.quorum()).isNotNull();
            assertThat(controller.replicaManager()).isNull();
            assertThat(controller.groupCoordinator()).isNull();
            assertThat(controller.transactionCoordinator()).isNull();
            assertThat(controller.producePurgatory()).isNull();
            assertThat(controller.fetchPurgatory()).isNull();
            assertThat(controller.dynamicConfigFailures()).isZero();
            assertThat(controller.boundPort()).isEqualTo(controllerPort);

            broker.startup();
            assertThat(broker.isStarted()).isTrue();
            assertThat(broker.controller()).isNull();
            assertThat(broker.replicaManager()).isNotNull();
            assertThat(broker.groupCoordinator()).isNotNull();
            assertThat(broker.transactionCoordinator()).isNotNull();
            assertThat(broker.producePurgatory()).isNotNull();
            assertThat(broker.clusterId()).isEqualTo(controller.clusterId()).isEqualTo(clusterId);
            BrokerRegistration registration = broker.metadata().image().brokers().get(2);
            assertThat(registration).isNotNull();
            assertThat(registration.fenced()).isFalse();
            InProcessCluster.awaitCondition(() -> {
                BrokerRegistration seen = controller.metadata().image().brokers().get(2);
                return seen != null && !seen.fenced();
            }, TIMEOUT_MS, "the controller's image to show broker 2 unfenced");

            // A controller-only node is ready without partition logs or coordinators; the broker waits for its own.
            assertThat(httpGet(controller.metrics().port(), "/health/ready")).startsWith("200 ").contains("\"status\":\"ready\"")
                .doesNotContain("coordinators");
            InProcessCluster.awaitCondition(() -> httpGet(broker.metrics().port(), "/health/ready").startsWith("200 "), TIMEOUT_MS,
                "the broker to be ready");
            assertThat(httpGet(broker.metrics().port(), "/health/ready")).contains("\"coordinators\":\"ok\"");

            String controllerScrape = controller.metrics().scrape(ExpositionFormat.PROMETHEUS_TEXT);
            assertThat(controllerScrape).contains("kafka_server_kafkaserver_brokerstate 3")
                .contains("kafka_controller_kafkacontroller_globaltopiccount")
                .contains("kafka_network_requestchannel_requestqueuesize")
                .doesNotContain("kafka_server_replicamanager_partitioncount")
                .doesNotContain("kafka_coordinator_group_groupmetadatamanager_numgroups");
            String brokerScrape = broker.metrics().scrape(ExpositionFormat.PROMETHEUS_TEXT);
            assertThat(brokerScrape).contains("kafka_server_kafkaserver_brokerstate 3")
                .contains("kafka_server_replicamanager_partitioncount 0")
                .contains("kafka_server_delayedoperationpurgatory_numdelayedoperations{delayed_operation=\"Produce\"}")
                .contains("kafka_network_requestchannel_requestqueuesize");

            // The broker first (its controlled shutdown needs the controller), then the controller.
            broker.close();
            assertThat(broker.isShuttingDown()).isTrue();
            assertThat(broker.isStarted()).isFalse();
            assertThat(broker.metrics().scrape(ExpositionFormat.PROMETHEUS_TEXT)).contains("kafka_server_kafkaserver_brokerstate 7");
            // KIP-966: the clean-shutdown marker records the epoch the broker ran with, for its next registration.
            assertThat(java.nio.file.Files.readString(dir.resolve("broker").resolve(io.strata.storage.LogManager.CLEAN_SHUTDOWN_FILE)))
                .isEqualTo("{\"version\":0,\"brokerEpoch\":" + registration.epoch() + "}");
            controller.close();
            assertThat(controller.isShuttingDown()).isTrue();
            // A controller-only node loads no partition logs, yet its metadata log's directory is marked clean.
            assertThat(dir.resolve("controller").resolve(io.strata.storage.LogManager.CLEAN_SHUTDOWN_FILE)).exists();
        }
    }

    @Test
    void theSharedPartRefusesAStartUpPhaseOutOfOrder(@TempDir Path dir) {
        SharedServer shared = new SharedServer(ServerConfig.fromMap(Map.of("log.dirs", dir.toString())), Time.SYSTEM);
        assertThatThrownBy(shared::openMetadataLog).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("METADATA_LOG").hasMessageContaining("from NEW").hasMessageContaining("expected METRICS");
        assertThatThrownBy(() -> shared.startQuorum(null)).isInstanceOf(IllegalStateException.class).hasMessageContaining("expected METADATA_LOG");
        assertThatThrownBy(shared::startNetwork).isInstanceOf(IllegalStateException.class).hasMessageContaining("expected QUORUM");
        // Nothing was created, so every shutdown step is a no-op.
        shared.closeClients();
        shared.closeMetrics();
        assertThat(shared.logManager()).isNull();
        assertThat(shared.quorum()).isNull();
    }

    private static Map<String, String> common(Path logDir, String voters, String clusterId) {
        Map<String, String> config = new HashMap<>();
        config.put("controller.listener.names", "CONTROLLER");
        config.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        config.put("controller.quorum.voters", voters);
        config.put("cluster.id", clusterId);
        config.put("log.dirs", logDir.toString());
        config.put("metrics.listener", "http://127.0.0.1:0");
        config.put("num.io.threads", "2");
        config.put("num.network.threads", "1");
        config.put("offsets.topic.num.partitions", "2");
        config.put("offsets.topic.replication.factor", "1");
        config.put("transaction.state.log.num.partitions", "2");
        config.put("transaction.state.log.replication.factor", "1");
        config.put("transaction.state.log.min.isr", "1");
        return config;
    }

    /** "STATUS BODY" of a GET to the metrics endpoint. */
    private static String httpGet(int port, String path) {
        try {
            java.net.HttpURLConnection connection = (java.net.HttpURLConnection) new java.net.URL("http://127.0.0.1:" + port + path).openConnection();
            connection.setConnectTimeout(5_000);
            connection.setReadTimeout(5_000);
            int status = connection.getResponseCode();
            java.io.InputStream body = status < 400 ? connection.getInputStream() : connection.getErrorStream();
            try (body) {
                return status + " " + new String(body.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return socket.getLocalPort();
        }
    }
}
