package io.strata.metadata;

import io.strata.common.BackgroundErrors;
import io.strata.common.Time;
import io.strata.raft.FileQuorumStateStore;
import io.strata.raft.FileRaftLog;
import io.strata.raft.RaftClient;
import io.strata.raft.RaftConfig;
import io.strata.raft.RaftNode;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.BrokerHeartbeatRequestData;
import io.strata.protocol.message.BrokerRegistrationRequestData;
import io.strata.protocol.message.CreatePartitionsRequestData;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.CreateTopicsResponseData;
import io.strata.storage.LogConfig;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import static org.assertj.core.api.Assertions.assertThat;

class ControllerTest {
    @TempDir
    Path dir;

    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private QuorumController controller;
    private MetadataLoader loader;
    private RaftNode quorum;
    private UnifiedLog log;

    @AfterEach
    void tearDown() throws Exception {
        stop();
        scheduler.shutdownNow();
    }

    private void stop() throws Exception {
        if (quorum != null) {
            quorum.close();
            controller.close();
            loader.close();
            log.close();
            quorum = null;
        }
    }

    /** A one-voter quorum over the log in {@code dir}, as a single node runs it; returns once the controller is active. */
    private QuorumController start() throws Exception {
        stop();
        Path metadataDir = dir.resolve("__cluster_metadata-0");
        log = UnifiedLog.load(metadataDir, new TopicPartition("__cluster_metadata", 0),
            LogConfig.of(Map.of(), Map.of(LogConfig.RETENTION_MS, "-1", LogConfig.RETENTION_BYTES, "-1")), Time.SYSTEM, scheduler,
            new UnifiedLog.LoadParams(0, 0, false, 86_400_000L, false));
        loader = new MetadataLoader(1, new BackgroundErrors());
        controller = new QuorumController(new ControllerSettings(1, 3, (short) 1, true, Map.of()), Map.of("metadata.version", (short) 33),
            Time.SYSTEM, loader::whenApplied);
        quorum = new RaftNode(1, Set.of(1), "cluster", RaftConfig.DEFAULTS, new FileRaftLog(log), new FileQuorumStateStore(metadataDir),
            (destination, api, version, request) -> CompletableFuture.failedFuture(new IllegalStateException("one voter sends nothing")),
            Time.SYSTEM, new Random(1), new RaftClient.Listener() { }, new MetadataCommitListener(loader, controller));
        controller.start(quorum);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!controller.isActive()) {
            assertThat(System.nanoTime()).as("the controller becomes active").isLessThan(deadline);
            Thread.onSpinWait();
        }
        BrokerRegistrationRequestData registration = new BrokerRegistrationRequestData().setBrokerId(1).setIncarnationId(UUID.randomUUID());
        registration.listeners().add(new BrokerRegistrationRequestData.Listener().setName("PLAINTEXT").setHost("localhost").setPort(9092));
        long epoch = controller.registerBroker(registration).get(10, TimeUnit.SECONDS).brokerEpoch();
        assertThat(controller.brokerHeartbeat(new BrokerHeartbeatRequestData().setBrokerId(1).setBrokerEpoch(epoch)
            .setCurrentMetadataOffset(loader.nextOffset() - 1)).get(10, TimeUnit.SECONDS).isFenced()).as("unfenced once caught up").isFalse();
        return controller;
    }

    private MetadataImage image() {
        return loader.image();
    }

    private static CreateTopicsRequestData.CreatableTopic topic(String name, int partitions, int replication) {
        return new CreateTopicsRequestData.CreatableTopic().setName(name).setNumPartitions(partitions).setReplicationFactor((short) replication);
    }

    @Test
    void createdTopicsAreInTheImageAndSurviveARestart() throws Exception {
        start();
        List<CreateTopicsResponseData.CreatableTopicResult> results = controller.createTopics(List.of(
            topic("orders", 4, 1),
            topic("defaults", -1, -1).setConfigs(List.of(new CreateTopicsRequestData.CreatableTopicConfig().setName("retention.ms").setValue("1000"))),
            topic("orders", 1, 1)), false).get();
        assertThat(results).extracting(CreateTopicsResponseData.CreatableTopicResult::errorCode)
            .containsExactly(ErrorCode.NONE.code(), ErrorCode.NONE.code(), ErrorCode.INVALID_REQUEST.code());
        MetadataImage image = image();
        assertThat(image.topic("orders").partitionCount()).isEqualTo(4);
        assertThat(image.topic("defaults").partitionCount()).isEqualTo(3);
        assertThat(image.configs(ConfigResource.topic("defaults"))).containsEntry("retention.ms", "1000");
        assertThat(image.topic(results.get(0).topicId()).name()).isEqualTo("orders");

        start();
        assertThat(image().topicsByName().keySet()).containsExactlyInAnyOrder("orders", "defaults");
        assertThat(image().topic("orders").id()).isEqualTo(results.get(0).topicId());
        assertThat(image().brokers()).containsKey(1);
        assertThat(image().features()).containsEntry("metadata.version", (short) 33);
    }

    @Test
    void invalidCreationsGetKafkasErrorCodes() throws Exception {
        start();
        controller.createTopics(List.of(topic("a.b", 1, 1)), false).get();
        List<CreateTopicsResponseData.CreatableTopicResult> results = controller.createTopics(List.of(
            topic("a.b", 1, 1), topic("a_b", 1, 1), topic("bad/name", 1, 1), topic("zero", 0, 1), topic("rf3", 1, 3),
            topic("badconfig", 1, 1).setConfigs(List.of(new CreateTopicsRequestData.CreatableTopicConfig().setName("retention.ms").setValue("soon"))),
            topic("unknownconfig", 1, 1).setConfigs(List.of(new CreateTopicsRequestData.CreatableTopicConfig().setName("no.such").setValue("1")))),
            false).get();
        assertThat(results).extracting(r -> ErrorCode.forCode(r.errorCode())).containsExactly(ErrorCode.TOPIC_ALREADY_EXISTS,
            ErrorCode.INVALID_TOPIC_EXCEPTION, ErrorCode.INVALID_TOPIC_EXCEPTION, ErrorCode.INVALID_PARTITIONS,
            ErrorCode.INVALID_REPLICATION_FACTOR, ErrorCode.INVALID_CONFIG, ErrorCode.INVALID_CONFIG);
        assertThat(image().topicsByName()).containsOnlyKeys("a.b");
    }

    @Test
    void validateOnlyWritesNothing() throws Exception {
        start();
        long before = log.logEndOffset();
        assertThat(controller.createTopics(List.of(topic("t", 2, 1)), true).get().get(0).errorCode()).isZero();
        assertThat(log.logEndOffset()).isEqualTo(before);
        assertThat(image().topic("t")).isNull();
    }

    @Test
    void deletingAndAddingPartitions() throws Exception {
        start();
        controller.createTopics(List.of(topic("t", 2, 1)), false).get();
        var grown = controller.createPartitions(List.of(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("t").setCount(5),
            new CreatePartitionsRequestData.CreatePartitionsTopic().setName("missing").setCount(5)), false).get();
        assertThat(grown).extracting(r -> ErrorCode.forCode(r.errorCode())).containsExactly(ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(image().topic("t").partitionCount()).isEqualTo(5);
        var shrink = controller.createPartitions(List.of(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("t").setCount(2)), false).get();
        assertThat(shrink.get(0).errorCode()).isEqualTo(ErrorCode.INVALID_PARTITIONS.code());
        var deleted = controller.deleteTopics(Arrays.asList("t", "nope"), Arrays.asList(null, null)).get();
        assertThat(deleted).extracting(ControllerApi.DeleteResult::error).containsExactly(ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(image().topic("t")).isNull();
        start();
        assertThat(image().topic("t")).isNull();
    }

    @Test
    void producerIdBlocksAreNeverReusedAcrossRestarts() throws Exception {
        start();
        long first = controller.allocateProducerIds(1, 0).get();
        long second = controller.allocateProducerIds(1, 0).get();
        assertThat(second).isEqualTo(first + ControllerApi.PRODUCER_ID_BLOCK_SIZE);
        start();
        assertThat(controller.allocateProducerIds(1, 0).get()).isEqualTo(second + ControllerApi.PRODUCER_ID_BLOCK_SIZE);
    }
}
