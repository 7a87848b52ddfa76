package io.strata.it;

import io.strata.server.config.DynamicBrokerConfig;
import io.strata.server.config.DynamicBrokerConfigTable;
import io.strata.server.config.DynamicBrokerConfigTable.Entry;
import io.strata.server.config.DynamicBrokerConfigTable.Status;
import io.strata.server.config.ServerConfig;
import org.apache.kafka.storage.internals.log.LogCleaner;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Strata's table of dynamic broker configs against Apache Kafka 4.4's own lists, read from the
 * kafka-server and kafka-storage jars at test time: the same keys with the same update modes
 * ({@code DynamicBrokerConfig.dynamicConfigUpdateModes()}, the source of the "Update Mode" column
 * of Kafka's documentation), the cleaner's keys as Kafka's LogCleaner reconfigures them, and
 * Strata accepting exactly the keys the table calls live.
 */
class DynamicBrokerConfigTableTest {
    private static final String MESSAGE_MAX_BYTES = "message.max.bytes";

    @Test
    void theTableListsEveryKeyKafkaCanChangeDynamicallyWithKafkasUpdateMode() {
        Map<String, String> kafka = new TreeMap<>(org.apache.kafka.server.config.DynamicBrokerConfig.dynamicConfigUpdateModes());
        Map<String, String> strata = new TreeMap<>();
        DynamicBrokerConfigTable.ENTRIES.forEach((name, entry) -> strata.put(name, entry.mode().kafkaName()));
        assertThat(strata).containsExactlyEntriesOf(kafka);
        assertThat(DynamicBrokerConfigTable.ENTRIES.keySet()).isEqualTo(org.apache.kafka.server.config.DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS);
    }

    @Test
    void theLogCleanerKeysAreKafkasLogCleanerReconfigurableConfigs() {
        Set<String> kafka = new TreeSet<>(LogCleaner.RECONFIGURABLE_CONFIGS);
        // message.max.bytes is in Kafka's cleaner list too (it sizes the cleaner's buffers) and is a topic default in Strata's table.
        kafka.remove(MESSAGE_MAX_BYTES);
        assertThat(DynamicBrokerConfigTable.keys(Status.LOG_CLEANER)).isEqualTo(kafka);
        assertThat(DynamicBrokerConfigTable.entry(MESSAGE_MAX_BYTES).status()).isEqualTo(Status.LIVE);
    }

    @Test
    void everyKafkaLogConfigKeyIsALiveTopicDefaultOrRefusedWithAReason() {
        for (String key : org.apache.kafka.server.config.DynamicBrokerConfig.DynamicLogConfig.RECONFIGURABLE_CONFIGS) {
            Entry entry = DynamicBrokerConfigTable.entry(key);
            assertThat(entry).as(key).isNotNull();
            if (entry.status() == Status.REFUSED) {
                assertThat(entry.detail()).as(key).startsWith("refused");
            } else {
                assertThat(entry.status()).as(key).isEqualTo(Status.LIVE);
            }
        }
    }

    @Test
    void securityKeysAreRefusedUntilTheSecurityIssue() {
        for (String key : org.apache.kafka.server.config.DynamicBrokerConfig.DYNAMIC_SECURITY_CONFIGS) {
            assertThat(DynamicBrokerConfigTable.entry(key).status()).as(key).isEqualTo(Status.REFUSED);
            assertThat(DynamicBrokerConfigTable.entry(key).detail()).as(key).startsWith("refused until the security issue");
        }
        for (Entry entry : DynamicBrokerConfigTable.ENTRIES.values()) {
            if (entry.name().startsWith("ssl.") || entry.name().startsWith("sasl.")) {
                assertThat(entry.status()).as(entry.name()).isEqualTo(Status.REFUSED);
            }
        }
    }

    @Test
    void strataAcceptsExactlyTheLiveAndCleanerKeysAndDefinesEachOfThem() {
        Set<String> accepted = new TreeSet<>(DynamicBrokerConfigTable.keys(Status.LIVE));
        accepted.addAll(DynamicBrokerConfigTable.keys(Status.LOG_CLEANER));
        assertThat(DynamicBrokerConfig.RECONFIGURABLE).isEqualTo(accepted);
        for (String key : accepted) {
            assertThat(ServerConfig.DEFINITION.key(key)).as("definition of %s", key).isNotNull();
            assertThat(DynamicBrokerConfig.isReadOnly(key)).as(key).isFalse();
        }
        for (Entry entry : DynamicBrokerConfigTable.ENTRIES.values()) {
            assertThat(entry.detail()).as(entry.name()).isNotBlank();
            if (!accepted.contains(entry.name())) {
                assertThat(DynamicBrokerConfig.isReadOnly(entry.name())).as(entry.name()).isTrue();
            }
        }
    }
}
