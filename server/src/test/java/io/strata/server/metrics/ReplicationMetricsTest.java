package io.strata.server.metrics;

import io.strata.common.MockTime;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.record.PartitionRecord;
import io.strata.metadata.record.RegisterBrokerRecord;
import io.strata.metadata.record.TopicRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.server.purgatory.DelayedOperationPurgatory;
import io.strata.server.replica.DelayedFetch;
import io.strata.server.replica.DelayedProduce;
import io.strata.server.replica.FetchParams;
import io.strata.server.replica.FetchPartitionData;
import io.strata.server.replica.FollowerFetching;
import io.strata.server.replica.PartitionFetchInfo;
import io.strata.server.replica.ProducePartitionResult;
import io.strata.server.replica.ReplicaManager;
import io.strata.storage.LogConfig;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The replication gauges and counters over a real {@link ReplicaManager} whose partitions are put
 * in known states by metadata images (node 1, min.insync.replicas 2, a fake clock): each gauge per
 * partition and summed per broker, the ISR change counters after answered AlterPartitions, and
 * the replication bytes of followers' fetches kept apart from consumer bytes.
 */
class ReplicationMetricsTest {
    private static final int NODE = 1;
    private static final long REPLICA_LAG_TIME_MAX_MS = ReplicaManager.DEFAULT_REPLICA_LAG_TIME_MAX_MS;

    @TempDir
    Path dataDir;
    private final MockTime time = new MockTime();
    private LogManager logManager;
    private DelayedOperationPurgatory<DelayedProduce> producePurgatory;
    private DelayedOperationPurgatory<DelayedFetch> fetchPurgatory;
    private ReplicaManager replicaManager;
    private final BrokerTopicMetrics topicMetrics = new BrokerTopicMetrics(() -> null);
    private final List<CompletableFuture<AlterPartitionResponseData.PartitionData>> isrChanges = new ArrayList<>();
    private MetadataImage image = MetadataImage.EMPTY;

    @BeforeEach
    void start() throws Exception {
        logManager = new LogManager(new LogManager.Settings(List.of(dataDir), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L, false), time);
        logManager.startup(topic -> LogConfig.defaults());
        producePurgatory = new DelayedOperationPurgatory<>("Produce", time, 1_000);
        fetchPurgatory = new DelayedOperationPurgatory<>("Fetch", time, 1_000);
        replicaManager = new ReplicaManager(NODE, logManager, Map.of("min.insync.replicas", "2"), time, producePurgatory, fetchPurgatory);
        replicaManager.setFollowerFetching(FollowerFetching.NONE);
        replicaManager.setTopicMetrics(topicMetrics);
        replicaManager.setIsrChangeSubmitter((topicPartition, topicId, change) -> {
            CompletableFuture<AlterPartitionResponseData.PartitionData> answer = new CompletableFuture<>();
            isrChanges.add(answer);
            return answer;
        });
        apply(broker(2, 10L), broker(3, 20L));
    }

    @AfterEach
    void stop() throws Exception {
        replicaManager.close();
        producePurgatory.shutdown();
        fetchPurgatory.shutdown();
        logManager.close();
    }

    private void apply(ApiMessage... records) {
        MetadataImage next = image.apply(List.of(records), image.offset() + 1);
        replicaManager.publish(image, next);
        image = next;
    }

    private static RegisterBrokerRecord broker(int id, long epoch) {
        return new RegisterBrokerRecord().setBrokerId(id).setBrokerEpoch(epoch).setIncarnationId(UUID.randomUUID()).setFenced(false);
    }

    private void createTopic(String name, int leader, List<Integer> replicas, List<Integer> isr) {
        UUID topicId = UUID.randomUUID();
        PartitionRecord partition = new PartitionRecord().setTopicId(topicId).setPartitionId(0).setLeader(leader).setLeaderEpoch(0)
            .setPartitionEpoch(0);
        partition.replicas().addAll(replicas);
        partition.isr().addAll(isr);
        apply(new TopicRecord().setName(name).setTopicId(topicId), partition);
    }

