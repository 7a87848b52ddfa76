package io.strata.server.replica.fetcher;

import io.strata.common.config.ConfigException;
import io.strata.server.config.ServerConfig;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ReplicaFetcherConfigTest {
    @Test
    void theBrokerDefaultsAreKafkas() {
        ReplicaFetcherConfig config = ReplicaFetcherConfig.from(ServerConfig.fromMap(Map.of()));
        assertThat(config).isEqualTo(new ReplicaFetcherConfig(500, 1, 1_048_576, 10_485_760, 1_000, 1, 30_000));
        assertThat(config).isEqualTo(ReplicaFetcherConfig.defaults());
    }

    @Test
    void theKeysAreRead() {
        ReplicaFetcherConfig config = ReplicaFetcherConfig.from(ServerConfig.fromMap(Map.of("replica.fetch.wait.max.ms", "200",
            "replica.fetch.min.bytes", "10", "replica.fetch.max.bytes", "2048", "replica.fetch.response.max.bytes", "4096",
            "replica.fetch.backoff.ms", "50", "num.replica.fetchers", "3", "replica.socket.timeout.ms", "5000")));
        assertThat(config).isEqualTo(new ReplicaFetcherConfig(200, 10, 2048, 4096, 50, 3, 5000));
    }

    @Test
    void theFetchWaitMustFitTheSocketTimeoutAndTheLagTime() {
        assertThatThrownBy(() -> ServerConfig.fromMap(Map.of("replica.fetch.wait.max.ms", "40000")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms");
        assertThatThrownBy(() -> ServerConfig.fromMap(Map.of("replica.fetch.wait.max.ms", "20000", "replica.lag.time.max.ms", "10000")))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms");
        // Equal is allowed, as in Kafka.
        assertThat(ServerConfig.fromMap(Map.of("replica.fetch.wait.max.ms", "30000")).getInt(ServerConfig.REPLICA_FETCH_WAIT_MAX_MS))
            .isEqualTo(30_000);
        assertThatThrownBy(() -> ServerConfig.fromMap(Map.of("num.replica.fetchers", "0"))).isInstanceOf(ConfigException.class);
        assertThatThrownBy(() -> new ReplicaFetcherConfig(600, 1, 1, 1, 1, 1, 500)).isInstanceOf(IllegalArgumentException.class);
    }
}
