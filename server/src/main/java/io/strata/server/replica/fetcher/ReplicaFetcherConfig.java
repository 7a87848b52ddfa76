package io.strata.server.replica.fetcher;

import io.strata.server.config.ServerConfig;

/**
 * The follower-side replication settings, Kafka's keys and defaults:
 *
 * <pre>
 *   replica.fetch.wait.max.ms          500       MaxWaitMs of a follower Fetch
 *   replica.fetch.min.bytes            1         MinBytes
 *   replica.fetch.max.bytes            1048576   PartitionMaxBytes (a larger first batch still comes whole, KIP-74)
 *   replica.fetch.response.max.bytes   10485760  MaxBytes
 *   replica.fetch.backoff.ms           1000      pause after a failed request, and for a partition with an error
 *   num.replica.fetchers               1         fetchers (connections) per leader
 *   replica.socket.timeout.ms          30000     request timeout of the fetcher's connection
 * </pre>
 *
 * Relations (checked here and by {@link ServerConfig}, as Kafka's {@code KafkaConfig} checks them): a
 * long poll must end before the request times out ({@code replica.fetch.wait.max.ms <=
 * replica.socket.timeout.ms}), and a follower waiting in a long poll must not look lagging
 * ({@code replica.fetch.wait.max.ms <= replica.lag.time.max.ms}, checked by ServerConfig).
 *
 * <p>Immutable.
 */
public record ReplicaFetcherConfig(int fetchWaitMaxMs, int fetchMinBytes, int fetchMaxBytes, int fetchResponseMaxBytes,
                                   int fetchBackoffMs, int numFetchers, int socketTimeoutMs) {
    public ReplicaFetcherConfig {
        if (fetchWaitMaxMs < 0 || fetchMinBytes < 0 || fetchMaxBytes < 0 || fetchResponseMaxBytes < 0 || fetchBackoffMs < 0
            || numFetchers < 1 || socketTimeoutMs < 1) {
            throw new IllegalArgumentException("invalid replica fetcher settings: " + this);
        }
        if (fetchWaitMaxMs > socketTimeoutMs) {
            throw new IllegalArgumentException("replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to prevent"
                + " unnecessary socket timeouts: fetchWaitMaxMs=" + fetchWaitMaxMs + ", socketTimeoutMs=" + socketTimeoutMs);
        }
    }

    /** Kafka's defaults. */
    public static ReplicaFetcherConfig defaults() {
        return new ReplicaFetcherConfig(500, 1, 1_048_576, 10_485_760, 1_000, 1, 30_000);
    }

    public static ReplicaFetcherConfig from(ServerConfig config) {
        return new ReplicaFetcherConfig(config.getInt(ServerConfig.REPLICA_FETCH_WAIT_MAX_MS), config.getInt(ServerConfig.REPLICA_FETCH_MIN_BYTES),
            config.getInt(ServerConfig.REPLICA_FETCH_MAX_BYTES), config.getInt(ServerConfig.REPLICA_FETCH_RESPONSE_MAX_BYTES),
            config.getInt(ServerConfig.REPLICA_FETCH_BACKOFF_MS), config.getInt(ServerConfig.NUM_REPLICA_FETCHERS),
            config.getInt(ServerConfig.REPLICA_SOCKET_TIMEOUT_MS));
    }

    public ReplicaFetcherConfig withNumFetchers(int numFetchers) {
        return new ReplicaFetcherConfig(fetchWaitMaxMs, fetchMinBytes, fetchMaxBytes, fetchResponseMaxBytes, fetchBackoffMs, numFetchers,
            socketTimeoutMs);
    }
}
