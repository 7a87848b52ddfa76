package io.strata.server.config;

import io.strata.common.Time;
import io.strata.common.config.ConfigException;
import io.strata.server.StrataServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every listener gets its security protocol or the start stops with a message naming the
 * listener or key: never plaintext where the operator asked for TLS or SASL, never a security
 * setting silently ignored. PLAINTEXT and SSL are served; SASL is refused until it lands.
 */
class ListenerSecurityTest {
    @TempDir
    Path dataDir;

    private static Map<String, String> plaintext() {
        Map<String, String> properties = new HashMap<>();
        properties.put("listeners", "PLAINTEXT://127.0.0.1:0");
        properties.put("metrics.enabled", "false");
        return properties;
    }

    private static Map<String, String> with(String... keysAndValues) {
        Map<String, String> properties = plaintext();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            properties.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return properties;
    }

    private static void assertRefused(Map<String, String> properties, String... named) {
        assertThatThrownBy(() -> ServerConfig.fromMap(properties)).as("%s", properties).isInstanceOf(ConfigException.class)
            .hasMessageContaining("not implemented").satisfies(e -> {
                for (String name : named) {
                    assertThat(e.getMessage()).contains(name);
                }
            });
    }

    /** A cluster node (controller.quorum.voters set) with a PLAINTEXT controller listener. */
    private static Map<String, String> clusterNode(String... keysAndValues) {
        Map<String, String> properties = with("process.roles", "broker,controller", "node.id", "1",
            "controller.quorum.voters", "1@127.0.0.1:19093", "controller.listener.names", "CONTROLLER");
        for (int i = 0; i < keysAndValues.length; i += 2) {
            properties.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return properties;
    }

    @Test
    void aSaslListenerStopsTheStartUntilSaslIsImplemented() {
        for (String protocol : new String[] {"SASL_PLAINTEXT", "SASL_SSL"}) {
            // By name (Kafka's default map gives each protocol name its own protocol) ...
            assertRefused(with("listeners", protocol + "://127.0.0.1:0"), protocol + "://127.0.0.1:0", protocol);
            // ... through listener.security.protocol.map ...
            assertRefused(with("listeners", "CLIENT://127.0.0.1:0", "listener.security.protocol.map", "CLIENT:" + protocol),
                "CLIENT", protocol);
            // ... and in lower case, as Kafka normalises listener names and protocols.
            assertRefused(with("listeners", "client://127.0.0.1:0", "listener.security.protocol.map", "client:" + protocol.toLowerCase()),
                "CLIENT", protocol);
            // Only advertised: still a client would be told to use it.
            assertRefused(with("listeners", "PLAINTEXT://127.0.0.1:0,SECURE://127.0.0.1:0", "advertised.listeners",
                "PLAINTEXT://127.0.0.1:9092,SECURE://127.0.0.1:9093", "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SECURE:" + protocol),
                "SECURE", protocol);
            assertRefused(with("security.inter.broker.protocol", protocol), "security.inter.broker.protocol", protocol);
        }
        assertRefused(with("listeners", "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0", "listener.security.protocol.map",
            "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_SSL", "inter.broker.listener.name", "INTERNAL"), "INTERNAL", "SASL_SSL");
    }

    @Test
    void sslListenersAndTheirKeysAreAccepted() {
        ServerConfig byName = ServerConfig.fromMap(with("listeners", "SSL://127.0.0.1:0", "ssl.keystore.location", "/k.p12",
            "ssl.client.auth", "required", "listener.name.ssl.ssl.enabled.protocols", "TLSv1.3"));
        assertThat(byName.securityProtocol("SSL")).isEqualTo("SSL");
        ServerConfig mapped = ServerConfig.fromMap(with("listeners", "PLAINTEXT://127.0.0.1:0,secure://127.0.0.1:0",
            "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SECURE:ssl", "security.inter.broker.protocol", "SSL"));
        assertThat(mapped.securityProtocol("secure")).isEqualTo("SSL");
        assertThat(mapped.securityProtocol("PLAINTEXT")).isEqualTo("PLAINTEXT");
    }

    @Test
    void aListenerWithoutASecurityProtocolOrWithAnUnknownOneIsRefusedAsKafkaRefusesIt() {
        assertThatThrownBy(() -> ServerConfig.fromMap(with("listeners", "CLIENT://127.0.0.1:0")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("No security protocol defined for listener CLIENT")
            .hasMessageContaining("listener.security.protocol.map");
        // Once the map is set, Kafka's defaults no longer apply: an SSL listener missing from it is refused.
        assertThatThrownBy(() -> ServerConfig.fromMap(with("listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
            "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("No security protocol defined for listener SSL");
        assertThatThrownBy(() -> ServerConfig.fromMap(with("listener.security.protocol.map", "PLAINTEXT:TLS")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("listener.security.protocol.map").hasMessageContaining("TLS");
        assertThatThrownBy(() -> ServerConfig.fromMap(with("listener.security.protocol.map", "PLAINTEXT")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("listener.security.protocol.map");
        assertThatThrownBy(() -> ServerConfig.fromMap(with("security.inter.broker.protocol", "TLS")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("security.inter.broker.protocol").hasMessageContaining("unknown");
    }

    @Test
    void aClusterNodeMayUseSslForItsInterBrokerAndControllerListeners() {
        ServerConfig allSsl = ServerConfig.fromMap(clusterNode("listeners", "SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:19093",
            "listener.security.protocol.map", "SSL:SSL,CONTROLLER:SSL"));
        assertThat(allSsl.interBrokerListenerName()).isEqualTo("SSL");
        assertThat(allSsl.securityProtocol("CONTROLLER")).isEqualTo("SSL");
        // security.inter.broker.protocol picks the listener named after it, as in Kafka.
        ServerConfig byProtocol = ServerConfig.fromMap(clusterNode("listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:19093",
            "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SSL:SSL,CONTROLLER:PLAINTEXT", "security.inter.broker.protocol", "SSL"));
        assertThat(byProtocol.interBrokerListenerName()).isEqualTo("SSL");
    }

    @Test
    void everySecurityKeyThatWouldHaveNoEffectStopsTheStartNamingIt() {
        String[] keys = {
            "ssl.engine.factory.class", "ssl.provider", "listener.name.client.ssl.provider",
            "sasl.enabled.mechanisms", "sasl.mechanism.inter.broker.protocol", "sasl.jaas.config", "sasl.kerberos.service.name",
            "listener.name.client.sasl.enabled.mechanisms",
            "listener.name.client.scram-sha-256.sasl.jaas.config", "listener.name.client.connections.max.reauth.ms",
            "listener.name.client.principal.builder.class",
            "principal.builder.class",
            "connections.max.reauth.ms", "delegation.token.secret.key", "delegation.token.max.lifetime.ms", "security.providers",
        };
        for (String key : keys) {
            assertRefused(with(key, "x"), key);
        }
        // All of them at once: one message that names each.
        Map<String, String> all = plaintext();
        for (String key : keys) {
            all.put(key, "x");
        }
        assertRefused(all, keys);
    }

    @Test
    void tieredStorageOnTheBrokerStopsTheStart() {
        assertThatThrownBy(() -> ServerConfig.fromMap(with("remote.log.storage.system.enable", "true")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("remote.log.storage.system.enable").hasMessageContaining("not implemented");
        ServerConfig.fromMap(with("remote.log.storage.system.enable", "false"));
    }

    @Test
    void aPlaintextConfigurationWithKafkasFullDefaultProtocolMapStillStarts() throws Exception {
        Map<String, String> properties = with("log.dirs", dataDir.toString(), "num.io.threads", "2", "num.network.threads", "1",
            "listeners", "PLAINTEXT://127.0.0.1:0,controller://127.0.0.1:0", "controller.listener.names", "CONTROLLER",
            "advertised.listeners", "PLAINTEXT://127.0.0.1:0",
            "listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
            "inter.broker.listener.name", "PLAINTEXT", "security.inter.broker.protocol", "PLAINTEXT");
        try (StrataServer server = new StrataServer(ServerConfig.fromMap(properties), Time.SYSTEM)) {
            server.startup();
            Map<String, Object> client = Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.boundPort());
            try (Admin admin = Admin.create(client)) {
                assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);
            }
        }
    }
}
