package io.strata.tools.client;

import io.strata.common.Time;
import io.strata.protocol.ApiVersionsTable;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.MetadataRequestData;
import io.strata.protocol.message.MetadataResponseData;
import io.strata.server.StrataServer;
import io.strata.server.config.ServerConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Version negotiation and request exchange against a real broker. */
class NegotiationTest {
    @TempDir
    static Path dataDir;
    private static StrataServer server;

    @BeforeAll
    static void startBroker() throws Exception {
        server = new StrataServer(ServerConfig.fromMap(Map.of("listeners", "PLAINTEXT://127.0.0.1:0", "log.dirs", dataDir.toString(),
            "metrics.enabled", "false")), Time.SYSTEM);
        server.startup();
    }

    @AfterAll
    static void stopBroker() {
        server.close();
    }

    private static KafkaConnection open() {
        return KafkaConnection.open(new HostPort("127.0.0.1", server.boundPort()), ClientSettings.defaults("test"), Time.SYSTEM);
    }

    @Test
    void everyApiIsSpokenAtTheHighestVersionBothSidesSupport() {
        try (KafkaConnection connection = open()) {
            for (Map.Entry<ApiMessageType, ClientVersions.Range> entry : ClientVersions.implementedRanges().entrySet()) {
                ApiMessageType api = entry.getKey();
                ApiVersionsTable.Range broker = StrataServer.apiVersions().range(api);
                if (broker == null) {
                    assertThat(connection.versions().supports(api)).as(api.apiName).isFalse();
                    continue;
                }
                short expected = (short) Math.min(entry.getValue().max(), broker.max());
                assertThat(connection.versions().version(api)).as(api.apiName).isEqualTo(expected);
            }
        }
    }

    @Test
    void apiVersionsFallsBackWhenTheBrokerKnowsOnlyOlderVersions() {
        short ours = ClientVersions.implemented(ApiMessageType.API_VERSIONS).max();
        short brokers = StrataServer.apiVersions().range(ApiMessageType.API_VERSIONS).max();
        try (KafkaConnection connection = open()) {
            assertThat(connection.versions().version(ApiMessageType.API_VERSIONS)).isEqualTo((short) Math.min(ours, brokers));
        }
    }

    @Test
    void consecutiveRequestsOnOneConnectionMatchTheirResponses() {
        try (KafkaConnection connection = open()) {
            for (int i = 0; i < 5; i++) {
                MetadataResponseData response = connection.send(new MetadataRequestData().setTopics(new ArrayList<>(List.of())),
                    MetadataResponseData.class);
                assertThat(response.brokers()).hasSize(1);
                assertThat(response.clusterId()).isEqualTo(server.clusterId());
            }
            assertThat(connection.isOpen()).isTrue();
        }
    }

    @Test
    void clusterClientReusesTheBootstrapConnectionForTheSameBroker() {
        try (ClusterClient client = ClusterClient.connect(List.of(new HostPort("127.0.0.1", server.boundPort())),
            ClientSettings.defaults("test"), Time.SYSTEM)) {
            int nodeId = client.brokers().keySet().iterator().next();
            assertThat(client.connection(nodeId)).isSameAs(client.anyConnection());
            assertThat(client.clusterId()).isEqualTo(server.clusterId());
        }
    }

    @Test
    void clusterClientTriesEveryBootstrapAddress() throws Exception {
        int closedPort;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closedPort = probe.getLocalPort();
        }
        try (ClusterClient client = ClusterClient.connect(
            List.of(new HostPort("127.0.0.1", closedPort), new HostPort("127.0.0.1", server.boundPort())),
            ClientSettings.defaults("test"), Time.SYSTEM)) {
            assertThat(client.brokers()).hasSize(1);
        }
    }
}