    private PrometheusText scrape() {
        MetricsRegistry registry = new MetricsRegistry();
        registry.register(new ReplicationMetrics(() -> replicaManager, () -> null));
        registry.register(topicMetrics);
        return PrometheusText.parse(registry.scrape(ExpositionFormat.PROMETHEUS_TEXT));
    }

    private static double partitionValue(PrometheusText scrape, String name, String topic) {
        List<PrometheusText.Sample> samples = scrape.samples(name, sample -> topic.equals(sample.label("topic")) && "0".equals(sample.label("partition")));
        assertThat(samples).as("%s of %s", name, topic).hasSize(1);
        return samples.get(0).value();
    }

    private static double value(PrometheusText scrape, String name) {
        assertThat(scrape.samples(name)).as(name).hasSize(1);
        return scrape.samples(name).get(0).value();
    }

    @Test
    void partitionGaugesFollowTheLeadersIsrAndAreZeroOnFollowers() {
        createTopic("full", NODE, List.of(1, 2, 3), List.of(1, 2, 3));
        createTopic("at-min", NODE, List.of(1, 2, 3), List.of(1, 2));
        createTopic("under-min", NODE, List.of(1, 2, 3), List.of(1));
        createTopic("followed", 2, List.of(1, 2, 3), List.of(2, 3));
        // RF 1: min ISR 2 is capped at the replication factor, so the lone replica is exactly at min ISR (Kafka's effectiveMinIsr).
        createTopic("single", NODE, List.of(1), List.of(1));

        PrometheusText scrape = scrape();
        String[] topics = {"full", "at-min", "under-min", "followed", "single"};
        double[][] expected = {
            // underreplicated, underminisr, atminisr, insyncreplicascount, replicascount
            {0, 0, 0, 3, 3},
            {1, 0, 1, 2, 3},
            {1, 1, 0, 1, 3},
            {0, 0, 0, 0, 0},
            {0, 0, 1, 1, 1},
        };
        String[] names = {"kafka_cluster_partition_underreplicated", "kafka_cluster_partition_underminisr", "kafka_cluster_partition_atminisr",
            "kafka_cluster_partition_insyncreplicascount", "kafka_cluster_partition_replicascount"};
        for (int t = 0; t < topics.length; t++) {
            for (int n = 0; n < names.length; n++) {
                assertThat(partitionValue(scrape, names[n], topics[t])).as("%s of %s", names[n], topics[t]).isEqualTo(expected[t][n]);
            }
        }
        assertThat(value(scrape, "kafka_server_replicamanager_partitioncount")).isEqualTo(5);
        assertThat(value(scrape, "kafka_server_replicamanager_leadercount")).isEqualTo(4);
        assertThat(value(scrape, "kafka_server_replicamanager_underreplicatedpartitions")).isEqualTo(2);
        assertThat(value(scrape, "kafka_server_replicamanager_underminisrpartitioncount")).isEqualTo(1);
        assertThat(value(scrape, "kafka_server_replicamanager_atminisrpartitioncount")).isEqualTo(2);
        assertThat(value(scrape, "kafka_server_replicamanager_offlinereplicacount")).isZero();
        assertThat(value(scrape, "kafka_server_replicamanager_reassigningpartitions")).isZero();
    }

    @Test
    void reassigningPartitionsCountsLedPartitionsWhoseImageNamesAddingOrRemovingReplicas() {
        UUID topicId = UUID.randomUUID();
        PartitionRecord moving = new PartitionRecord().setTopicId(topicId).setPartitionId(0).setLeader(NODE).setLeaderEpoch(0).setPartitionEpoch(0);
        moving.replicas().addAll(List.of(1, 2, 3, 4));
        moving.isr().addAll(List.of(1, 2, 3));
        moving.setAddingReplicas(new java.util.ArrayList<>(List.of(4)));
        apply(new TopicRecord().setName("moving").setTopicId(topicId), moving);
        createTopic("still", NODE, List.of(1, 2, 3), List.of(1, 2, 3));

        assertThat(value(scrape(), "kafka_server_replicamanager_reassigningpartitions")).isEqualTo(1);
    }

