package io.strata.server.config;

import io.strata.common.config.ConfigException;
import io.strata.raft.RaftConfig;
import io.strata.server.config.ServerConfig.Endpoint;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ServerConfigClusterTest {
    private static final String VOTERS = "1@127.0.0.1:9093,2@127.0.0.1:9094,3@127.0.0.1:9095";

    /** Node 1 of a three-node combined cluster, as {@code strata cluster} writes it. */
    private static Map<String, String> combined() {
        Map<String, String> properties = new HashMap<>();
        properties.put("node.id", "1");
        properties.put("process.roles", "broker,controller");
        properties.put("listeners", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093");
        properties.put("advertised.listeners", "PLAINTEXT://127.0.0.1:9092");
        properties.put("controller.listener.names", "CONTROLLER");
        properties.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        properties.put("controller.quorum.voters", VOTERS);
        return properties;
    }

    private static Map<String, String> controllerOnly() {
        Map<String, String> properties = combined();
        properties.put("process.roles", "controller");
        properties.put("listeners", "CONTROLLER://127.0.0.1:9093");
        properties.remove("advertised.listeners");
        return properties;
    }

    private static Map<String, String> brokerOnly() {
        Map<String, String> properties = combined();
        properties.put("node.id", "4");
        properties.put("process.roles", "broker");
        properties.put("listeners", "PLAINTEXT://127.0.0.1:9092");
        return properties;
    }

    private static Map<String, String> with(Map<String, String> properties, String key, String value) {
        Map<String, String> copy = new HashMap<>(properties);
        if (value == null) {
            copy.remove(key);
        } else {
            copy.put(key, value);
        }
        return copy;
    }

    private static void assertRefused(Map<String, String> properties, String... messageParts) {
        var assertion = assertThatThrownBy(() -> ServerConfig.fromMap(properties)).isInstanceOf(ConfigException.class);
        for (String part : messageParts) {
            assertion.hasMessageContaining(part);
        }
    }

    // ---------------------------------------------------------------- defaults and the zero-config node

    @Test
    void zeroConfigNodeIsTheStandaloneDefaultAndNeedsNoControllerListener() {
        ServerConfig config = ServerConfig.fromMap(Map.of());
        assertThat(config.isStandaloneDefault()).isTrue();
        assertThat(config.quorumVoters()).isEmpty();
        assertThat(config.quorumBootstrapServers()).isEmpty();
        assertThat(config.processRoles()).containsExactly("broker", "controller");
        assertThat(config.isBroker()).isTrue();
        assertThat(config.isController()).isTrue();
        assertThat(config.controllerListenerNames()).isEmpty();
        assertThat(config.controllerEndpoint()).isNull();
        assertThat(config.interBrokerListenerName()).isEqualTo("PLAINTEXT");
        assertThat(config.metadataLogDir()).isEqualTo(Path.of("./data"));
    }

    @Test
    void rulesDoNotApplyToTheStandaloneDefaultEvenWithOddRoles() {
        // Today's single node starts with any roles and no controller listener, as before the quorum keys.
        assertThat(ServerConfig.fromMap(Map.of("process.roles", "broker")).isStandaloneDefault()).isTrue();
        assertThat(ServerConfig.fromMap(Map.of("process.roles", "")).processRoles()).isEmpty();
    }

    @Test
    void quorumKeysHaveKafkasDefaults() {
        ServerConfig config = ServerConfig.fromMap(Map.of());
        assertThat(config.getInt("controller.quorum.election.timeout.ms")).isEqualTo(1000);
        assertThat(config.getInt("controller.quorum.fetch.timeout.ms")).isEqualTo(2000);
        assertThat(config.getInt("controller.quorum.election.backoff.max.ms")).isEqualTo(1000);
        assertThat(config.getInt("controller.quorum.request.timeout.ms")).isEqualTo(2000);
        assertThat(config.getInt("controller.quorum.retry.backoff.ms")).isEqualTo(20);
        assertThat(config.getInt("controller.quorum.append.linger.ms")).isEqualTo(25);
        assertThat(config.getInt("broker.session.timeout.ms")).isEqualTo(9000);
        assertThat(config.getInt("broker.heartbeat.interval.ms")).isEqualTo(2000);
        assertThat(config.getLong("metadata.log.max.record.bytes.between.snapshots")).isEqualTo(20_971_520L);
        assertThat(config.getLong("metadata.log.max.snapshot.interval.ms")).isEqualTo(3_600_000L);
        assertThat(config.getInt("metadata.max.idle.interval.ms")).isEqualTo(500);
        assertThat(config.getString("metadata.log.dir")).isNull();
        assertThat(config.getInt("metadata.log.segment.bytes")).isEqualTo(1_073_741_824);
        assertThat(config.getInt("initial.broker.registration.timeout.ms")).isEqualTo(60_000);
        assertThat(config.getBoolean("controlled.shutdown.enable")).isTrue();
        assertThat(config.unknownKeys()).isEmpty();
    }

    @Test
    void raftConfigCarriesTheQuorumTimings() {
        RaftConfig defaults = ServerConfig.fromMap(Map.of()).raftConfig();
        assertThat(defaults).isEqualTo(RaftConfig.DEFAULTS);
        RaftConfig tuned = ServerConfig.fromMap(Map.of("controller.quorum.election.timeout.ms", "300",
            "controller.quorum.election.backoff.max.ms", "200", "controller.quorum.fetch.timeout.ms", "600",
            "controller.quorum.request.timeout.ms", "700", "controller.quorum.retry.backoff.ms", "5")).raftConfig();
        assertThat(tuned).isEqualTo(new RaftConfig(300, 200, 600, 700, 5, RaftConfig.DEFAULTS.fetchMaxBytes(),
            RaftConfig.DEFAULTS.fetchSnapshotMaxBytes()));
    }

    @Test
    void quorumTimingsMustBePositive() {
        assertRefused(Map.of("controller.quorum.election.timeout.ms", "0"), "controller.quorum.election.timeout.ms", "at least 1");
        assertRefused(Map.of("controller.quorum.fetch.timeout.ms", "-1"), "controller.quorum.fetch.timeout.ms");
        assertRefused(Map.of("controller.quorum.retry.backoff.ms", "soon"), "controller.quorum.retry.backoff.ms");
        assertThat(ServerConfig.fromMap(Map.of("controller.quorum.append.linger.ms", "0")).getInt("controller.quorum.append.linger.ms")).isZero();
        assertRefused(Map.of("metadata.log.segment.bytes", "1024"), "metadata.log.segment.bytes");
    }

    @Test
    void metadataLogDirDefaultsToTheFirstLogDir() {
        assertThat(ServerConfig.fromMap(Map.of("log.dirs", "/a,/b")).metadataLogDir()).isEqualTo(Path.of("/a"));
        assertThat(ServerConfig.fromMap(Map.of("log.dirs", "/a,/b", "metadata.log.dir", "/meta")).metadataLogDir()).isEqualTo(Path.of("/meta"));
    }

    @Test
    void aSeparateMetadataLogDirIsFormattedAsWellAndOneOfTheLogDirsIsNotTwice() {
        assertThat(ServerConfig.fromMap(Map.of("log.dirs", "/a,/b")).formattedDirectories()).containsExactly(Path.of("/a"), Path.of("/b"));
        assertThat(ServerConfig.fromMap(Map.of("log.dirs", "/a,/b", "metadata.log.dir", "/b/")).formattedDirectories())
            .containsExactly(Path.of("/a"), Path.of("/b"));
        assertThat(ServerConfig.fromMap(Map.of("log.dirs", "/a,/b", "metadata.log.dir", "/meta")).formattedDirectories())
            .containsExactly(Path.of("/a"), Path.of("/b"), Path.of("/meta"));
    }

    @Test
    void theMetadataLogTakesItsSegmentSettingsAndKeepsEverything() {
        assertThat(ServerConfig.fromMap(Map.of()).metadataLogOverrides()).containsEntry("segment.bytes", "1073741824")
            .containsEntry("segment.ms", "604800000").containsEntry("retention.ms", "-1").containsEntry("retention.bytes", "-1");
        assertThat(ServerConfig.fromMap(Map.of("metadata.log.segment.bytes", "8388608", "metadata.log.segment.ms", "60000")).metadataLogOverrides())
            .containsEntry("segment.bytes", "8388608").containsEntry("segment.ms", "60000");
        assertRefused(Map.of("metadata.log.segment.ms", "0"), "metadata.log.segment.ms");
        assertThat(ServerConfig.fromMap(Map.of()).getInt("metadata.max.idle.interval.ms")).isEqualTo(500);
        assertRefused(Map.of("metadata.max.idle.interval.ms", "-1"), "metadata.max.idle.interval.ms");
    }

    // ---------------------------------------------------------------- parsing

    @Test
    void votersParseInOrderIncludingBracketedIpv6() {
        ServerConfig config = ServerConfig.fromMap(with(combined(), "controller.quorum.voters", "1@127.0.0.1:9093, 2@[::1]:9094,3@node-3:9095"));
        assertThat(config.quorumVoters()).containsExactly(new QuorumVoter(1, "127.0.0.1", 9093), new QuorumVoter(2, "::1", 9094),
            new QuorumVoter(3, "node-3", 9095));
        assertThat(config.quorumVoters().get(1)).hasToString("2@[::1]:9094");
        assertThat(config.isStandaloneDefault()).isFalse();
    }

    @Test
    void badVoterEntriesNameTheKeyAndTheEntry() {
        for (String bad : new String[] {"x", "1@", "@host:9093", "one@host:9093", "1@host", "1@host:", "1@host:port", "1@::1:9093"}) {
            assertRefused(with(combined(), "controller.quorum.voters", bad), "controller.quorum.voters: expected id@host:port, got '" + bad + "'");
        }
        assertRefused(with(combined(), "controller.quorum.voters", "1@127.0.0.1:9093,x"), "controller.quorum.voters: expected id@host:port, got 'x'");
        assertRefused(with(combined(), "controller.quorum.voters", "1@host:70000"), "controller.quorum.voters", "between 0 and 65535", "host:70000");
        assertRefused(with(combined(), "controller.quorum.voters", "-1@host:9093"), "controller.quorum.voters", "must not be negative");
        assertRefused(with(combined(), "controller.quorum.voters", "1@a:9093,1@b:9094"), "controller.quorum.voters: voter id 1 appears more than once");
    }

    @Test
    void bootstrapServersParseAndBadOnesNameTheEntry() {
        Map<String, String> properties = with(combined(), "controller.quorum.voters", null);
        properties.put("controller.quorum.bootstrap.servers", "127.0.0.1:9093,[::1]:9094");
        ServerConfig config = ServerConfig.fromMap(properties);
        assertThat(config.quorumBootstrapServers()).containsExactly(InetSocketAddress.createUnresolved("127.0.0.1", 9093),
            InetSocketAddress.createUnresolved("::1", 9094));
        assertThat(config.quorumVoters()).isEmpty();
        assertThat(config.isStandaloneDefault()).isFalse();
        assertRefused(with(properties, "controller.quorum.bootstrap.servers", "127.0.0.1"),
            "controller.quorum.bootstrap.servers: expected host:port, got '127.0.0.1'");
        assertRefused(with(properties, "controller.quorum.bootstrap.servers", "1@127.0.0.1:x"), "controller.quorum.bootstrap.servers");
    }

    @Test
    void votersAndBootstrapServersMayBothBeSetAsInKafka4() {
        ServerConfig config = ServerConfig.fromMap(with(combined(), "controller.quorum.bootstrap.servers", "127.0.0.1:9093"));
        assertThat(config.quorumVoters()).hasSize(3);
        assertThat(config.quorumBootstrapServers()).hasSize(1);
    }

    // ---------------------------------------------------------------- valid cluster configurations

    @Test
    void combinedNodeIsValid() {
        ServerConfig config = ServerConfig.fromMap(combined());
        assertThat(config.isStandaloneDefault()).isFalse();
        assertThat(config.isBroker()).isTrue();
        assertThat(config.isController()).isTrue();
        assertThat(config.controllerListenerNames()).containsExactly("CONTROLLER");
        assertThat(config.controllerEndpoint()).isEqualTo(new Endpoint("CONTROLLER", "127.0.0.1", 9093));
        assertThat(config.interBrokerListenerName()).isEqualTo("PLAINTEXT");
        assertThat(config.advertisedBrokerListeners()).containsExactly(new Endpoint("PLAINTEXT", "127.0.0.1", 9092));
    }

    @Test
    void combinedNodeMayLeaveAdvertisedListenersToFollowListeners() {
        ServerConfig config = ServerConfig.fromMap(with(combined(), "advertised.listeners", null));
        assertThat(config.advertisedBrokerListeners()).containsExactly(new Endpoint("PLAINTEXT", "127.0.0.1", 9092));
    }

    @Test
    void controllerOnlyNodeIsValid() {
        ServerConfig config = ServerConfig.fromMap(controllerOnly());
        assertThat(config.processRoles()).isEqualTo(Set.of("controller"));
        assertThat(config.isBroker()).isFalse();
        assertThat(config.controllerEndpoint()).isEqualTo(new Endpoint("CONTROLLER", "127.0.0.1", 9093));
        assertThat(config.interBrokerListenerName()).isNull();
        // Kafka 4 lets a controller advertise its controller listener (KIP-853).
        ServerConfig.fromMap(with(controllerOnly(), "advertised.listeners", "CONTROLLER://controller-1:9093"));
    }

    @Test
    void brokerOnlyNodeIsValidWithVotersOrBootstrapServers() {
        ServerConfig config = ServerConfig.fromMap(brokerOnly());
        assertThat(config.isController()).isFalse();
        assertThat(config.controllerEndpoint()).isNull();
        assertThat(config.interBrokerListenerName()).isEqualTo("PLAINTEXT");
        Map<String, String> bootstrap = with(brokerOnly(), "controller.quorum.voters", null);
        bootstrap.put("controller.quorum.bootstrap.servers", "127.0.0.1:9093");
        assertThat(ServerConfig.fromMap(bootstrap).quorumBootstrapServers()).hasSize(1);
    }

    @Test
    void listenerNamesCompareCaseInsensitivelyAsInKafka() {
        ServerConfig config = ServerConfig.fromMap(with(combined(), "controller.listener.names", "controller"));
        assertThat(config.controllerEndpoint()).isEqualTo(new Endpoint("CONTROLLER", "127.0.0.1", 9093));
    }

    @Test
    void controllerEndpointFollowsTheOrderOfControllerListenerNames() {
        Map<String, String> properties = with(combined(), "listeners", "PLAINTEXT://127.0.0.1:9092,C2://127.0.0.1:9096,CONTROLLER://127.0.0.1:9093");
        properties.put("controller.listener.names", "CONTROLLER,C2");
        properties.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,C2:PLAINTEXT");
        assertThat(ServerConfig.fromMap(properties).controllerEndpoint()).isEqualTo(new Endpoint("CONTROLLER", "127.0.0.1", 9093));
    }

    // ---------------------------------------------------------------- Kafka's rules

    @Test
    void processRolesMustNotBeEmptyInACluster() {
        assertRefused(with(combined(), "process.roles", ""), "process.roles must contain 'broker', 'controller' or both");
        assertRefused(with(combined(), "process.roles", "broker,zookeeper"), "process.roles", "must be one of");
        assertRefused(with(combined(), "process.roles", "broker,broker"), "Duplicate role names found in `process.roles`: [broker, broker]");
    }

    @Test
    void controllerListenerNamesMustBeSetInACluster() {
        assertRefused(with(combined(), "controller.listener.names", ""), "controller.listener.names must contain at least one value");
        assertRefused(with(brokerOnly(), "controller.listener.names", ""),
            "controller.listener.names must contain at least one value", "just the broker role");
    }

    @Test
    void controllerMustBeAmongTheVoters() {
        assertRefused(with(combined(), "node.id", "7"),
            "If process.roles contains the 'controller' role, the node id 7 must be included in the set of voters controller.quorum.voters=[1, 2, 3]");
        assertRefused(with(controllerOnly(), "node.id", "7"), "the node id 7 must be included in the set of voters");
    }

    @Test
    void controllerWithBootstrapServersOnlyNeedNotBeAVoter() {
        Map<String, String> properties = with(combined(), "controller.quorum.voters", null);
        properties.put("controller.quorum.bootstrap.servers", "127.0.0.1:9093");
        properties.put("node.id", "7");
        assertThat(ServerConfig.fromMap(properties).nodeId()).isEqualTo(7);
    }

    @Test
    void controllerNeedsItsControllerListenerInListeners() {
        assertRefused(with(combined(), "listeners", "PLAINTEXT://127.0.0.1:9092"),
            "controller.listener.names must contain at least one value appearing in the 'listeners' configuration when running the KRaft controller role");
        Map<String, String> extraName = with(combined(), "controller.listener.names", "CONTROLLER,OTHER");
        extraName.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,OTHER:PLAINTEXT");
        assertRefused(extraName,
            "controller.listener.names must only contain values appearing in the 'listeners' configuration when running the KRaft controller role");
    }

    @Test
    void controllerOnlyNodeHasOnlyControllerListeners() {
        assertRefused(with(controllerOnly(), "listeners", "CONTROLLER://127.0.0.1:9093,PLAINTEXT://127.0.0.1:9092"),
            "The listeners config must only contain KRaft controller listeners from controller.listener.names when process.roles=controller");
    }

    @Test
    void controllerOnlyNodeRefusesAControllerListenerAsInterBrokerListener() {
        assertRefused(with(controllerOnly(), "inter.broker.listener.name", "CONTROLLER"),
            "controller.listener.names must not contain an explicitly set inter.broker.listener.name configuration value when process.roles=controller");
    }

    @Test
    void brokerOnlyNodeIsNotAVoter() {
        assertRefused(with(brokerOnly(), "node.id", "2"),
            "If process.roles contains just the 'broker' role, the node id 2 must not be included in the set of voters controller.quorum.voters=[1, 2, 3]");
    }

    @Test
    void brokerOnlyNodeHasNoControllerListener() {
        assertRefused(with(brokerOnly(), "listeners", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"),
            "controller.listener.names must not contain a value appearing in the 'listeners' configuration when running KRaft with just the broker role");
    }

    @Test
    void brokerOnlyNodeDoesNotAdvertiseAControllerListener() {
        assertRefused(with(brokerOnly(), "advertised.listeners", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"),
            "The advertised.listeners config must not contain KRaft controller listeners from controller.listener.names");
    }

    @Test
    void brokerOnlyNodeMapsItsControllerListenerToAProtocol() {
        assertRefused(with(brokerOnly(), "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT"),
            "Controller listener with name CONTROLLER defined in controller.listener.names not found in listener.security.protocol.map");
    }

    @Test
    void interBrokerListenerMustBeAnAdvertisedBrokerListener() {
        assertRefused(with(combined(), "inter.broker.listener.name", "CONTROLLER"),
            "inter.broker.listener.name must be a listener name defined in advertised.listeners. "
                + "The valid options based on currently configured listeners are PLAINTEXT");
        assertRefused(with(combined(), "inter.broker.listener.name", "INTERNAL"), "inter.broker.listener.name must be a listener name");
    }

    @Test
    void brokerNeedsABrokerListener() {
        Map<String, String> onlyController = with(combined(), "listeners", "CONTROLLER://127.0.0.1:9093");
        onlyController.remove("advertised.listeners");
        assertRefused(onlyController, "There must be at least one broker advertised listener. Perhaps all listeners appear in controller.listener.names?");
    }

    @Test
    void advertisedBrokerListenersMustBeAmongListeners() {
        Map<String, String> properties = with(combined(), "advertised.listeners", "PLAINTEXT://127.0.0.1:9092,EXTERNAL://example.com:9092");
        properties.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,EXTERNAL:PLAINTEXT");
        assertRefused(properties, "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners");
    }

    @Test
    void advertisedListenersMustBeRoutable() {
        Map<String, String> properties = with(combined(), "listeners", "PLAINTEXT://0.0.0.0:9092,CONTROLLER://127.0.0.1:9093");
        properties.remove("advertised.listeners");
        assertRefused(properties, "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0");
        assertThat(ServerConfig.fromMap(with(properties, "advertised.listeners", "PLAINTEXT://10.0.0.1:9092")).advertisedBrokerListeners())
            .containsExactly(new Endpoint("PLAINTEXT", "10.0.0.1", 9092));
    }

    @Test
    void everyRuleLeavesTheStandaloneDefaultAlone() {
        // A listener named CONTROLLER on the single node is just another listener, as before.
        ServerConfig config = ServerConfig.fromMap(Map.of("listeners", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
            "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"));
        assertThat(config.isStandaloneDefault()).isTrue();
        assertThat(config.listenerEndpoints()).hasSize(2);
        assertThat(List.of(config.processRoles().toArray())).containsExactly("broker", "controller");
    }
}
