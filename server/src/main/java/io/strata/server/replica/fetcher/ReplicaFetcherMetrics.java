package io.strata.server.replica.fetcher;

import io.strata.server.metrics.MetricFamily;
import io.strata.server.metrics.MetricsCollector;
import io.strata.storage.TopicPartition;

import java.util.List;
import java.util.Map;

/**
 * The follower-side metrics, Kafka's JMX names in the Prometheus form of docs/metrics.md:
 *
 * <pre>
 *   kafka_server_replicafetchermanager_maxlag{client_id="Replica"}                 ReplicaFetcherManager MaxLag
 *   kafka_server_replicafetchermanager_failedpartitionscount{client_id="Replica"}  FailedPartitionsCount
 *   kafka_server_replicafetchermanager_deadthreadcount{client_id="Replica"}        DeadThreadCount
 *   kafka_server_fetcherlagmetrics_consumerlag{client_id,topic,partition}          FetcherLagMetrics ConsumerLag
 *   kafka_server_fetcherstats_bytes_total{client_id}                               FetcherStats BytesPerSec
 *   kafka_server_fetcherstats_requests_total{client_id}                            FetcherStats RequestsPerSec
 * </pre>
 *
 * {@code client_id} of the per-fetcher series is the fetcher thread name
 * ({@code ReplicaFetcherThread-<id>-<leader>}); Kafka's {@code brokerHost} / {@code brokerPort} labels
 * are left out (adapted: the fetcher knows its leader by id). A partition's lag appears with the
 * first answer for it, as in Kafka. The per-fetcher counters restart when a fetcher is replaced
 * (resize, leader gone and back): Prometheus treats that as a counter reset.
 *
 * <p>Thread-safe: reads snapshots of the manager.
 */
public final class ReplicaFetcherMetrics implements MetricsCollector {
    static final String MANAGER_CLIENT_ID = "Replica";

    private final ReplicaFetcherManager manager;

    public ReplicaFetcherMetrics(ReplicaFetcherManager manager) {
        this.manager = manager;
    }

    @Override
    public void collect(List<MetricFamily> out) {
        out.add(MetricFamily.gauge("kafka_server_replicafetchermanager_maxlag", "Largest lag in offsets of a followed partition behind its "
            + "leader's high watermark", "client_id").add(manager.maxLag(), MANAGER_CLIENT_ID));
        out.add(MetricFamily.gauge("kafka_server_replicafetchermanager_failedpartitionscount", "Followed partitions whose fetching stopped "
            + "(storage failure, or fenced until a newer leader epoch)", "client_id").add(manager.failedPartitions().size(), MANAGER_CLIENT_ID));
        out.add(MetricFamily.gauge("kafka_server_replicafetchermanager_deadthreadcount", "Replica fetcher threads that ended unexpectedly",
            "client_id").add(manager.deadThreadCount(), MANAGER_CLIENT_ID));
        MetricFamily lag = MetricFamily.gauge("kafka_server_fetcherlagmetrics_consumerlag", "Offsets a followed partition is behind its leader's "
            + "high watermark", "client_id", "topic", "partition");
        MetricFamily bytes = MetricFamily.counter("kafka_server_fetcherstats_bytes_total", "Record batch bytes a fetcher appended", "client_id");
        MetricFamily requests = MetricFamily.counter("kafka_server_fetcherstats_requests_total", "Requests a fetcher sent to its leader",
            "client_id");
        for (ReplicaFetcher fetcher : manager.fetchers().values()) {
            for (Map.Entry<TopicPartition, PartitionFetchState> entry : fetcher.partitionStates().entrySet()) {
                if (entry.getValue().lag() != PartitionFetchState.UNKNOWN_LAG) {
                    lag.add(entry.getValue().lag(), fetcher.name(), entry.getKey().topic(), Integer.toString(entry.getKey().partition()));
                }
            }
            bytes.add(fetcher.bytesAppended(), fetcher.name());
            requests.add(fetcher.requests(), fetcher.name());
        }
        out.add(lag);
        out.add(bytes);
        out.add(requests);
    }
}