    @Test
    void preferredReplicaImbalanceCountsPartitionsNotLedByTheirFirstReplicaIncludingLeaderlessOnes() {
        createTopic("preferred", NODE, List.of(1, 2, 3), List.of(1, 2, 3));
        createTopic("moved", 2, List.of(1, 2, 3), List.of(1, 2, 3));
        createTopic("leaderless", -1, List.of(1, 2, 3), List.of(1));

        assertThat(ServerMetrics.preferredReplicaImbalance(image)).isEqualTo(2);
    }

    @Test
    void isrChangesAndReplicationBytesAreCounted() throws Exception {
        createTopic("growing", NODE, List.of(1, 2, 3), List.of(1, 2));
        TopicPartition tp = new TopicPartition("growing", 0);
        produce(tp, 3);

        FetchPartitionData fromTwo = followerFetch(tp, 2, 10L, 0);
        int replicated = fromTwo.records().sizeInBytes();
        assertThat(replicated).as("follower 2 read the three records").isPositive();
        // Follower 3 at the log end is caught up: an expand is sent; the controller first refuses it, then commits it.
        followerFetch(tp, 3, 20L, 3);
        assertThat(isrChanges).hasSize(1);
        isrChanges.get(0).complete(answer(ErrorCode.INELIGIBLE_REPLICA, List.of(), 0));
        followerFetch(tp, 3, 20L, 3);
        assertThat(isrChanges).hasSize(2);
        isrChanges.get(1).complete(answer(ErrorCode.NONE, List.of(1, 2, 3), 1));
        assertThat(replicaManager.partition(tp).isr()).containsExactlyInAnyOrder(1, 2, 3);
        // Nobody fetches for longer than replica.lag.time.max.ms: both followers are shrunk out.
        time.advance(REPLICA_LAG_TIME_MAX_MS + 1);
        replicaManager.maybeShrinkIsrs();
        assertThat(isrChanges).hasSize(3);
        isrChanges.get(2).complete(answer(ErrorCode.NONE, List.of(1), 2));

        PrometheusText scrape = scrape();
        assertThat(value(scrape, "kafka_server_replicamanager_isrexpands_total")).isEqualTo(1);
        assertThat(value(scrape, "kafka_server_replicamanager_failedisrupdates_total")).isEqualTo(1);
        assertThat(value(scrape, "kafka_server_replicamanager_isrshrinks_total")).isEqualTo(1);
        assertThat(partitionValue(scrape, "kafka_cluster_partition_underminisr", "growing")).isEqualTo(1);
        assertThat(value(scrape, "kafka_server_replicamanager_underminisrpartitioncount")).isEqualTo(1);
        // Followers' bytes are replication bytes out, not consumer bytes out; their fetches still count as fetch requests.
        assertThat(value(scrape, "kafka_server_brokertopicmetrics_replicationbytesout_total")).isEqualTo(replicated);
        assertThat(scrape.sum("kafka_server_brokertopicmetrics_bytesout_total", "topic", "growing")).isZero();
        assertThat(scrape.sum("kafka_server_brokertopicmetrics_totalfetchrequests_total", "topic", "growing")).isEqualTo(3);
        topicMetrics.recordReplicationBytesIn(123);
        assertThat(value(scrape(), "kafka_server_brokertopicmetrics_replicationbytesin_total")).isEqualTo(123);
    }

