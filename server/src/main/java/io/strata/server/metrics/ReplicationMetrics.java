package io.strata.server.metrics;

import io.strata.server.replica.Partition;
import io.strata.server.replica.ReplicaManager;
import io.strata.server.replica.fetcher.ReplicaFetcherManager;
import io.strata.server.replica.fetcher.ReplicaFetcherMetrics;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The replication metrics of one broker, read at scrape time from the hosted partitions and the
 * replica fetchers, in the Prometheus form of Kafka's JMX names (docs/metrics.md):
 *
 * <pre>
 *   kafka_cluster_partition_underreplicated{topic,partition}           Partition UnderReplicated
 *   kafka_cluster_partition_underminisr{topic,partition}               Partition UnderMinIsr
 *   kafka_cluster_partition_atminisr{topic,partition}                  Partition AtMinIsr
 *   kafka_cluster_partition_insyncreplicascount{topic,partition}       Partition InSyncReplicasCount
 *   kafka_cluster_partition_replicascount{topic,partition}             Partition ReplicasCount
 *   kafka_server_replicamanager_partitioncount                         ReplicaManager PartitionCount
 *   kafka_server_replicamanager_leadercount                            ReplicaManager LeaderCount
 *   kafka_server_replicamanager_underreplicatedpartitions              ReplicaManager UnderReplicatedPartitions
 *   kafka_server_replicamanager_underminisrpartitioncount              ReplicaManager UnderMinIsrPartitionCount
 *   kafka_server_replicamanager_atminisrpartitioncount                 ReplicaManager AtMinIsrPartitionCount
 *   kafka_server_replicamanager_offlinereplicacount                    ReplicaManager OfflineReplicaCount
 *   kafka_server_replicamanager_reassigningpartitions                  ReplicaManager ReassigningPartitions
 *   kafka_server_replicamanager_isrshrinks_total                       ReplicaManager IsrShrinksPerSec
 *   kafka_server_replicamanager_isrexpands_total                       ReplicaManager IsrExpandsPerSec
 *   kafka_server_replicamanager_failedisrupdates_total                 ReplicaManager FailedIsrUpdatesPerSec
 *   strata_replication_follower_reads_for_consumers_total              (Strata) consumer fetch partitions read here as a follower (KIP-392)
 *   + the fetcher families of {@link ReplicaFetcherMetrics}
 * </pre>
 *
 * As in Kafka, the per-partition gauges exist for every hosted partition and are 0 unless this
 * broker leads it; the states are read from the leader's committed ISR (not the metadata image),
 * so a shrink shows as soon as the controller answered the leader. With {@code e} the effective
 * min ISR ({@link Partition#effectiveMinIsr()}, min.insync.replicas capped by the replication
 * factor) and {@code r} the replication factor, a led partition is under-replicated when
 * {@code |ISR| < r}, under min ISR when {@code |ISR| < e} and at min ISR when {@code |ISR| == e}:
 * an RF=3 partition with min ISR 2 and ISR [1, 2] is under-replicated and at min ISR.
 * OfflineReplicaCount counts the replicas whose log directory failed (ReplicaManager's offline set).
 * ReassigningPartitions counts led partitions whose image names adding or removing replicas, as Kafka's.
 *
 * <p>Cost: one pass over the hosted partitions per scrape (volatile reads), nothing on the
 * produce or fetch path. Thread-safe: reads volatile state of the partitions and the fetchers'
 * synchronised snapshots; a partition's ISR and assignment are read one after the other, so a
 * scrape racing a change may see the one before the other (a metric, not an invariant).
 */
public final class ReplicationMetrics implements MetricsCollector {
    private final Supplier<ReplicaManager> replicaManager;
    private final Supplier<ReplicaFetcherManager> fetcherManager;

    /**
     * @param replicaManager the hosted partitions, or null before start-up creates them (the partition and replica manager families are then left out)
     * @param fetcherManager the replica fetchers, or null before replication starts (their families are then left out)
     */
    public ReplicationMetrics(Supplier<ReplicaManager> replicaManager, Supplier<ReplicaFetcherManager> fetcherManager) {
        this.replicaManager = Objects.requireNonNull(replicaManager, "replicaManager");
        this.fetcherManager = Objects.requireNonNull(fetcherManager, "fetcherManager");
    }

    /** Whether {@code partition} is led here with fewer in-sync replicas than replicas (Kafka's isUnderReplicated). */
    static boolean isUnderReplicated(Partition partition) {
        return partition.isLeader() && partition.isr().size() < partition.assignment().length;
    }

    /** Whether {@code partition} is led here with fewer in-sync replicas than its effective min ISR. */
    static boolean isUnderMinIsr(Partition partition) {
        return partition.isLeader() && partition.isr().size() < partition.effectiveMinIsr();
    }

    /** Whether {@code partition} is led here with exactly its effective min ISR in sync. */
    static boolean isAtMinIsr(Partition partition) {
        return partition.isLeader() && partition.isr().size() == partition.effectiveMinIsr();
    }

    @Override
    public void collect(List<MetricFamily> out) {
        ReplicaManager manager = replicaManager.get();
        if (manager != null) {
            collectPartitions(manager, out);
        }
        ReplicaFetcherManager fetchers = fetcherManager.get();
        if (fetchers != null) {
            new ReplicaFetcherMetrics(fetchers).collect(out);
        }
    }

    private static void collectPartitions(ReplicaManager manager, List<MetricFamily> out) {
        MetricFamily underReplicated = partitionGauge("kafka_cluster_partition_underreplicated",
            "1 if this broker leads the partition and it has fewer in-sync replicas than replicas.");
        MetricFamily underMinIsr = partitionGauge("kafka_cluster_partition_underminisr",
            "1 if this broker leads the partition and fewer replicas than its min.insync.replicas are in sync (acks=all produce fails).");
        MetricFamily atMinIsr = partitionGauge("kafka_cluster_partition_atminisr",
            "1 if this broker leads the partition and exactly min.insync.replicas replicas are in sync (one more loss blocks acks=all).");
        MetricFamily inSync = partitionGauge("kafka_cluster_partition_insyncreplicascount",
            "In-sync replicas of a partition this broker leads (0 when it does not lead it).");
        MetricFamily replicas = partitionGauge("kafka_cluster_partition_replicascount",
            "Replicas of a partition this broker leads (0 when it does not lead it).");
        int hosted = 0;
        int leaders = 0;
        int underReplicatedCount = 0;
        int underMinIsrCount = 0;
        int atMinIsrCount = 0;
        int reassigningCount = 0;
        for (Partition partition : ServerMetrics.sortedPartitions(manager)) {
            String topic = partition.topicPartition().topic();
            String index = Integer.toString(partition.topicPartition().partition());
            boolean leader = partition.isLeader();
            boolean under = isUnderReplicated(partition);
            boolean belowMin = isUnderMinIsr(partition);
            boolean atMin = isAtMinIsr(partition);
            hosted++;
            leaders += leader ? 1 : 0;
            underReplicatedCount += under ? 1 : 0;
            underMinIsrCount += belowMin ? 1 : 0;
            atMinIsrCount += atMin ? 1 : 0;
            reassigningCount += leader && partition.isReassigning() ? 1 : 0;
            underReplicated.add(under ? 1 : 0, topic, index);
            underMinIsr.add(belowMin ? 1 : 0, topic, index);
            atMinIsr.add(atMin ? 1 : 0, topic, index);
            inSync.add(leader ? partition.isr().size() : 0, topic, index);
            replicas.add(leader ? partition.assignment().length : 0, topic, index);
        }
        out.addAll(List.of(underReplicated, underMinIsr, atMinIsr, inSync, replicas));
        out.add(MetricFamily.gauge("kafka_server_replicamanager_partitioncount", "Partitions hosted by this broker.").add(hosted));
        out.add(MetricFamily.gauge("kafka_server_replicamanager_leadercount", "Partitions this broker leads.").add(leaders));
        out.add(MetricFamily.gauge("kafka_server_replicamanager_underreplicatedpartitions",
            "Led partitions with fewer in-sync replicas than replicas.").add(underReplicatedCount));
        out.add(MetricFamily.gauge("kafka_server_replicamanager_underminisrpartitioncount",
            "Led partitions with fewer in-sync replicas than min.insync.replicas.").add(underMinIsrCount));
        out.add(MetricFamily.gauge("kafka_server_replicamanager_atminisrpartitioncount",
            "Led partitions with exactly min.insync.replicas in-sync replicas.").add(atMinIsrCount));
        out.add(MetricFamily.gauge("kafka_server_replicamanager_offlinereplicacount",
            "Replicas on this broker whose log directory failed (KAFKA_STORAGE_ERROR until a restart).").add(manager.offlinePartitions().size()));
        out.add(MetricFamily.gauge("kafka_server_replicamanager_reassigningpartitions",
            "Led partitions being reassigned (KIP-455: adding or removing replicas).").add(reassigningCount));
        out.add(MetricFamily.counter("kafka_server_replicamanager_isrshrinks_total",
            "ISR shrinks the controller committed for partitions led here.").add(manager.isrShrinks()));
        out.add(MetricFamily.counter("kafka_server_replicamanager_isrexpands_total",
            "ISR expands the controller committed for partitions led here.").add(manager.isrExpands()));
        out.add(MetricFamily.counter("kafka_server_replicamanager_failedisrupdates_total",
            "ISR changes the controller refused or that could not be sent.").add(manager.failedIsrUpdates()));
        out.add(MetricFamily.counter("strata_replication_follower_reads_for_consumers_total",
            "Consumer fetch partitions this broker read as a follower of the partition (KIP-392 fetch from the closest replica).")
            .add(manager.followerReadsForConsumers()));
    }

    private static MetricFamily partitionGauge(String name, String help) {
        return MetricFamily.gauge(name, help, "topic", "partition");
    }
}
