package io.strata.server;

import io.strata.storage.cleaner.LogCleaner;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.strata.server.TestBroker.TIMEOUT_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The log cleaner's dynamic settings through kafka-clients' Admin, as Kafka's LogCleaner
 * reconfigures them: log.cleaner.threads and log.cleaner.backoff.ms per broker (the threads
 * really are replaced), log.cleaner.io.max.bytes.per.second as a cluster default, Kafka's
 * double/halve limit on the thread count, and the settings surviving a restart.
 */
class CleanerReconfigurationTest {
    @TempDir
    Path dataDir;

    private static void alter(TestBroker broker, ConfigResource resource, String name, String value) throws Exception {
        broker.admin().incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry(name, value), AlterConfigOp.OpType.SET))))
            .all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    private static LogCleaner cleaner(TestBroker broker) {
        return broker.server().logManager().cleaner();
    }

    @Test
    void incrementalAlterConfigsChangesTheCleanerThreadsBackoffAndThrottleAtRuntime() throws Exception {
        ConfigResource thisBroker = new ConfigResource(ConfigResource.Type.BROKER, "1");
        ConfigResource clusterDefault = new ConfigResource(ConfigResource.Type.BROKER, "");
        try (TestBroker broker = new TestBroker(dataDir, Map.of("log.cleaner.dedupe.buffer.size", Integer.toString(4 << 20)))) {
            broker.createTopic("compacted", 1, Map.of("cleanup.policy", "compact"));
            assertThat(cleaner(broker)).as("a compacted topic starts the cleaner").isNotNull();
            assertThat(cleaner(broker).aliveThreadNames()).containsExactly(LogCleaner.THREAD_NAME_PREFIX + "0");

            alter(broker, thisBroker, "log.cleaner.threads", "2");
            alter(broker, thisBroker, "log.cleaner.backoff.ms", "1234");
            alter(broker, clusterDefault, "log.cleaner.io.max.bytes.per.second", "1048576");
            // The AlterConfigs is answered once the metadata is published, and the cleaner is reconfigured while it is.
            assertThat(cleaner(broker).aliveThreadNames()).containsExactly(LogCleaner.THREAD_NAME_PREFIX + "0", LogCleaner.THREAD_NAME_PREFIX + "1");
            assertThat(cleaner(broker).config().numThreads()).isEqualTo(2);
            assertThat(cleaner(broker).config().backoffMs()).isEqualTo(1234);
            assertThat(cleaner(broker).throttler().desiredRatePerSec()).isEqualTo(1048576.0);
            assertThat(cleaner(broker).deadThreadCount()).isZero();
            long liveThreads = Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().startsWith(LogCleaner.THREAD_NAME_PREFIX) && thread.isAlive()).count();
            assertThat(liveThreads).as("the old thread was replaced, not added to").isEqualTo(2);

            Config described = broker.admin().describeConfigs(List.of(thisBroker)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).get(thisBroker);
            assertThat(described.get("log.cleaner.threads").value()).isEqualTo("2");
            assertThat(described.get("log.cleaner.threads").isReadOnly()).isFalse();
            assertThat(described.get("log.cleaner.threads").source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG);

            // Kafka's limit: at most double (or half) the current count in one change.
            assertThatThrownBy(() -> alter(broker, thisBroker, "log.cleaner.threads", "5"))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("more than double the current value 2");
            assertThat(cleaner(broker).aliveThreadNames()).hasSize(2);
            assertThatThrownBy(() -> alter(broker, thisBroker, "log.cleaner.enable", "false"))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(InvalidRequestException.class);
        }

        try (TestBroker restarted = new TestBroker(dataDir, Map.of("log.cleaner.dedupe.buffer.size", Integer.toString(4 << 20)))) {
            assertThat(cleaner(restarted)).isNotNull();
            assertThat(cleaner(restarted).config().numThreads()).as("the dynamic setting applies from the start").isEqualTo(2);
            assertThat(cleaner(restarted).aliveThreadNames()).hasSize(2);
            assertThat(cleaner(restarted).config().backoffMs()).isEqualTo(1234);
        }
    }
}