    @Test
    void reassignmentBytesOutCountOnlyAnswersToAnAddingReplica() throws Exception {
        apply(broker(4, 30L));
        UUID topicId = UUID.randomUUID();
        PartitionRecord moving = new PartitionRecord().setTopicId(topicId).setPartitionId(0).setLeader(NODE).setLeaderEpoch(0).setPartitionEpoch(0);
        moving.replicas().addAll(List.of(1, 2, 4));
        moving.isr().addAll(List.of(1, 2));
        moving.setAddingReplicas(new ArrayList<>(List.of(4)));
        apply(new TopicRecord().setName("moving").setTopicId(topicId), moving);
        TopicPartition tp = new TopicPartition("moving", 0);
        produce(tp, 3);
        assertThat(replicaManager.partition(tp).isAddingReplica(4)).isTrue();
        assertThat(replicaManager.partition(tp).isAddingReplica(2)).isFalse();
        assertThat(replicaManager.partition(tp).isAddingLocalReplica()).as("the leader is not being added").isFalse();

        int toMember = followerFetch(tp, 2, 10L, 0).records().sizeInBytes();
        int toAdding = followerFetch(tp, 4, 30L, 0).records().sizeInBytes();
        assertThat(toAdding).as("the adding replica read the three records").isPositive();

        PrometheusText scrape = scrape();
        assertThat(value(scrape, "kafka_server_brokertopicmetrics_reassignmentbytesout_total")).isEqualTo(toAdding);
        assertThat(value(scrape, "kafka_server_brokertopicmetrics_replicationbytesout_total")).as("reassignment bytes are replication bytes too")
            .isEqualTo(toMember + toAdding);
        assertThat(value(scrape, "kafka_server_brokertopicmetrics_reassignmentbytesin_total")).isZero();
        topicMetrics.recordReassignmentBytesIn(77);
        assertThat(value(scrape(), "kafka_server_brokertopicmetrics_reassignmentbytesin_total")).isEqualTo(77);
    }

    @Test
    void consumerReadsServedAsAFollowerAreCounted() {
        createTopic("followed", 2, List.of(1, 2, 3), List.of(1, 2, 3));
        TopicPartition tp = new TopicPartition("followed", 0);
        assertThat(value(scrape(), "strata_replication_follower_reads_for_consumers_total")).isZero();

        CompletableFuture<FetchPartitionData> result = new CompletableFuture<>();
        LinkedHashMap<TopicPartition, PartitionFetchInfo> infos = new LinkedHashMap<>();
        infos.put(tp, new PartitionFetchInfo(0, 1 << 20, 0, -1, 0L));
        replicaManager.fetchMessages(FetchParams.consumer(0, 1, 1 << 20, io.strata.storage.FetchIsolation.HIGH_WATERMARK,
            new io.strata.server.replica.ClientMetadata("", "consumer", "PLAINTEXT")), infos, results -> result.complete(results.get(tp)));
        assertThat(result.join().error()).isEqualTo(ErrorCode.NONE);

        assertThat(value(scrape(), "strata_replication_follower_reads_for_consumers_total")).isEqualTo(1);
    }

    private static AlterPartitionResponseData.PartitionData answer(ErrorCode error, List<Integer> isr, int partitionEpoch) {
        AlterPartitionResponseData.PartitionData answer = new AlterPartitionResponseData.PartitionData().setPartitionIndex(0)
            .setErrorCode(error.code());
        if (error == ErrorCode.NONE) {
            answer.setLeaderId(NODE).setLeaderEpoch(0).setIsr(isr).setPartitionEpoch(partitionEpoch);
        }
        return answer;
    }

    private void produce(TopicPartition tp, int count) throws Exception {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0);
        for (int i = 0; i < count; i++) {
            builder.append(1_000L + i, null, ("v" + i).getBytes(StandardCharsets.UTF_8));
        }
        Map<TopicPartition, MemoryRecords> entries = new LinkedHashMap<>();
        entries.put(tp, builder.build());
        CompletableFuture<ProducePartitionResult> result = new CompletableFuture<>();
        replicaManager.appendRecords(30_000L, (short) 1, false, UnifiedLog.AppendOrigin.CLIENT, entries, results -> result.complete(results.get(tp)));
        assertThat(result.get(10, TimeUnit.SECONDS).error()).isEqualTo(ErrorCode.NONE);
    }

    private FetchPartitionData followerFetch(TopicPartition tp, int replica, long brokerEpoch, long offset) throws Exception {
        CompletableFuture<FetchPartitionData> result = new CompletableFuture<>();
        LinkedHashMap<TopicPartition, PartitionFetchInfo> infos = new LinkedHashMap<>();
        infos.put(tp, new PartitionFetchInfo(offset, 1 << 20, 0, offset == 0 ? -1 : 0, 0L));
        replicaManager.fetchMessages(FetchParams.follower(0, 1, 1 << 20, replica, brokerEpoch), infos, results -> result.complete(results.get(tp)));
        FetchPartitionData data = result.get(10, TimeUnit.SECONDS);
        assertThat(data.error()).isEqualTo(ErrorCode.NONE);
        return data;
    }
}
