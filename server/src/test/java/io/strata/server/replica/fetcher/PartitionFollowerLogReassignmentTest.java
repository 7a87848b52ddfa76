package io.strata.server.replica.fetcher;

import io.strata.common.MockTime;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.record.PartitionRecord;
import io.strata.metadata.record.RegisterBrokerRecord;
import io.strata.metadata.record.TopicRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.server.purgatory.DelayedOperationPurgatory;
import io.strata.server.replica.DelayedFetch;
import io.strata.server.replica.DelayedProduce;
import io.strata.server.replica.FollowerFetching;
import io.strata.server.replica.Partition;
import io.strata.server.replica.ReplicaManager;
import io.strata.storage.LogConfig;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Follower appends report their bytes as replication bytes always, and as reassignment bytes only
 * while the metadata image names this node (node 1) an adding replica of the partition (Kafka's
 * isAddingLocalReplica), over a real {@link ReplicaManager} driven by images.
 */
class PartitionFollowerLogReassignmentTest {
    private static final int NODE = 1;

    @TempDir
    Path dataDir;
    private final MockTime time = new MockTime();
    private LogManager logManager;
    private DelayedOperationPurgatory<DelayedProduce> producePurgatory;
    private DelayedOperationPurgatory<DelayedFetch> fetchPurgatory;
    private ReplicaManager replicaManager;
    private MetadataImage image = MetadataImage.EMPTY;
    private final AtomicLong replicationBytes = new AtomicLong();
    private final AtomicLong reassignmentBytes = new AtomicLong();

    @BeforeEach
    void start() throws Exception {
        logManager = new LogManager(new LogManager.Settings(List.of(dataDir), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L, false), time);
        logManager.startup(topic -> LogConfig.defaults());
        producePurgatory = new DelayedOperationPurgatory<>("Produce", time, 1_000);
        fetchPurgatory = new DelayedOperationPurgatory<>("Fetch", time, 1_000);
        replicaManager = new ReplicaManager(NODE, logManager, Map.of(), time, producePurgatory, fetchPurgatory);
        replicaManager.setFollowerFetching(FollowerFetching.NONE);
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

    /** A topic led by node 2 that this node follows, with {@code adding} as the reassignment's adding replicas. */
    private PartitionFollowerLog followed(String name, List<Integer> adding) {
        UUID topicId = UUID.randomUUID();
        PartitionRecord partition = new PartitionRecord().setTopicId(topicId).setPartitionId(0).setLeader(2).setLeaderEpoch(0).setPartitionEpoch(0);
        partition.replicas().addAll(List.of(2, 3, 1));
        partition.isr().addAll(List.of(2, 3));
        partition.setAddingReplicas(new ArrayList<>(adding));
        apply(new TopicRecord().setName(name).setTopicId(topicId), partition);
        Partition hosted = replicaManager.partition(new TopicPartition(name, 0));
        assertThat(hosted.isLeader()).isFalse();
        return new PartitionFollowerLog(hosted, tp -> { }, replicationBytes::addAndGet, reassignmentBytes::addAndGet);
    }

    private static MemoryRecords batch(long baseOffset) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, baseOffset).partitionLeaderEpoch(0);
        for (int i = 0; i < 3; i++) {
            builder.append(1_000L + i, null, ("v" + i).getBytes(StandardCharsets.UTF_8));
        }
        return builder.build();
    }

    @Test
    void appendsAsAnAddingReplicaCountAsReassignmentBytes() throws Exception {
        PartitionFollowerLog log = followed("moving", List.of(1));
        MemoryRecords records = batch(0);

        log.appendAsFollower(records, 0);

        assertThat(replicationBytes.get()).isEqualTo(records.sizeInBytes());
        assertThat(reassignmentBytes.get()).isEqualTo(records.sizeInBytes());
    }

    @Test
    void appendsOfAReplicaThatIsNotBeingAddedAreReplicationBytesOnly() throws Exception {
        PartitionFollowerLog log = followed("other-moving", List.of(3));
        MemoryRecords records = batch(0);

        log.appendAsFollower(records, 0);

        assertThat(replicationBytes.get()).isEqualTo(records.sizeInBytes());
        assertThat(reassignmentBytes.get()).as("node 3 is the one being added").isZero();
    }
}
