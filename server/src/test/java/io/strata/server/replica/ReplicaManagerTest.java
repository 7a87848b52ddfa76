package io.strata.server.replica;

import io.strata.common.Time;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.record.PartitionRecord;
import io.strata.metadata.record.TopicRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.server.purgatory.DelayedOperationPurgatory;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

class ReplicaManagerTest {
    private static final int NODE = 1;

    @TempDir
    Path dataDir;
    private LogManager logManager;
    private DelayedOperationPurgatory<DelayedProduce> producePurgatory;
    private DelayedOperationPurgatory<DelayedFetch> fetchPurgatory;
    private ReplicaManager replicaManager;

    @BeforeEach
    void start() throws Exception {
        logManager = new LogManager(new LogManager.Settings(List.of(dataDir), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L, false),
            Time.SYSTEM);
        logManager.startup(topic -> io.strata.storage.LogConfig.defaults());
        producePurgatory = new DelayedOperationPurgatory<>("produce", Time.SYSTEM, 1_000);
        fetchPurgatory = new DelayedOperationPurgatory<>("fetch", Time.SYSTEM, 1_000);
        replicaManager = new ReplicaManager(NODE, logManager, Map.of(), Time.SYSTEM, producePurgatory, fetchPurgatory);
    }

    @AfterEach
    void stop() throws Exception {
        replicaManager.close();
        producePurgatory.shutdown();
        fetchPurgatory.shutdown();
        logManager.close();
    }

    /** A topic of {@code partitions} partitions; those with an even index are on this node, the others on node 2. */
    private static List<ApiMessage> topic(String name, UUID id, int partitions) {
        List<ApiMessage> records = new ArrayList<>();
        records.add(new TopicRecord().setName(name).setTopicId(id));
        for (int index = 0; index < partitions; index++) {
            int replica = index % 2 == 0 ? NODE : 2;
            PartitionRecord partition = new PartitionRecord().setTopicId(id).setPartitionId(index).setLeader(replica).setLeaderEpoch(0)
                .setPartitionEpoch(0);
            partition.replicas().add(replica);
            partition.isr().add(replica);
            records.add(partition);
        }
        return records;
    }

    /**
     * A topic deleted and created again under its name between two images (a lagging node that
     * loads a snapshot sees both at once): the new partition is hosted, with the new topic id.
     */
    @Test
    void aTopicDeletedAndCreatedAgainWithinOneImageKeepsItsNewPartition() throws Exception {
        UUID oldId = UUID.randomUUID();
        UUID newId = UUID.randomUUID();
        MetadataImage before = MetadataImage.EMPTY.apply(topic("again", oldId, 1), 1);
        replicaManager.publish(MetadataImage.EMPTY, before);
        assertThat(replicaManager.partition(new TopicPartition("again", 0)).log().topicId()).contains(oldId);

        List<ApiMessage> recreate = new ArrayList<>();
        recreate.add(new io.strata.metadata.record.RemoveTopicRecord().setTopicId(oldId));
        recreate.addAll(topic("again", newId, 1));
        MetadataImage after = before.apply(recreate, 2);
        replicaManager.publish(before, after);

        Partition hosted = replicaManager.partition(new TopicPartition("again", 0));
        assertThat(hosted).as("the re-created partition is hosted").isNotNull();
        assertThat(hosted.log().topicId()).contains(newId);
        assertThat(replicaManager.leadershipError(new TopicPartition("again", 0))).isEqualTo(ErrorCode.NONE);
    }

    @Test
    void anImageWithManyNewPartitionsCreatesEveryLocalLogBeforePublishReturns() {
        UUID id = UUID.randomUUID();
        int partitions = 3 * ReplicaManager.LOG_CREATION_THREADS * 10 + 1;
        MetadataImage image = MetadataImage.EMPTY.apply(topic("many", id, partitions), partitions);

        replicaManager.publish(MetadataImage.EMPTY, image);

        for (int index = 0; index < partitions; index++) {
            TopicPartition topicPartition = new TopicPartition("many", index);
            if (index % 2 == 0) {
                assertThat(replicaManager.leadershipError(topicPartition)).as("led here: %s", topicPartition).isEqualTo(ErrorCode.NONE);
                assertThat(logManager.getLog(topicPartition)).isNotNull();
                assertThat(logManager.getLog(topicPartition).topicId()).contains(id);
                assertThat(Files.isDirectory(dataDir.resolve(topicPartition.toString()))).isTrue();
            } else {
                assertThat(replicaManager.leadershipError(topicPartition)).as("led by node 2: %s", topicPartition)
                    .isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER);
                assertThat(logManager.getLog(topicPartition)).isNull();
            }
        }
        assertThat(logManager.allLogs()).hasSize((partitions + 1) / 2);
    }
}
