package io.strata.server.metrics;

import io.strata.server.replica.ReplicationQuotaManager;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The replication throttles' measured rates, read at scrape time: Kafka's
 * {@code kafka.server:type=LeaderReplication} and {@code type=FollowerReplication} attribute
 * {@code byte-rate} as {@code kafka_server_leaderreplication_byte_rate} and
 * {@code kafka_server_followerreplication_byte_rate}, and {@code type=AlterLogDirsReplication} as
 * {@code kafka_server_alterlogdirsreplication_byte_rate} (bytes per second over the quota's
 * {@code replication.quota.window.num} windows; only bytes of throttled partitions count), plus the
 * bound in force as {@code strata_replication_throttled_rate_bytes} (Long.MAX_VALUE = none).
 *
 * <p>Thread-safety: the quota managers are thread-safe; a scrape may run on any thread.
 */
public final class ReplicationQuotaMetrics implements MetricsCollector {
    private final Supplier<List<ReplicationQuotaManager>> quotas;

    /** @param quotas the two throttles, or a supplier answering null before start-up (the families are then left out) */
    public ReplicationQuotaMetrics(Supplier<List<ReplicationQuotaManager>> quotas) {
        this.quotas = Objects.requireNonNull(quotas, "quotas");
    }

    @Override
    public void collect(List<MetricFamily> out) {
        List<ReplicationQuotaManager> current = quotas.get();
        if (current == null) {
            return;
        }
        MetricFamily bound = MetricFamily.gauge("strata_replication_throttled_rate_bytes",
            "The replication throttle in force in bytes per second (leader.replication.throttled.rate / follower.replication.throttled.rate"
                + " / replica.alter.log.dirs.io.max.bytes.per.second;"
                + " 9223372036854775807 = none)", "side");
        for (ReplicationQuotaManager quota : current) {
            String group = quota.side().metricGroup().toLowerCase(java.util.Locale.ROOT);
            out.add(MetricFamily.gauge("kafka_server_" + group + "_byte_rate", "Bytes per second of throttled partitions' "
                + describe(quota.side()) + ", over the replication quota window").add(quota.byteRate()));
            bound.add(quota.upperBound(), quota.side().name().toLowerCase(java.util.Locale.ROOT));
        }
        out.add(bound);
    }

    private static String describe(ReplicationQuotaManager.Side side) {
        return switch (side) {
            case LEADER -> "follower fetch answers sent by this leader";
            case FOLLOWER -> "fetched records appended by this follower";
            case ALTER_LOG_DIRS -> "records copied into future logs (moves between log dirs)";
        };
    }
}
