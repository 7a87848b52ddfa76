package io.strata.it;

import io.strata.protocol.ApiMessage;
import io.strata.protocol.ApiVersionsTable;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Frames;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsRequestData;
import io.strata.protocol.message.ConsumerGroupDescribeRequestData;
import io.strata.protocol.message.ConsumerGroupHeartbeatRequestData;
import io.strata.protocol.message.CreatePartitionsRequestData;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.DeleteGroupsRequestData;
import io.strata.protocol.message.DeleteRecordsRequestData;
import io.strata.protocol.message.DeleteTopicsRequestData;
import io.strata.protocol.message.DescribeConfigsRequestData;
import io.strata.protocol.message.DescribeGroupsRequestData;
import io.strata.protocol.message.DescribeProducersRequestData;
import io.strata.protocol.message.DescribeTopicPartitionsRequestData;
import io.strata.protocol.message.DescribeTransactionsRequestData;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.message.FindCoordinatorRequestData;
import io.strata.protocol.message.FindCoordinatorResponseData;
import io.strata.protocol.message.HeartbeatRequestData;
import io.strata.protocol.message.IncrementalAlterConfigsRequestData;
import io.strata.protocol.message.InitProducerIdRequestData;
import io.strata.protocol.message.JoinGroupRequestData;
import io.strata.protocol.message.LeaveGroupRequestData;
import io.strata.protocol.message.ListOffsetsRequestData;
import io.strata.protocol.message.MetadataRequestData;
import io.strata.protocol.message.OffsetCommitRequestData;
import io.strata.protocol.message.OffsetDeleteRequestData;
import io.strata.protocol.message.OffsetFetchRequestData;
import io.strata.protocol.message.OffsetForLeaderEpochRequestData;
import io.strata.protocol.message.ProduceRequestData;
import io.strata.protocol.message.SyncGroupRequestData;
import io.strata.protocol.message.TxnOffsetCommitRequestData;
import io.strata.protocol.message.WriteTxnMarkersRequestData;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.server.StrataServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Every API the broker advertises, at every advertised version, gets a response that parses
 * at that version (requests carry real content where it matters: topics, partitions,
 * records), and no error code anywhere in it is UNKNOWN_SERVER_ERROR: Kafka has a specific
 * code for each of these situations, and clients decide retry-or-fail on it (KAFKA-14034).
 * Catches handlers that set a field the client's version cannot carry.
 */
class EveryAdvertisedVersionTest {
    private static final String GROUP = "offsets-group";
    private static final String CLASSIC_GROUP = "classic-group";
    private static final String CONSUMER_GROUP = "consumer-group";

    @TempDir
    Path dataDir;

    private StrataTestServer server;
    private int topicCounter;

    @BeforeEach
    void start() throws Exception {
        // No initial rebalance delay: each JoinGroup version is answered at once.
        server = new StrataTestServer(dataDir, Map.of("group.initial.rebalance.delay.ms", "0",
            "offsets.topic.num.partitions", "1", "transaction.state.log.num.partitions", "1"));
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void everyAdvertisedVersionAnswers() throws Exception {
        ApiVersionsTable table = StrataServer.apiVersions();
        int checked = 0;
        List<String> unknownServerErrors = new ArrayList<>();
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
            socket.setSoTimeout(15_000);
            // A topic with data for the read APIs.
            exchange(socket, ApiMessageType.CREATE_TOPICS, (short) 7, createTopics("data"), 1);
            exchange(socket, ApiMessageType.PRODUCE, (short) 9, produce("data"), 2);
            exchange(socket, ApiMessageType.CREATE_TOPICS, (short) 7, createTopics("grown"), 3);
            // The group and transaction coordinators, loaded: otherwise every group and
            // transaction API answers NOT_COORDINATOR and none of their handlers runs.
            int correlationId = awaitCoordinator(socket, (byte) 0, GROUP, 4);
            correlationId = awaitCoordinator(socket, (byte) 1, "txn-v0", correlationId);
            for (Map.Entry<ApiMessageType, ApiVersionsTable.Range> entry : table.ranges().entrySet()) {
                ApiMessageType api = entry.getKey();
                for (short version = entry.getValue().min(); version <= entry.getValue().max(); version++) {
                    if (!api.hasSchemaVersion(version)) {
                        continue; // advertised for compatibility only (Produce v0-v2); checked elsewhere
                    }
                    ApiMessage request = request(api, version);
                    ApiMessage response = exchange(socket, api, version, request, correlationId++);
                    assertThat(response).as("%s v%d", api.apiName, version).isNotNull();
                    for (String path : unknownServerErrors(response, api.apiName + " v" + version)) {
                        unknownServerErrors.add(path);
                    }
                    checked++;
                }
            }
        }
        assertThat(checked).isGreaterThan(40);
        assertThat(unknownServerErrors).as("error codes UNKNOWN_SERVER_ERROR (-1) in responses to well-formed requests").isEmpty();
    }

