package io.strata.server.replica.fetcher;

import io.strata.server.metrics.MetricFamily;
import io.strata.server.metrics.MetricsRegistry;
import io.strata.storage.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

class ReplicaFetcherMetricsTest {
    private static final UUID TOPIC_ID = new UUID(5, 6);

    @Test
    void lagFailuresAndTrafficAreExported() {
        TopicPartition lagging = new TopicPartition("orders", 0);
        TopicPartition fenced = new TopicPartition("orders", 1);
        InMemoryLog leaderLog = new InMemoryLog(lagging, TOPIC_ID).appendBatch(1, 4);
        ReplicaFetcherManager manager = new ReplicaFetcherManager(1, () -> 3L, ReplicaFetcherConfig.defaults(), leaderId -> {
            FakeLeader leader = new FakeLeader(leaderId);
            leader.lead(leaderLog, 1).highWatermark = 10; // the leader's HW is ahead of what it sends (a test liberty)
            leader.lead(new InMemoryLog(fenced, TOPIC_ID), 9);
            return leader;
        }, fetcher -> () -> { });
        manager.addPartitions(Map.of(lagging, new InitialFetchState(TOPIC_ID, 2, 1, new InMemoryLog(lagging, TOPIC_ID)),
            fenced, new InitialFetchState(TOPIC_ID, 2, 1, new InMemoryLog(fenced, TOPIC_ID))));
        ReplicaFetcher fetcher = manager.fetchers().values().iterator().next();
        fetcher.poll(0);
        fetcher.poll(0);

        MetricsRegistry registry = new MetricsRegistry();
        registry.register(new ReplicaFetcherMetrics(manager));
        List<MetricFamily> families = registry.collect();
        assertThat(value(families, "kafka_server_replicafetchermanager_maxlag")).isEqualTo(6);
        assertThat(value(families, "kafka_server_replicafetchermanager_failedpartitionscount")).isEqualTo(1);
        assertThat(value(families, "kafka_server_replicafetchermanager_deadthreadcount")).isZero();
        MetricFamily.Sample lag = family(families, "kafka_server_fetcherlagmetrics_consumerlag").samples().get(0);
        assertThat(lag.label("client_id")).isEqualTo("ReplicaFetcherThread-0-2");
        assertThat(lag.label("topic")).isEqualTo("orders");
        assertThat(lag.label("partition")).isEqualTo("0");
        assertThat(lag.value()).isEqualTo(6);
        assertThat(value(families, "kafka_server_fetcherstats_requests_total")).isEqualTo(2);
        assertThat(value(families, "kafka_server_fetcherstats_bytes_total")).isEqualTo(leaderLog.contents().get(0).remaining());
    }

    private static MetricFamily family(List<MetricFamily> families, String name) {
        return families.stream().filter(family -> family.name().equals(name)).findFirst().orElseThrow();
    }

    private static double value(List<MetricFamily> families, String name) {
        return family(families, name).samples().get(0).value();
    }
}
