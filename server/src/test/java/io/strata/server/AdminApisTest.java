package io.strata.server;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.Uuids;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.DeleteRecordsRequestData;
import io.strata.protocol.message.DeleteRecordsResponseData;
import io.strata.protocol.message.DeleteTopicsRequestData;
import io.strata.protocol.message.DeleteTopicsResponseData;
import io.strata.protocol.message.DescribeClusterRequestData;
import io.strata.protocol.message.DescribeClusterResponseData;
import io.strata.protocol.message.DescribeTopicPartitionsRequestData;
import io.strata.protocol.message.DescribeTopicPartitionsResponseData;
import io.strata.protocol.message.OffsetForLeaderEpochRequestData;
import io.strata.protocol.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.clients.admin.DeletedRecords;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.CreatePartitionsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.TopicDeletionDisabledException;
import org.apache.kafka.common.errors.UnknownTopicIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.strata.server.TestBroker.TIMEOUT_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Topic, partition, record and cluster administration against a real node: DeleteTopics,
 * CreatePartitions, DeleteRecords, DescribeCluster, DescribeTopicPartitions, DescribeLogDirs
 * and OffsetForLeaderEpoch, through kafka-clients' Admin and consumer where they send them, and
 * as raw requests where only a raw request reaches the case.
 */
class AdminApisTest {
    @TempDir
    Path dataDir;

    private TestBroker broker;

