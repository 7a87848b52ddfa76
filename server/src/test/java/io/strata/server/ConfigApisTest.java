package io.strata.server;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterConfigsRequestData;
import io.strata.protocol.message.AlterConfigsResponseData;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.CreateTopicsResponseData;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.DescribeConfigsRequestData;
import io.strata.protocol.message.DescribeConfigsResponseData;
import io.strata.protocol.message.IncrementalAlterConfigsRequestData;
import io.strata.protocol.message.IncrementalAlterConfigsResponseData;
import io.strata.storage.LogConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.strata.server.TestBroker.TIMEOUT_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

/**
 * DescribeConfigs, IncrementalAlterConfigs and legacy AlterConfigs against a real node started
 * with one static log setting ({@code log.index.interval.bytes=8192}): values, sources and
 * synonyms as Kafka reports them, and every accepted change reaching the partition logs.
 */
class ConfigApisTest {
    private static final String STATIC_INDEX_INTERVAL = "8192";

    @TempDir
    Path dataDir;

    private TestBroker broker;

    @BeforeEach
    void start() throws Exception {
        broker = new TestBroker(dataDir, Map.of("log.index.interval.bytes", STATIC_INDEX_INTERVAL));
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    private static <T> T get(KafkaFuture<T> future) throws Exception {
        return future.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    private static ConfigResource topic(String name) {
        return new ConfigResource(ConfigResource.Type.TOPIC, name);
    }

    private static ConfigResource broker(String name) {
        return new ConfigResource(ConfigResource.Type.BROKER, name);
    }

    private Config describe(ConfigResource resource) throws Exception {
        return get(broker.admin().describeConfigs(List.of(resource), new DescribeConfigsOptions().includeSynonyms(true).includeDocumentation(true))
            .values().get(resource));
    }

    private void alter(ConfigResource resource, AlterConfigOp... ops) throws Exception {
        get(broker.admin().incrementalAlterConfigs(Map.of(resource, List.of(ops))).all());
    }

    private static AlterConfigOp op(String name, String value, AlterConfigOp.OpType type) {
        return new AlterConfigOp(new ConfigEntry(name, value), type);
    }

    private static List<Object> synonyms(ConfigEntry entry) {
        List<Object> result = new ArrayList<>();
        entry.synonyms().forEach(synonym -> result.add(tuple(synonym.name(), synonym.value(), synonym.source())));
        return result;
    }

    // ---------------------------------------------------------------- DescribeConfigs

    @Test
    void topicConfigsShowKafkaDefaultsStaticSettingsAndOverridesWithTheirSynonyms() throws Exception {
        broker.createTopic("described", 1, Map.of("retention.bytes", "1000"));

        Config config = describe(topic("described"));

        assertThat(config.entries()).hasSize(LogConfig.DEFINITION.keys().size());
        ConfigEntry retentionMs = config.get("retention.ms");
        assertThat(retentionMs.value()).isEqualTo("604800000");
        assertThat(retentionMs.source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        // As in Kafka: the built-in log.retention.hours precedes the primary synonym log.retention.ms, so it is dropped.
        assertThat(retentionMs.synonyms()).isEmpty();
        assertThat(retentionMs.type()).isEqualTo(ConfigEntry.ConfigType.LONG);
        assertThat(retentionMs.isReadOnly()).isFalse();
        assertThat(retentionMs.isSensitive()).isFalse();

        ConfigEntry segmentBytes = config.get("segment.bytes");
        assertThat(segmentBytes.value()).isEqualTo("1073741824");
        assertThat(segmentBytes.source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        assertThat(synonyms(segmentBytes)).containsExactly(tuple("log.segment.bytes", "1073741824", ConfigEntry.ConfigSource.DEFAULT_CONFIG));
        assertThat(segmentBytes.documentation()).isNotBlank();
        assertThat(segmentBytes.type()).isEqualTo(ConfigEntry.ConfigType.INT);

        ConfigEntry indexInterval = config.get("index.interval.bytes");
        assertThat(indexInterval.value()).isEqualTo(STATIC_INDEX_INTERVAL);
        assertThat(indexInterval.source()).isEqualTo(ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG);
        assertThat(synonyms(indexInterval)).containsExactly(
            tuple("log.index.interval.bytes", STATIC_INDEX_INTERVAL, ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG),
            tuple("log.index.interval.bytes", "4096", ConfigEntry.ConfigSource.DEFAULT_CONFIG));

        ConfigEntry retentionBytes = config.get("retention.bytes");
        assertThat(retentionBytes.value()).isEqualTo("1000");
        assertThat(retentionBytes.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
        assertThat(synonyms(retentionBytes)).containsExactly(
            tuple("retention.bytes", "1000", ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG),
            tuple("log.retention.bytes", "-1", ConfigEntry.ConfigSource.DEFAULT_CONFIG));

        assertThat(config.get("cleanup.policy").value()).isEqualTo("delete");
        assertThat(config.get("cleanup.policy").type()).isEqualTo(ConfigEntry.ConfigType.LIST);
        assertThat(config.get("min.cleanable.dirty.ratio").value()).isEqualTo("0.5");
        assertThat(config.get("leader.replication.throttled.replicas").value()).isEmpty();
    }

    @Test
    void describeConfigsAnswersUnknownTopicsAndFiltersRequestedKeys() throws Exception {
        broker.createTopic("filtered", 1, Map.of());
        assertThatThrownBy(() -> describe(topic("no-such-topic")))
            .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(UnknownTopicOrPartitionException.class);

        DescribeConfigsRequestData request = new DescribeConfigsRequestData().setIncludeSynonyms(false);
        request.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 2).setResourceName("filtered")
            .setConfigurationKeys(List.of("retention.ms", "no.such.key")));
        request.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 2).setResourceName("bad/name"));
        request.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 8).setResourceName("1"));
        try (RawClient client = new RawClient(broker.port())) {
            for (int version = 1; version <= 4; version++) {
                DescribeConfigsResponseData response = client.send(ApiMessageType.DESCRIBE_CONFIGS, version, request);
                assertThat(response.results().get(0).configs()).extracting(DescribeConfigsResponseData.DescribeConfigsResourceResult::name)
                    .containsExactly("retention.ms");
                assertThat(response.results().get(0).configs().get(0).synonyms()).isEmpty();
                assertThat(response.results().get(1).errorCode()).isEqualTo(ErrorCode.INVALID_TOPIC_EXCEPTION.code());
                assertThat(response.results().get(2).errorCode()).isEqualTo(ErrorCode.INVALID_REQUEST.code());
            }
        }
    }

    @Test
    void brokerConfigsShowCurrentValuesSourcesAndWhatCanChangeAtRuntime() throws Exception {
        Config config = describe(broker("1"));

        ConfigEntry hours = config.get("log.retention.hours");
        assertThat(hours.value()).isEqualTo("168");
        assertThat(hours.isReadOnly()).isTrue();
        assertThat(hours.source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        ConfigEntry retentionMs = config.get("log.retention.ms");
        assertThat(retentionMs.value()).isNull();
        assertThat(retentionMs.isReadOnly()).isFalse();
        ConfigEntry indexInterval = config.get("log.index.interval.bytes");
        assertThat(indexInterval.value()).isEqualTo(STATIC_INDEX_INTERVAL);
        assertThat(indexInterval.source()).isEqualTo(ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG);
        assertThat(config.get("num.io.threads").value()).isEqualTo("2");
        assertThat(config.get("num.io.threads").isReadOnly()).isFalse();
        assertThat(config.get("num.network.threads").isReadOnly()).isTrue();

        // The only cluster default of a new cluster: min.insync.replicas, written when ELR was finalized (KIP-966, as Kafka 4.4).
        assertThat(describe(broker("")).entries()).extracting(ConfigEntry::name, ConfigEntry::value, ConfigEntry::source)
            .containsExactly(tuple("min.insync.replicas", "1", ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG));
        // Admin sends a broker resource to that broker, so only a raw request can ask this node about another.
        DescribeConfigsRequestData request = new DescribeConfigsRequestData();
        for (String name : List.of("2", "one")) {
            request.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 4).setResourceName(name));
        }
        try (RawClient client = new RawClient(broker.port())) {
            DescribeConfigsResponseData response = client.send(ApiMessageType.DESCRIBE_CONFIGS, 4, request);
            assertThat(response.results()).extracting(DescribeConfigsResponseData.DescribeConfigsResult::errorCode)
                .containsExactly(ErrorCode.INVALID_REQUEST.code(), ErrorCode.INVALID_REQUEST.code());
        }
    }

    // ---------------------------------------------------------------- IncrementalAlterConfigs on topics

    @Test
    void incrementalAlterConfigsSetsDeletesAppendsAndSubtractsAndTheLogFollows() throws Exception {
        broker.createTopic("altered", 1, Map.of());

        alter(topic("altered"), op("retention.ms", "3600000", AlterConfigOp.OpType.SET),
            op("cleanup.policy", "compact", AlterConfigOp.OpType.APPEND));

        Config config = describe(topic("altered"));
        assertThat(config.get("retention.ms").value()).isEqualTo("3600000");
        assertThat(config.get("retention.ms").source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
        assertThat(config.get("cleanup.policy").value()).isEqualTo("delete,compact");
        assertThat(broker.log("altered", 0).config().retentionMs).isEqualTo(3_600_000L);
        assertThat(broker.log("altered", 0).config().compact).isTrue();

        alter(topic("altered"), op("cleanup.policy", "delete", AlterConfigOp.OpType.SUBTRACT),
            op("retention.ms", null, AlterConfigOp.OpType.DELETE));

        config = describe(topic("altered"));
        assertThat(config.get("cleanup.policy").value()).isEqualTo("compact");
        assertThat(config.get("retention.ms").value()).isEqualTo("604800000");
        assertThat(config.get("retention.ms").source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        assertThat(broker.log("altered", 0).config().retentionMs).isEqualTo(604_800_000L);
        assertThat(broker.log("altered", 0).config().delete).isFalse();
    }

    @Test
    void validateOnlyChangesNothing() throws Exception {
        broker.createTopic("untouched", 1, Map.of());
        get(broker.admin().incrementalAlterConfigs(Map.of(topic("untouched"), List.of(op("retention.ms", "1000", AlterConfigOp.OpType.SET))),
            new AlterConfigsOptions().validateOnly(true)).all());

        assertThat(describe(topic("untouched")).get("retention.ms").value()).isEqualTo("604800000");
        assertThat(broker.log("untouched", 0).config().retentionMs).isEqualTo(604_800_000L);
    }

    @Test
    void invalidTopicConfigChangesAreRefusedWithKafkasErrors() throws Exception {
        broker.createTopic("strict", 1, Map.of());
        assertRefused(topic("strict"), InvalidConfigurationException.class, op("retention.ms", "soon", AlterConfigOp.OpType.SET));
        assertRefused(topic("strict"), InvalidConfigurationException.class, op("no.such.config", "1", AlterConfigOp.OpType.SET));
        assertRefused(topic("strict"), InvalidConfigurationException.class, op("retention.ms", "1", AlterConfigOp.OpType.APPEND));
        assertRefused(topic("strict"), InvalidConfigurationException.class, op("cleanup.policy", "shred", AlterConfigOp.OpType.APPEND));
        assertRefused(topic("no-such-topic"), UnknownTopicOrPartitionException.class, op("retention.ms", "1000", AlterConfigOp.OpType.SET));
        assertRefused(topic("strict"), InvalidRequestException.class, op("retention.ms", null, AlterConfigOp.OpType.SET));

        assertThat(broker.server().metadata().image().configs(io.strata.metadata.ConfigResource.topic("strict"))).isEmpty();
    }

    @Test
    void tieredStorageIsRefusedTheSameWayOnEveryPathThatSetsTopicConfigs() throws Exception {
        String message = "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.";
        Map<String, String> tiered = Map.of("remote.storage.enable", "true");
        for (boolean validateOnly : new boolean[] {false, true}) {
            assertThatThrownBy(() -> get(broker.admin().createTopics(List.of(new NewTopic("tiered", 1, (short) 1).configs(tiered)),
                    new CreateTopicsOptions().validateOnly(validateOnly)).all()))
                .as("CreateTopics validateOnly=%s", validateOnly).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(InvalidConfigurationException.class).cause().hasMessage(message);
        }
        try (RawClient client = new RawClient(broker.port())) {
            CreateTopicsResponseData created = client.send(ApiMessageType.CREATE_TOPICS, 7, new CreateTopicsRequestData().setTimeoutMs(30_000)
                .setTopics(List.of(new CreateTopicsRequestData.CreatableTopic().setName("tiered").setNumPartitions(1).setReplicationFactor((short) 1)
                    .setConfigs(List.of(new CreateTopicsRequestData.CreatableTopicConfig().setName("remote.storage.enable").setValue("true"))))));
            assertThat(created.topics()).extracting(CreateTopicsResponseData.CreatableTopicResult::errorCode,
                CreateTopicsResponseData.CreatableTopicResult::errorMessage).containsExactly(tuple(ErrorCode.INVALID_CONFIG.code(), message));
        }
        assertThat(broker.server().metadata().image().topic("tiered")).isNull();

        broker.createTopic("local", 1, Map.of("remote.storage.enable", "false"));
        for (boolean validateOnly : new boolean[] {false, true}) {
            assertThatThrownBy(() -> get(broker.admin().incrementalAlterConfigs(Map.of(topic("local"),
                    List.of(op("remote.storage.enable", "true", AlterConfigOp.OpType.SET))), new AlterConfigsOptions().validateOnly(validateOnly)).all()))
                .as("IncrementalAlterConfigs validateOnly=%s", validateOnly).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(InvalidConfigurationException.class).cause().hasMessage(message);
        }
        try (RawClient client = new RawClient(broker.port())) {
            for (boolean validateOnly : new boolean[] {false, true}) {
                AlterConfigsResponseData altered = client.send(ApiMessageType.ALTER_CONFIGS, 2,
                    legacyAlter(validateOnly, legacyResource((byte) 2, "local", "remote.storage.enable", "true")));
                assertThat(altered.responses()).extracting(AlterConfigsResponseData.AlterConfigsResourceResponse::errorCode,
                    AlterConfigsResponseData.AlterConfigsResourceResponse::errorMessage)
                    .as("AlterConfigs validateOnly=%s", validateOnly).containsExactly(tuple(ErrorCode.INVALID_CONFIG.code(), message));
            }
        }
        assertThat(broker.server().metadata().image().configs(io.strata.metadata.ConfigResource.topic("local")))
            .isEqualTo(Map.of("remote.storage.enable", "false"));
    }

    private void assertRefused(ConfigResource resource, Class<? extends Throwable> error, AlterConfigOp... ops) {
        assertThatThrownBy(() -> alter(resource, ops)).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(error);
    }

    // ---------------------------------------------------------------- legacy AlterConfigs

    @Test
    void legacyAlterConfigsReplacesTheWholeDynamicSet() throws Exception {
        broker.createTopic("replaced", 1, Map.of("retention.ms", "1000", "retention.bytes", "2000"));
        try (RawClient client = new RawClient(broker.port())) {
            for (int version = 0; version <= 2; version++) {
                AlterConfigsResponseData response = client.send(ApiMessageType.ALTER_CONFIGS, version,
                    legacyAlter(false, legacyResource((byte) 2, "replaced", "segment.ms", Integer.toString(100_000 + version))));
                assertThat(response.responses()).extracting(AlterConfigsResponseData.AlterConfigsResourceResponse::errorCode)
                    .containsExactly(ErrorCode.NONE.code());
            }
        }
        Config config = describe(topic("replaced"));
        assertThat(config.get("segment.ms").value()).isEqualTo("100002");
        assertThat(config.get("segment.ms").source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
        assertThat(config.get("retention.ms").source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        assertThat(config.get("retention.bytes").value()).isEqualTo("-1");
        assertThat(broker.log("replaced", 0).config().segmentMs).isEqualTo(100_002L);
        assertThat(broker.log("replaced", 0).config().retentionMs).isEqualTo(604_800_000L);
    }

    @Test
    void legacyAlterConfigsRefusesNullValuesDuplicatesAndBadValues() throws Exception {
        broker.createTopic("guarded", 1, Map.of("retention.ms", "1000"));
        try (RawClient client = new RawClient(broker.port())) {
            AlterConfigsResponseData nullValue = client.send(ApiMessageType.ALTER_CONFIGS, 2,
                legacyAlter(false, legacyResource((byte) 2, "guarded", "retention.ms", null)));
            assertThat(nullValue.responses().get(0).errorCode()).isEqualTo(ErrorCode.INVALID_REQUEST.code());

            AlterConfigsResponseData duplicate = client.send(ApiMessageType.ALTER_CONFIGS, 2, legacyAlter(false,
                legacyResource((byte) 2, "guarded", "retention.ms", "5"), legacyResource((byte) 2, "guarded", "retention.ms", "6")));
            assertThat(duplicate.responses()).extracting(AlterConfigsResponseData.AlterConfigsResourceResponse::errorCode)
                .containsExactly(ErrorCode.INVALID_REQUEST.code(), ErrorCode.INVALID_REQUEST.code());

            AlterConfigsResponseData badValue = client.send(ApiMessageType.ALTER_CONFIGS, 2,
                legacyAlter(false, legacyResource((byte) 2, "guarded", "segment.bytes", "-3")));
            assertThat(badValue.responses().get(0).errorCode()).isEqualTo(ErrorCode.INVALID_CONFIG.code());

            AlterConfigsResponseData validateOnly = client.send(ApiMessageType.ALTER_CONFIGS, 2,
                legacyAlter(true, legacyResource((byte) 2, "guarded", "segment.ms", "100000")));
            assertThat(validateOnly.responses().get(0).errorCode()).isEqualTo(ErrorCode.NONE.code());
        }
        assertThat(broker.server().metadata().image().configs(io.strata.metadata.ConfigResource.topic("guarded")))
            .isEqualTo(Map.of("retention.ms", "1000"));
    }

    @Test
    void withElrOnLegacyAlterConfigsMayNeitherDropTheClusterLevelMinIsrNorSetABrokerLevelOne() throws Exception {
        try (RawClient client = new RawClient(broker.port())) {
            // Replacing the cluster-level set without min.insync.replicas removes it: refused, as Kafka's implicit deletions are (KAFKA-16540).
            AlterConfigsResponseData dropped = client.send(ApiMessageType.ALTER_CONFIGS, 2,
                legacyAlter(false, legacyResource((byte) 4, "", "num.replica.fetchers", "2")));
            assertThat(dropped.responses().get(0).errorCode()).isEqualTo(ErrorCode.INVALID_CONFIG.code());
            assertThat(dropped.responses().get(0).errorMessage()).isEqualTo("Cluster-level min.insync.replicas cannot be removed while ELR is enabled.");

            AlterConfigsResponseData brokerLevel = client.send(ApiMessageType.ALTER_CONFIGS, 2,
                legacyAlter(false, legacyResource((byte) 4, "1", "min.insync.replicas", "2")));
            assertThat(brokerLevel.responses().get(0).errorCode()).isEqualTo(ErrorCode.INVALID_CONFIG.code());
            assertThat(brokerLevel.responses().get(0).errorMessage()).isEqualTo("Broker-level min.insync.replicas cannot be altered while ELR is enabled.");
        }
        assertThat(broker.server().metadata().image().configs(io.strata.metadata.ConfigResource.broker(""))).isEqualTo(Map.of("min.insync.replicas", "1"));
        assertThat(broker.server().metadata().image().configs(io.strata.metadata.ConfigResource.broker("1"))).isEmpty();
    }

    private static AlterConfigsRequestData legacyAlter(boolean validateOnly, AlterConfigsRequestData.AlterConfigsResource... resources) {
        return new AlterConfigsRequestData().setValidateOnly(validateOnly).setResources(List.of(resources));
    }

    private static AlterConfigsRequestData.AlterConfigsResource legacyResource(byte type, String name, String key, String value) {
        return new AlterConfigsRequestData.AlterConfigsResource().setResourceType(type).setResourceName(name)
            .setConfigs(List.of(new AlterConfigsRequestData.AlterableConfig().setName(key).setValue(value)));
    }

    // ---------------------------------------------------------------- dynamic broker configs

    @Test
    void dynamicBrokerDefaultsReachExistingAndNewLogsWithKafkasPrecedence() throws Exception {
        broker.createTopic("inherits", 1, Map.of());

        alter(broker(""), op("log.retention.ms", "7200000", AlterConfigOp.OpType.SET));

        ConfigEntry clusterDefault = describe(topic("inherits")).get("retention.ms");
        assertThat(clusterDefault.value()).isEqualTo("7200000");
        assertThat(clusterDefault.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
        assertThat(synonyms(clusterDefault)).containsExactly(
            tuple("log.retention.ms", "7200000", ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
            tuple("log.retention.hours", "168", ConfigEntry.ConfigSource.DEFAULT_CONFIG));
        assertThat(broker.log("inherits", 0).config().retentionMs).isEqualTo(7_200_000L);
        assertThat(describe(broker("")).entries()).extracting(ConfigEntry::name, ConfigEntry::value, ConfigEntry::source)
            .containsExactly(tuple("log.retention.ms", "7200000", ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
                tuple("min.insync.replicas", "1", ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG));

        alter(broker("1"), op("log.retention.ms", "3600000", AlterConfigOp.OpType.SET));

        ConfigEntry perBroker = describe(topic("inherits")).get("retention.ms");
        assertThat(perBroker.value()).isEqualTo("3600000");
        assertThat(perBroker.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG);
        assertThat(describe(broker("1")).get("log.retention.ms").value()).isEqualTo("3600000");
        assertThat(broker.log("inherits", 0).config().retentionMs).isEqualTo(3_600_000L);
        broker.createTopic("born-later", 1, Map.of());
        assertThat(broker.log("born-later", 0).config().retentionMs).isEqualTo(3_600_000L);

        alter(broker("1"), op("log.retention.ms", null, AlterConfigOp.OpType.DELETE));
        alter(broker(""), op("log.retention.ms", null, AlterConfigOp.OpType.DELETE));

        assertThat(describe(topic("inherits")).get("retention.ms").source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        assertThat(broker.log("inherits", 0).config().retentionMs).isEqualTo(604_800_000L);
        assertThat(broker.log("born-later", 0).config().retentionMs).isEqualTo(604_800_000L);
    }

    @Test
    void brokerChangesThatCannotApplyAtRuntimeAreRefused() throws Exception {
        assertRefused(broker("1"), InvalidRequestException.class, op("log.retention.hours", "1", AlterConfigOp.OpType.SET));
        assertRefused(broker("1"), InvalidRequestException.class, op("num.network.threads", "4", AlterConfigOp.OpType.SET));
        assertRefused(broker("1"), InvalidRequestException.class, op("no.such.broker.config", "4", AlterConfigOp.OpType.SET));
        assertRefused(broker("1"), InvalidRequestException.class, op("log.retention.ms", "soon", AlterConfigOp.OpType.SET));
        assertRefused(broker("1"), InvalidRequestException.class, op("log.retention.ms", "1", AlterConfigOp.OpType.APPEND));
        assertRefused(broker(""), InvalidRequestException.class, op("log.segment.bytes", "1", AlterConfigOp.OpType.SET));
        Collection<ConfigEntry> defaults = describe(broker("")).entries();
        assertThat(defaults).extracting(ConfigEntry::name, ConfigEntry::value, ConfigEntry::source).containsExactly(tuple("min.insync.replicas", "1", ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG));
        assertThat(describe(broker("1")).get("log.retention.hours").value()).isEqualTo("168");
    }

    @Test
    void dynamicSecuritySettingsAreRefusedNamingThemUntilSecurityLands() {
        for (String key : List.of("listener.name.plaintext.ssl.keystore.location", "ssl.keystore.location", "sasl.enabled.mechanisms",
                "sasl.jaas.config", "listener.name.plaintext.scram-sha-256.sasl.jaas.config")) {
            for (String resource : List.of("1", "")) {
                assertThatThrownBy(() -> alter(broker(resource), op(key, "x", AlterConfigOp.OpType.SET))).as("%s on broker '%s'", key, resource)
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InvalidRequestException.class)
                    .cause().hasMessageContaining(key).hasMessageContaining("not implemented");
            }
        }
    }

    @Test
    void brokerChangesMustNameThisNodeOrTheClusterDefault() throws Exception {
        IncrementalAlterConfigsRequestData request = new IncrementalAlterConfigsRequestData();
        for (String name : List.of("2", "one")) {
            IncrementalAlterConfigsRequestData.AlterConfigsResource resource = new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                .setResourceType((byte) 4).setResourceName(name);
            resource.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig().setName("log.retention.ms")
                .setConfigOperation((byte) 0).setValue("1000"));
            request.resources().add(resource);
        }
        try (RawClient client = new RawClient(broker.port())) {
            for (int version = 0; version <= 1; version++) {
                IncrementalAlterConfigsResponseData response = client.send(ApiMessageType.INCREMENTAL_ALTER_CONFIGS, version, request);
                assertThat(response.responses()).extracting(IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse::resourceName,
                        IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse::errorCode)
                    .containsExactly(tuple("2", ErrorCode.INVALID_REQUEST.code()), tuple("one", ErrorCode.INVALID_REQUEST.code()));
            }
        }
        assertThat(broker.server().metadata().image().configs(io.strata.metadata.ConfigResource.broker("2"))).isEmpty();
    }
}