    /**
     * The paths of every error code field (a short named {@code errorCode} or {@code ...ErrorCode},
     * at any depth: top level, topic and partition results, members...) that holds
     * UNKNOWN_SERVER_ERROR. Walks the generated message classes by reflection, so a new API or
     * field is covered without changing this test.
     */
    static List<String> unknownServerErrors(Object message, String path) {
        List<String> found = new ArrayList<>();
        walk(message, path, found);
        return found;
    }

    private static void walk(Object message, String path, List<String> found) {
        for (Class<?> type = message.getClass(); type != null && type != Object.class; type = type.getSuperclass()) {
            for (Field field : type.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers())) {
                    continue;
                }
                field.setAccessible(true);
                Object value;
                try {
                    value = field.get(message);
                } catch (IllegalAccessException e) {
                    throw new AssertionError("cannot read " + path + "." + field.getName(), e);
                }
                String fieldPath = path + "." + field.getName();
                if (field.getType() == short.class && field.getName().toLowerCase(Locale.ROOT).endsWith("errorcode")) {
                    if ((Short) value == ErrorCode.UNKNOWN_SERVER_ERROR.code()) {
                        found.add(fieldPath);
                    }
                } else if (value instanceof Collection<?> elements) {
                    int index = 0;
                    for (Object element : elements) {
                        if (isGenerated(element)) {
                            walk(element, fieldPath + "[" + index + "]", found);
                        }
                        index++;
                    }
                } else if (isGenerated(value)) {
                    walk(value, fieldPath, found);
                }
            }
        }
    }

    private static boolean isGenerated(Object value) {
        return value != null && value.getClass().getName().startsWith(ApiMessageType.class.getPackageName() + ".");
    }

    /** Asks FindCoordinator until the coordinator of {@code key} answers; returns the next correlation id. */
    private static int awaitCoordinator(Socket socket, byte keyType, String key, int correlationId) throws Exception {
        long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            FindCoordinatorResponseData response = (FindCoordinatorResponseData) exchange(socket, ApiMessageType.FIND_COORDINATOR, (short) 3,
                new FindCoordinatorRequestData().setKey(key).setKeyType(keyType), correlationId++);
            if (response.errorCode() == ErrorCode.NONE.code()) {
                return correlationId;
            }
            assertThat(System.nanoTime()).as("coordinator of %s (type %d) available by now: %s", key, keyType,
                ErrorCode.forCode(response.errorCode())).isLessThan(deadlineNs);
            Thread.sleep(50); // polling a condition, bounded by the deadline
        }
    }

    @Test
    void theWalkerFindsAnUnknownServerErrorAtAnyDepth() {
        FetchResponseData fetch = new FetchResponseData();
        fetch.responses().add(new FetchResponseData.FetchableTopicResponse().setTopic("t").setPartitions(List.of(
            new FetchResponseData.PartitionData().setPartitionIndex(0),
            new FetchResponseData.PartitionData().setPartitionIndex(1).setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code()))));
        assertThat(unknownServerErrors(fetch, "Fetch")).containsExactly("Fetch.responses[0].partitions[1].errorCode");
        assertThat(unknownServerErrors(new FetchResponseData().setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code()), "Fetch"))
            .containsExactly("Fetch.errorCode");
        assertThat(unknownServerErrors(new FetchResponseData().setErrorCode(ErrorCode.NOT_COORDINATOR.code()), "Fetch")).isEmpty();
    }

    private ApiMessage request(ApiMessageType api, short version) {
        switch (api) {
            case API_VERSIONS:
                return new ApiVersionsRequestData().setClientSoftwareName("strata-test").setClientSoftwareVersion("1.0");
            case METADATA:
                return new MetadataRequestData().setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName("data")))
                    .setAllowAutoTopicCreation(true);
            case CREATE_TOPICS:
                return createTopics("created-" + (topicCounter++));
            case PRODUCE:
                return produce("data");
            case FETCH: {
                var image = server.server().metadata().image();
                FetchRequestData fetch = new FetchRequestData().setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20)
                    .setSessionEpoch(-1).setReplicaId(-1);
                fetch.topics().add(new FetchRequestData.FetchTopic().setTopic("data").setTopicId(image.topic("data").id())
                    .setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0)
                        .setPartitionMaxBytes(1 << 20).setCurrentLeaderEpoch(-1).setLastFetchedEpoch(-1).setLogStartOffset(-1))));
                return fetch;
            }
            case LIST_OFFSETS: {
                ListOffsetsRequestData listOffsets = new ListOffsetsRequestData().setReplicaId(-1);
                listOffsets.topics().add(new ListOffsetsRequestData.ListOffsetsTopic().setName("data").setPartitions(List.of(
                    new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1L).setCurrentLeaderEpoch(-1))));
                return listOffsets;
            }
            case DESCRIBE_CONFIGS:
                return new DescribeConfigsRequestData().setResources(List.of(
                    new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 2).setResourceName("data"),
                    new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 4).setResourceName("1")));
            case DELETE_RECORDS:
                return new DeleteRecordsRequestData().setTimeoutMs(10_000).setTopics(List.of(new DeleteRecordsRequestData.DeleteRecordsTopic()
                    .setName("data").setPartitions(List.of(new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(0)))));
            case OFFSET_FOR_LEADER_EPOCH:
                return new OffsetForLeaderEpochRequestData().setReplicaId(-1).setTopics(List.of(new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic()
                    .setTopic("data").setPartitions(List.of(new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0)
                        .setCurrentLeaderEpoch(-1).setLeaderEpoch(0)))));
            case DESCRIBE_TOPIC_PARTITIONS:
                return new DescribeTopicPartitionsRequestData().setResponsePartitionLimit(100)
                    .setTopics(List.of(new DescribeTopicPartitionsRequestData.TopicRequest().setName("data")));
            case DESCRIBE_PRODUCERS:
                return new DescribeProducersRequestData().setTopics(List.of(new DescribeProducersRequestData.TopicRequest().setName("data")
                    .setPartitionIndexes(List.of(0))));
            case FIND_COORDINATOR:
                return version < 4 ? new FindCoordinatorRequestData().setKey(GROUP) : new FindCoordinatorRequestData().setCoordinatorKeys(List.of(GROUP));
            case JOIN_GROUP:
                return new JoinGroupRequestData().setGroupId(CLASSIC_GROUP).setMemberId("").setProtocolType("consumer").setSessionTimeoutMs(10_000)
                    .setRebalanceTimeoutMs(10_000).setProtocols(List.of(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range")
                        .setMetadata(new byte[0])));
            case SYNC_GROUP:
                return new SyncGroupRequestData().setGroupId(CLASSIC_GROUP).setGenerationId(1).setMemberId("unknown-member");
            case HEARTBEAT:
                return new HeartbeatRequestData().setGroupId(CLASSIC_GROUP).setGenerationId(1).setMemberId("unknown-member");
            case LEAVE_GROUP:
                return version < 3 ? new LeaveGroupRequestData().setGroupId(CLASSIC_GROUP).setMemberId("unknown-member")
                    : new LeaveGroupRequestData().setGroupId(CLASSIC_GROUP).setMembers(List.of(new LeaveGroupRequestData.MemberIdentity()
                        .setMemberId("unknown-member")));
            case OFFSET_COMMIT:
                return new OffsetCommitRequestData().setGroupId(GROUP).setGenerationIdOrMemberEpoch(-1).setMemberId("")
                    .setTopics(List.of(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("data").setPartitions(List.of(
                        new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(1)))));
            case OFFSET_FETCH:
                return version < 8
                    ? new OffsetFetchRequestData().setGroupId(GROUP).setTopics(List.of(new OffsetFetchRequestData.OffsetFetchRequestTopic()
                        .setName("data").setPartitionIndexes(List.of(0))))
                    : new OffsetFetchRequestData().setGroups(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(GROUP)
                        .setTopics(List.of(new OffsetFetchRequestData.OffsetFetchRequestTopics().setName("data").setPartitionIndexes(List.of(0))))));
            case DESCRIBE_GROUPS:
                return new DescribeGroupsRequestData().setGroups(List.of(GROUP, CLASSIC_GROUP, CONSUMER_GROUP, "no-such-group"));
            case DELETE_GROUPS:
                return new DeleteGroupsRequestData().setGroupsNames(List.of("no-such-group", CONSUMER_GROUP));
            case OFFSET_DELETE:
                return new OffsetDeleteRequestData().setGroupId(GROUP).setTopics(List.of(new OffsetDeleteRequestData.OffsetDeleteRequestTopic()
                    .setName("data").setPartitions(List.of(new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0)))));
            case CONSUMER_GROUP_HEARTBEAT:
                return new ConsumerGroupHeartbeatRequestData().setGroupId(CONSUMER_GROUP).setMemberId("member-v" + version).setMemberEpoch(0)
                    .setRebalanceTimeoutMs(10_000).setSubscribedTopicNames(List.of("data")).setTopicPartitions(List.of());
            case CONSUMER_GROUP_DESCRIBE:
                return new ConsumerGroupDescribeRequestData().setGroupIds(List.of(CONSUMER_GROUP, "no-such-group"));
            case INIT_PRODUCER_ID:
                return new InitProducerIdRequestData().setTransactionalId("txn-v" + version).setTransactionTimeoutMs(60_000);
            case DESCRIBE_TRANSACTIONS:
                return new DescribeTransactionsRequestData().setTransactionalIds(List.of("txn-v0", "no-such-txn"));
            case CREATE_PARTITIONS:
                return new CreatePartitionsRequestData().setTimeoutMs(10_000).setTopics(List.of(
                    new CreatePartitionsRequestData.CreatePartitionsTopic().setName("grown").setCount(2 + version)));
            case DELETE_TOPICS:
                return version < 6 ? new DeleteTopicsRequestData().setTimeoutMs(10_000).setTopicNames(List.of("created-" + version, "no-such-topic"))
                    : new DeleteTopicsRequestData().setTimeoutMs(10_000).setTopics(List.of(
                        new DeleteTopicsRequestData.DeleteTopicState().setName("created-" + version),
                        new DeleteTopicsRequestData.DeleteTopicState().setName("no-such-topic")));
            case INCREMENTAL_ALTER_CONFIGS:
                return new IncrementalAlterConfigsRequestData().setResources(List.of(new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                    .setResourceType((byte) 2).setResourceName("data").setConfigs(List.of(new IncrementalAlterConfigsRequestData.AlterableConfig()
                        .setName("retention.ms").setConfigOperation((byte) 0).setValue(Integer.toString(600_000 + version))))));
            case TXN_OFFSET_COMMIT:
                return new TxnOffsetCommitRequestData().setTransactionalId("txn-v0").setGroupId(GROUP).setProducerId(0).setProducerEpoch((short) 0)
                    .setTopics(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName("data").setPartitions(List.of(
                        new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(1)))));
            case WRITE_TXN_MARKERS:
                return new WriteTxnMarkersRequestData().setMarkers(List.of(new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(999)
                    .setProducerEpoch((short) 0).setTransactionResult(false).setCoordinatorEpoch(0).setTopics(List.of(
                        new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName("data").setPartitionIndexes(List.of(0))))));
            default:
                return api.newRequest();
        }
    }

    private static CreateTopicsRequestData createTopics(String name) {
        return new CreateTopicsRequestData().setTimeoutMs(10_000).setTopics(List.of(
            new CreateTopicsRequestData.CreatableTopic().setName(name).setNumPartitions(1).setReplicationFactor((short) 1)));
    }

    private static ProduceRequestData produce(String topic) {
        ProduceRequestData produce = new ProduceRequestData().setAcks((short) 1).setTimeoutMs(10_000);
        produce.topicData().add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(
                new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0)
                    .append(System.currentTimeMillis(), "k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8))
                    .build()))));
        return produce;
    }

    private static ApiMessage exchange(Socket socket, ApiMessageType api, short version, ApiMessage request, int correlationId)
            throws IOException {
        ByteBuffer frame = Frames.encodeRequest(api, version, correlationId, "every-version", request);
        byte[] bytes = new byte[frame.remaining()];
        frame.get(bytes);
        socket.getOutputStream().write(bytes);
        DataInputStream in = new DataInputStream(socket.getInputStream());
        int size;
        try {
            size = in.readInt();
        } catch (IOException e) {
            fail("the server closed the connection on " + api.apiName + " v" + version + ": " + e);
            return null;
        }
        byte[] response = new byte[size];
        in.readFully(response);
        return Frames.parseResponse(api, version, ByteBuffer.wrap(response), correlationId);
    }
}