    @BeforeEach
    void start() throws Exception {
        broker = new TestBroker(dataDir.resolve("default"), Map.of());
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    private static <T> T get(KafkaFuture<T> future) throws Exception {
        return future.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    // ---------------------------------------------------------------- DeleteTopics

    @Test
    void deletingTopicsByNameAndByIdRemovesThemAndTheirLogs() throws Exception {
        broker.createTopic("by-name", 2, Map.of());
        broker.createTopic("by-id", 1, Map.of());
        Uuid id = get(broker.admin().describeTopics(List.of("by-id")).allTopicNames()).get("by-id").topicId();
        assertThat(broker.log("by-name", 1)).isNotNull();

        get(broker.admin().deleteTopics(TopicCollection.ofTopicNames(List.of("by-name"))).all());
        get(broker.admin().deleteTopics(TopicCollection.ofTopicIds(List.of(id))).all());

        assertThat(get(broker.admin().listTopics().names())).doesNotContain("by-name", "by-id");
        assertThat(broker.log("by-name", 0)).isNull();
        assertThat(broker.log("by-name", 1)).isNull();
        assertThat(broker.log("by-id", 0)).isNull();
    }

    @Test
    void deletingATopicTwiceFailsWithUnknownTopicErrors() throws Exception {
        broker.createTopic("twice", 1, Map.of());
        Uuid id = get(broker.admin().describeTopics(List.of("twice")).allTopicNames()).get("twice").topicId();
        get(broker.admin().deleteTopics(List.of("twice")).all());

        assertThatThrownBy(() -> get(broker.admin().deleteTopics(List.of("twice")).all()))
            .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
        assertThatThrownBy(() -> get(broker.admin().deleteTopics(TopicCollection.ofTopicIds(List.of(id))).all()))
            .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(UnknownTopicIdException.class);
    }

    @Test
    void deleteTopicsRejectsMalformedEntriesAndDuplicates() throws Exception {
        broker.createTopic("kept", 1, Map.of());
        UUID keptId = broker.server().metadata().image().topic("kept").id();
        DeleteTopicsRequestData request = new DeleteTopicsRequestData().setTimeoutMs(10_000);
        request.topics().add(new DeleteTopicsRequestData.DeleteTopicState().setName("kept").setTopicId(keptId));
        request.topics().add(new DeleteTopicsRequestData.DeleteTopicState().setName(null).setTopicId(Uuids.ZERO));
        request.topics().add(new DeleteTopicsRequestData.DeleteTopicState().setName("dup").setTopicId(Uuids.ZERO));
        request.topics().add(new DeleteTopicsRequestData.DeleteTopicState().setName("dup").setTopicId(Uuids.ZERO));
        try (RawClient client = new RawClient(broker.port())) {
            DeleteTopicsResponseData response = client.send(ApiMessageType.DELETE_TOPICS, 6, request);
            assertThat(response.responses()).hasSize(3);
            assertThat(response.responses()).allSatisfy(result -> assertThat(result.errorCode()).isEqualTo(ErrorCode.INVALID_REQUEST.code()));
            assertThat(response.responses()).extracting(DeleteTopicsResponseData.DeletableTopicResult::errorMessage).containsExactlyInAnyOrder(
                "You may not specify both topic name and topic id.", "Neither topic name nor id were specified.", "Duplicate topic name.");
        }
        assertThat(broker.server().metadata().image().topic("kept")).isNotNull();
    }

    @Test
    void deleteTopicsIsRefusedWhenDeletionIsDisabled() throws Exception {
        broker.close();
        broker = new TestBroker(dataDir.resolve("no-delete"), Map.of("delete.topic.enable", "false"));
        broker.createTopic("undeletable", 1, Map.of());

        assertThatThrownBy(() -> get(broker.admin().deleteTopics(List.of("undeletable")).all()))
            .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(TopicDeletionDisabledException.class);
        try (RawClient client = new RawClient(broker.port())) {
            DeleteTopicsRequestData request = new DeleteTopicsRequestData().setTopicNames(List.of("undeletable")).setTimeoutMs(10_000);
            DeleteTopicsResponseData v2 = client.send(ApiMessageType.DELETE_TOPICS, 2, request);
            assertThat(v2.responses().get(0).errorCode()).isEqualTo(ErrorCode.INVALID_REQUEST.code());
        }
        assertThat(get(broker.admin().listTopics().names())).contains("undeletable");
    }

    // ---------------------------------------------------------------- CreatePartitions

    @Test
    void createPartitionsAddsPartitionsAndValidateOnlyChangesNothing() throws Exception {
        broker.createTopic("growing", 1, Map.of());
        get(broker.admin().createPartitions(Map.of("growing", NewPartitions.increaseTo(3)), new CreatePartitionsOptions().validateOnly(true)).all());
        assertThat(get(broker.admin().describeTopics(List.of("growing")).allTopicNames()).get("growing").partitions()).hasSize(1);

        get(broker.admin().createPartitions(Map.of("growing", NewPartitions.increaseTo(3))).all());

        assertThat(get(broker.admin().describeTopics(List.of("growing")).allTopicNames()).get("growing").partitions()).hasSize(3);
        assertThat(broker.log("growing", 2)).isNotNull();
        assertThatThrownBy(() -> get(broker.admin().createPartitions(Map.of("growing", NewPartitions.increaseTo(2))).all()))
            .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InvalidPartitionsException.class);
        assertThatThrownBy(() -> get(broker.admin().createPartitions(Map.of("no-such-topic", NewPartitions.increaseTo(2))).all()))
            .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
    }

    // ---------------------------------------------------------------- DeleteRecords

    @Test
    void deleteRecordsMovesTheLowWatermarkUpToTheHighWatermark() throws Exception {
        broker.createTopic("trimmed", 1, Map.of());
        broker.produce("trimmed", 10);
        TopicPartition partition = new TopicPartition("trimmed", 0);

        DeletedRecords deleted = get(broker.admin().deleteRecords(Map.of(partition, RecordsToDelete.beforeOffset(4))).lowWatermarks().get(partition));

        assertThat(deleted.lowWatermark()).isEqualTo(4);
        assertThat(broker.log("trimmed", 0).logStartOffset()).isEqualTo(4);
        assertThat(get(broker.admin().listOffsets(Map.of(partition, OffsetSpec.earliest())).partitionResult(partition)).offset()).isEqualTo(4);
        assertThatThrownBy(() -> get(broker.admin().deleteRecords(Map.of(partition, RecordsToDelete.beforeOffset(11))).all()))
            .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(OffsetOutOfRangeException.class);

        DeletedRecords toHighWatermark = get(broker.admin().deleteRecords(Map.of(partition, RecordsToDelete.beforeOffset(-1)))
            .lowWatermarks().get(partition));
        assertThat(toHighWatermark.lowWatermark()).isEqualTo(10);
    }

    @Test
    void deleteRecordsAnswersUnknownPartitionsAndBadOffsetsPerPartition() throws Exception {
        broker.createTopic("records", 1, Map.of());
        broker.produce("records", 3);
        DeleteRecordsRequestData request = new DeleteRecordsRequestData().setTimeoutMs(10_000);
        DeleteRecordsRequestData.DeleteRecordsTopic topic = new DeleteRecordsRequestData.DeleteRecordsTopic().setName("records");
        topic.partitions().add(new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(2));
        topic.partitions().add(new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(7).setOffset(1));
        request.topics().add(topic);
        DeleteRecordsRequestData.DeleteRecordsTopic badOffset = new DeleteRecordsRequestData.DeleteRecordsTopic().setName("records");
        badOffset.partitions().add(new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(-5));
        request.topics().add(badOffset);
        try (RawClient client = new RawClient(broker.port())) {
            for (int version = 0; version <= 2; version++) {
                DeleteRecordsResponseData response = client.send(ApiMessageType.DELETE_RECORDS, version, request);
                List<DeleteRecordsResponseData.DeleteRecordsPartitionResult> results = response.topics().get(0).partitions();
                assertThat(results.get(0).errorCode()).isEqualTo(ErrorCode.NONE.code());
                assertThat(results.get(0).lowWatermark()).isEqualTo(2);
                assertThat(results.get(1).errorCode()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code());
                assertThat(results.get(1).lowWatermark()).isEqualTo(-1);
                DeleteRecordsResponseData.DeleteRecordsPartitionResult negative = response.topics().get(1).partitions().get(0);
                assertThat(negative.errorCode()).isEqualTo(ErrorCode.OFFSET_OUT_OF_RANGE.code());
                assertThat(negative.lowWatermark()).isEqualTo(-1);
            }
        }
    }

    // ---------------------------------------------------------------- DescribeCluster

    @Test
    void describeClusterReportsThisBrokerAsTheController() throws Exception {
        DescribeClusterResult cluster = broker.admin().describeCluster(new DescribeClusterOptions().includeAuthorizedOperations(true));

        assertThat(get(cluster.clusterId())).isEqualTo(broker.server().clusterId());
        List<Node> nodes = new ArrayList<>(get(cluster.nodes()));
        assertThat(nodes).hasSize(1);
        assertThat(nodes.get(0).id()).isEqualTo(1);
        assertThat(nodes.get(0).host()).isEqualTo("127.0.0.1");
        assertThat(nodes.get(0).port()).isEqualTo(broker.port());
        assertThat(get(cluster.controller()).id()).isEqualTo(1);
        assertThat(get(cluster.authorizedOperations())).contains(AclOperation.DESCRIBE, AclOperation.ALTER_CONFIGS, AclOperation.CREATE);
        assertThat(get(broker.admin().describeCluster().authorizedOperations())).isNull();
    }

    @Test
    void describeClusterRefusesTheControllerEndpointType() throws Exception {
        try (RawClient client = new RawClient(broker.port())) {
            DescribeClusterResponseData wrongType = client.send(ApiMessageType.DESCRIBE_CLUSTER, 1,
                new DescribeClusterRequestData().setEndpointType((byte) 2));
            assertThat(wrongType.errorCode()).isEqualTo(ErrorCode.MISMATCHED_ENDPOINT_TYPE.code());
            DescribeClusterResponseData unknownType = client.send(ApiMessageType.DESCRIBE_CLUSTER, 2,
                new DescribeClusterRequestData().setEndpointType((byte) 9));
            assertThat(unknownType.errorCode()).isEqualTo(ErrorCode.UNSUPPORTED_ENDPOINT_TYPE.code());
            DescribeClusterResponseData v0 = client.send(ApiMessageType.DESCRIBE_CLUSTER, 0, new DescribeClusterRequestData());
            assertThat(v0.errorCode()).isEqualTo(ErrorCode.NONE.code());
            assertThat(v0.brokers()).hasSize(1);
            assertThat(v0.controllerId()).isEqualTo(1);
            assertThat(v0.clusterAuthorizedOperations()).isEqualTo(Integer.MIN_VALUE);
        }
    }

    // ---------------------------------------------------------------- DescribeTopicPartitions

    @Test
    void describeTopicsPagesThroughPartitionsAndNamesUnknownTopics() throws Exception {
        broker.createTopic("wide", 5, Map.of());
        broker.createTopic("narrow", 2, Map.of());

        Map<String, TopicDescription> described = get(broker.admin().describeTopics(List.of("wide", "narrow"),
            new DescribeTopicsOptions().partitionSizeLimitPerResponse(2)).allTopicNames());

        assertThat(described.get("wide").partitions()).extracting(info -> info.partition()).containsExactly(0, 1, 2, 3, 4);
        assertThat(described.get("wide").partitions()).allSatisfy(info -> {
            assertThat(info.leader().id()).isEqualTo(1);
            assertThat(info.replicas()).extracting(Node::id).containsExactly(1);
            assertThat(info.isr()).extracting(Node::id).containsExactly(1);
        });
        assertThat(described.get("narrow").partitions()).hasSize(2);
        assertThat(described.get("wide").topicId().toString())
            .isEqualTo(Uuids.toBase64(broker.server().metadata().image().topic("wide").id()));
        assertThatThrownBy(() -> get(broker.admin().describeTopics(List.of("missing")).allTopicNames()))
            .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
    }

    @Test
    void describeTopicPartitionsCursorResumesWhereTheLimitStopped() throws Exception {
        broker.createTopic("alpha", 5, Map.of());
        broker.createTopic("beta", 2, Map.of());
        DescribeTopicPartitionsRequestData request = new DescribeTopicPartitionsRequestData().setResponsePartitionLimit(3);
        request.topics().add(new DescribeTopicPartitionsRequestData.TopicRequest().setName("beta"));
        request.topics().add(new DescribeTopicPartitionsRequestData.TopicRequest().setName("alpha"));
        request.topics().add(new DescribeTopicPartitionsRequestData.TopicRequest().setName("absent"));
        try (RawClient client = new RawClient(broker.port())) {
            DescribeTopicPartitionsResponseData first = client.send(ApiMessageType.DESCRIBE_TOPIC_PARTITIONS, 0, request);
            assertThat(first.topics()).extracting(DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic::name)
                .containsExactly("absent", "alpha");
            assertThat(first.topics().get(0).errorCode()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code());
            assertThat(first.topics().get(1).partitions()).extracting(p -> p.partitionIndex()).containsExactly(0, 1, 2);
            assertThat(first.nextCursor().topicName()).isEqualTo("alpha");
            assertThat(first.nextCursor().partitionIndex()).isEqualTo(3);

            request.setCursor(new DescribeTopicPartitionsRequestData.Cursor().setTopicName("alpha").setPartitionIndex(3));
            DescribeTopicPartitionsResponseData second = client.send(ApiMessageType.DESCRIBE_TOPIC_PARTITIONS, 0, request);
            assertThat(second.topics()).extracting(DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic::name)
                .containsExactly("alpha", "beta");
            assertThat(second.topics().get(0).partitions()).extracting(p -> p.partitionIndex()).containsExactly(3, 4);
            assertThat(second.topics().get(1).partitions()).extracting(p -> p.partitionIndex()).containsExactly(0);
            assertThat(second.nextCursor().topicName()).isEqualTo("beta");
            assertThat(second.nextCursor().partitionIndex()).isEqualTo(1);

            request.setCursor(new DescribeTopicPartitionsRequestData.Cursor().setTopicName("gamma").setPartitionIndex(0));
            DescribeTopicPartitionsResponseData invalid = client.send(ApiMessageType.DESCRIBE_TOPIC_PARTITIONS, 0, request);
            assertThat(invalid.topics()).allSatisfy(topic -> assertThat(topic.errorCode()).isEqualTo(ErrorCode.INVALID_REQUEST.code()));
        }
    }

    // ---------------------------------------------------------------- DescribeLogDirs

    @Test
    void describeLogDirsReportsEachPartitionLogSize() throws Exception {
        broker.createTopic("sized", 2, Map.of());
        broker.produce("sized", 5);

        Map<Integer, Map<String, LogDirDescription>> all = get(broker.admin().describeLogDirs(List.of(1)).allDescriptions());

        Map<String, LogDirDescription> dirs = all.get(1);
        String expectedDir = broker.dataDir().toAbsolutePath().normalize().toString();
        assertThat(dirs).containsOnlyKeys(expectedDir);
        LogDirDescription dir = dirs.get(expectedDir);
        assertThat(dir.error()).isNull();
        assertThat(dir.totalBytes()).isPresent();
        assertThat(dir.usableBytes()).isPresent();
        assertThat(dir.isCordoned()).isFalse();
        ReplicaInfo written = dir.replicaInfos().get(new TopicPartition("sized", 0));
        assertThat(written.size()).isEqualTo(broker.log("sized", 0).size()).isPositive();
        assertThat(written.offsetLag()).isZero();
        assertThat(written.isFuture()).isFalse();
        assertThat(dir.replicaInfos().get(new TopicPartition("sized", 1)).size()).isZero();
        assertThat(dir.replicaInfos().keySet()).noneMatch(partition -> partition.topic().equals("__cluster_metadata"));
    }

    // ---------------------------------------------------------------- OffsetForLeaderEpoch

    @Test
    void offsetForLeaderEpochAnswersFromTheLeaderEpochCache() throws Exception {
        broker.createTopic("epochs", 1, Map.of());
        broker.produce("epochs", 10);
        try (RawClient client = new RawClient(broker.port())) {
            for (int version = 2; version <= 4; version++) {
                OffsetForLeaderEpochResponseData response = client.send(ApiMessageType.OFFSET_FOR_LEADER_EPOCH, version, new OffsetForLeaderEpochRequestData()
                    .setReplicaId(-1)
                    .setTopics(List.of(
                        topic("epochs", partition(0, 0, 0), partition(0, -1, 7), partition(0, 1, 0), partition(3, 0, 0)),
                        topic("no-such-topic", partition(0, 0, 0)))));
                List<OffsetForLeaderEpochResponseData.EpochEndOffset> epochs = response.topics().get(0).partitions();
                assertThat(epochs.get(0).errorCode()).isEqualTo(ErrorCode.NONE.code());
                assertThat(epochs.get(0).leaderEpoch()).isEqualTo(0);
                assertThat(epochs.get(0).endOffset()).isEqualTo(10);
                assertThat(epochs.get(1).errorCode()).isEqualTo(ErrorCode.NONE.code());
                assertThat(epochs.get(1).leaderEpoch()).isEqualTo(-1);
                assertThat(epochs.get(1).endOffset()).isEqualTo(-1);
                assertThat(epochs.get(2).errorCode()).isEqualTo(ErrorCode.UNKNOWN_LEADER_EPOCH.code());
                assertThat(epochs.get(3).errorCode()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code());
                assertThat(response.topics().get(1).partitions().get(0).errorCode()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code());
            }
        }
    }

    private static OffsetForLeaderEpochRequestData.OffsetForLeaderTopic topic(String name,
                                                                           OffsetForLeaderEpochRequestData.OffsetForLeaderPartition... partitions) {
        return new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic(name).setPartitions(List.of(partitions));
    }

    private static OffsetForLeaderEpochRequestData.OffsetForLeaderPartition partition(int index, int currentLeaderEpoch, int leaderEpoch) {
        return new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(index).setCurrentLeaderEpoch(currentLeaderEpoch)
            .setLeaderEpoch(leaderEpoch);
    }

    @Test
    void consumerSeekWithALeaderEpochValidatesThePositionAndReadsOn() throws Exception {
        broker.createTopic("validated", 1, Map.of());
        broker.produce("validated", 10);
        TopicPartition partition = new TopicPartition("validated", 0);
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(properties)) {
            consumer.assign(Set.of(partition));
            consumer.seek(partition, new OffsetAndMetadata(5, Optional.of(0), ""));
            List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
            while (records.size() < 5 && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
            assertThat(records).extracting(ConsumerRecord::offset).containsExactly(5L, 6L, 7L, 8L, 9L);
            assertThat(consumer.position(partition)).isEqualTo(10);
        }
    }
}
