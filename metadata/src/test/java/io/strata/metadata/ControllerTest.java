package io.strata.metadata;

import io.strata.common.MockTime;
import io.strata.protocol.ErrorCode;
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
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import static org.assertj.core.api.Assertions.assertThat;

class ControllerTest {
    @TempDir
    Path dir;

    private final MockTime time = new MockTime();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private Controller controller;
    private MetadataLog metadataLog;

    @AfterEach
    void tearDown() throws Exception {
        if (controller != null) {
            controller.close();
            metadataLog.close();
        }
        scheduler.shutdownNow();
    }

    private Controller start() throws Exception {
        if (controller != null) {
            controller.close();
            metadataLog.close();
        }
        UnifiedLog log = UnifiedLog.load(dir.resolve("__cluster_metadata-0"), new TopicPartition("__cluster_metadata", 0),
            LogConfig.defaults(), time, scheduler, new UnifiedLog.LoadParams(0, 0, false, 86_400_000L, false));
        metadataLog = new MetadataLog(log);
        controller = new Controller(new ControllerSettings(1, 3, (short) 1, true, Map.of()), metadataLog, time);
        controller.replay();
        controller.registerBroker(List.of(new BrokerRegistration.Endpoint("PLAINTEXT", "localhost", 9092, (short) 0)), null,
            Map.of("metadata.version", (short) 33)).get();
        return controller;
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
        MetadataImage image = controller.image();
        assertThat(image.topic("orders").partitionCount()).isEqualTo(4);
        assertThat(image.topic("defaults").partitionCount()).isEqualTo(3);
        assertThat(image.configs(ConfigResource.topic("defaults"))).containsEntry("retention.ms", "1000");
        assertThat(image.topic(results.get(0).topicId()).name()).isEqualTo("orders");

        start();
        assertThat(controller.image().topicsByName().keySet()).containsExactlyInAnyOrder("orders", "defaults");
        assertThat(controller.image().topic("orders").id()).isEqualTo(results.get(0).topicId());
        assertThat(controller.image().brokers()).containsKey(1);
        assertThat(controller.image().features()).containsEntry("metadata.version", (short) 33);
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
        assertThat(controller.image().topicsByName()).containsOnlyKeys("a.b");
    }

    @Test
    void validateOnlyWritesNothing() throws Exception {
        start();
        long before = metadataLog.log().logEndOffset();
        assertThat(controller.createTopics(List.of(topic("t", 2, 1)), true).get().get(0).errorCode()).isZero();
        assertThat(metadataLog.log().logEndOffset()).isEqualTo(before);
        assertThat(controller.image().topic("t")).isNull();
    }

    @Test
    void deletingAndAddingPartitions() throws Exception {
        start();
        controller.createTopics(List.of(topic("t", 2, 1)), false).get();
        var grown = controller.createPartitions(List.of(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("t").setCount(5),
            new CreatePartitionsRequestData.CreatePartitionsTopic().setName("missing").setCount(5)), false).get();
        assertThat(grown).extracting(r -> ErrorCode.forCode(r.errorCode())).containsExactly(ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(controller.image().topic("t").partitionCount()).isEqualTo(5);
        var shrink = controller.createPartitions(List.of(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("t").setCount(2)), false).get();
        assertThat(shrink.get(0).errorCode()).isEqualTo(ErrorCode.INVALID_PARTITIONS.code());
        var deleted = controller.deleteTopics(Arrays.asList("t", "nope"), Arrays.asList(null, null)).get();
        assertThat(deleted).extracting(Controller.DeleteResult::error).containsExactly(ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(controller.image().topic("t")).isNull();
        start();
        assertThat(controller.image().topic("t")).isNull();
    }

    @Test
    void producerIdBlocksAreNeverReusedAcrossRestarts() throws Exception {
        start();
        long first = controller.allocateProducerIds(Controller.PRODUCER_ID_BLOCK_SIZE).get();
        long second = controller.allocateProducerIds(Controller.PRODUCER_ID_BLOCK_SIZE).get();
        assertThat(second).isEqualTo(first + Controller.PRODUCER_ID_BLOCK_SIZE);
        start();
        assertThat(controller.allocateProducerIds(Controller.PRODUCER_ID_BLOCK_SIZE).get()).isEqualTo(second + Controller.PRODUCER_ID_BLOCK_SIZE);
    }
}
