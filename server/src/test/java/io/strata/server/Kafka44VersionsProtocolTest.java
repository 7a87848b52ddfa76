package io.strata.server;

import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AddPartitionsToTxnRequestData;
import io.strata.protocol.message.AddPartitionsToTxnResponseData;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsRequestData;
import io.strata.protocol.message.ApiVersionsResponseData;
import io.strata.protocol.message.FindCoordinatorRequestData;
import io.strata.protocol.message.FindCoordinatorResponseData;
import io.strata.protocol.message.InitProducerIdRequestData;
import io.strata.protocol.message.InitProducerIdResponseData;
import io.strata.protocol.message.OffsetCommitRequestData;
import io.strata.protocol.message.OffsetCommitResponseData;
import io.strata.protocol.message.OffsetFetchRequestData;
import io.strata.protocol.message.OffsetFetchResponseData;
import io.strata.protocol.message.DescribeQuorumRequestData;
import io.strata.protocol.message.DescribeQuorumResponseData;
import io.strata.protocol.message.TxnOffsetCommitRequestData;
import io.strata.protocol.message.TxnOffsetCommitResponseData;
import io.strata.protocol.message.UpdateFeaturesRequestData;
import io.strata.protocol.message.UpdateFeaturesResponseData;
import io.strata.protocol.message.ProduceRequestData;
import io.strata.protocol.message.ProduceResponseData;
import io.strata.protocol.message.WriteTxnMarkersRequestData;
import io.strata.protocol.message.WriteTxnMarkersResponseData;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The semantics of the API versions Kafka 4.4 added over what Strata served before, each checked
 * on the wire against a real node: ApiVersions v5's target check (KIP-1242), OffsetCommit and
 * OffsetFetch v10 and TxnOffsetCommit v6 naming topics by id, AddPartitionsToTxn v4's batched
 * verification, UpdateFeatures' per-version answer shapes, DescribeQuorum. The answers for bad input are the ones a Kafka 4.4 broker gave to the same
 * requests (recorded with kafka-clients against Apache Kafka 4.4.0).
 */
class Kafka44VersionsProtocolTest {
    private static final String TOPIC = "ids";

    @TempDir
    Path dataDir;

    private TestBroker broker;
    private RawClient client;

    @BeforeEach
    void start() throws Exception {
        broker = new TestBroker(dataDir, Map.of("transaction.state.log.num.partitions", "1", "offsets.topic.num.partitions", "1"));
        broker.createTopic(TOPIC, 2, Map.of());
        client = new RawClient(broker.port());
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        broker.close();
    }

    private <T extends ApiMessage> T sendUntil(ApiMessageType api, int version, ApiMessage body, Predicate<T> done) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TestBroker.TIMEOUT_MS);
        while (true) {
            T response = client.send(api, version, body);
            if (done.test(response) || System.nanoTime() > deadline) {
                return response;
            }
            Thread.onSpinWait();
        }
    }

    private static boolean settled(short errorCode) {
        return errorCode != ErrorCode.COORDINATOR_LOAD_IN_PROGRESS.code() && errorCode != ErrorCode.COORDINATOR_NOT_AVAILABLE.code()
            && errorCode != ErrorCode.NOT_COORDINATOR.code() && errorCode != ErrorCode.CONCURRENT_TRANSACTIONS.code();
    }

    private UUID topicId() {
        return broker.server().metadata().image().topic(TOPIC).id();
    }

    @Test
    void apiVersionsV5RefusesAClientThatMeantAnotherClusterOrNode() throws Exception {
        String clusterId = broker.server().clusterId();
        int nodeId = broker.server().nodeId();
        assertThat(apiVersionsV5(clusterId, nodeId).errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(apiVersionsV5(clusterId, nodeId).apiKeys()).isNotEmpty();
        ApiVersionsResponseData otherCluster = apiVersionsV5("AAAAAAAAAAAAAAAAAAAAAA", nodeId);
        assertThat(otherCluster.errorCode()).isEqualTo(ErrorCode.REBOOTSTRAP_REQUIRED.code());
        assertThat(otherCluster.apiKeys()).isEmpty();
        assertThat(apiVersionsV5(clusterId, nodeId + 1).errorCode()).isEqualTo(ErrorCode.REBOOTSTRAP_REQUIRED.code());
        // Kafka 4.4 wants both or neither.
        assertThat(apiVersionsV5(clusterId, -1).errorCode()).isEqualTo(ErrorCode.INVALID_REQUEST.code());
        assertThat(apiVersionsV5(null, nodeId).errorCode()).isEqualTo(ErrorCode.INVALID_REQUEST.code());
        assertThat(apiVersionsV5(null, -1).errorCode()).isEqualTo(ErrorCode.NONE.code());
    }

    private ApiVersionsResponseData apiVersionsV5(String clusterId, int nodeId) throws Exception {
        return client.send(ApiMessageType.API_VERSIONS, 5, new ApiVersionsRequestData().setClientSoftwareName("raw")
            .setClientSoftwareVersion("1").setClusterId(clusterId).setNodeId(nodeId));
    }

    @Test
    void offsetCommitAndFetchV10NameTopicsByIdAndAnswerUnknownIdsWithUnknownTopicId() throws Exception {
        UUID unknownId = new UUID(42, 42);
        FindCoordinatorResponseData coordinator = sendUntil(ApiMessageType.FIND_COORDINATOR, 3,
            new FindCoordinatorRequestData().setKey("g").setKeyType((byte) 0), response -> settled(response.errorCode()));
        assertThat(coordinator.errorCode()).isEqualTo(ErrorCode.NONE.code());
        OffsetCommitRequestData commit = new OffsetCommitRequestData().setGroupId("g").setGenerationIdOrMemberEpoch(-1).setMemberId("")
            .setTopics(List.of(commitTopic(topicId(), 7), commitTopic(unknownId, 9)));
        OffsetCommitResponseData committed = sendUntil(ApiMessageType.OFFSET_COMMIT, 10, commit,
            response -> response.topics().stream().allMatch(topic -> topic.partitions().stream().allMatch(p -> settled(p.errorCode()))));
        assertThat(committed.topics()).hasSize(2);
        assertThat(committed.topics().get(0).topicId()).isEqualTo(topicId());
        assertThat(committed.topics().get(0).partitions().get(0).errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(committed.topics().get(1).topicId()).isEqualTo(unknownId);
        assertThat(committed.topics().get(1).partitions().get(0).errorCode()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_ID.code());

        OffsetFetchRequestData fetch = new OffsetFetchRequestData().setGroups(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup()
            .setGroupId("g").setTopics(List.of(
                new OffsetFetchRequestData.OffsetFetchRequestTopics().setTopicId(topicId()).setPartitionIndexes(List.of(0)),
                new OffsetFetchRequestData.OffsetFetchRequestTopics().setTopicId(unknownId).setPartitionIndexes(List.of(0))))));
        OffsetFetchResponseData.OffsetFetchResponseGroup group = ((OffsetFetchResponseData) client.send(ApiMessageType.OFFSET_FETCH, 10, fetch))
            .groups().get(0);
        assertThat(group.errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(group.topics()).hasSize(2);
        assertThat(group.topics().get(0).topicId()).isEqualTo(topicId());
        assertThat(group.topics().get(0).partitions().get(0).committedOffset()).isEqualTo(7);
        assertThat(group.topics().get(1).topicId()).isEqualTo(unknownId);
        assertThat(group.topics().get(1).partitions().get(0).errorCode()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_ID.code());

        // All of the group's offsets (topics null): named by id too.
        OffsetFetchResponseData.OffsetFetchResponseGroup all = ((OffsetFetchResponseData) client.send(ApiMessageType.OFFSET_FETCH, 10,
            new OffsetFetchRequestData().setGroups(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("g").setTopics(null)))))
            .groups().get(0);
        assertThat(all.topics()).singleElement().satisfies(topic -> assertThat(topic.topicId()).isEqualTo(topicId()));
    }

    private static OffsetCommitRequestData.OffsetCommitRequestTopic commitTopic(UUID topicId, long offset) {
        return new OffsetCommitRequestData.OffsetCommitRequestTopic().setTopicId(topicId).setPartitions(List.of(
            new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(offset)));
    }

    @Test
    void txnOffsetCommitV6AnswersAnUnknownTopicIdWithUnknownTopicId() throws Exception {
        InitProducerIdResponseData producer = initProducerId("tx");
        UUID unknownId = new UUID(7, 7);
        TxnOffsetCommitRequestData commit = new TxnOffsetCommitRequestData().setTransactionalId("tx").setGroupId("g")
            .setProducerId(producer.producerId()).setProducerEpoch(producer.producerEpoch()).setGenerationIdOrMemberEpoch(-1).setMemberId("")
            .setTopics(List.of(txnTopic(topicId()), txnTopic(unknownId)));
        TxnOffsetCommitResponseData response = sendUntil(ApiMessageType.TXN_OFFSET_COMMIT, 6, commit,
            answer -> answer.topics().stream().allMatch(topic -> topic.partitions().stream().allMatch(p -> settled(p.errorCode()))));
        assertThat(response.topics()).hasSize(2);
        assertThat(response.topics().get(0).topicId()).isEqualTo(topicId());
        assertThat(response.topics().get(0).partitions().get(0).errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(response.topics().get(1).topicId()).isEqualTo(unknownId);
        assertThat(response.topics().get(1).partitions().get(0).errorCode()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_ID.code());
    }

    private static TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic txnTopic(UUID topicId) {
        return new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setTopicId(topicId).setPartitions(List.of(
            new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(3)
                .setCommittedLeaderEpoch(-1).setCommittedMetadata("")));
    }

    @Test
    void addPartitionsToTxnV4VerifiesOnlyThePartitionsAlreadyInTheTransaction() throws Exception {
        InitProducerIdResponseData producer = initProducerId("tx");
        AddPartitionsToTxnResponseData added = sendUntil(ApiMessageType.ADD_PARTITIONS_TO_TXN, 4, new AddPartitionsToTxnRequestData()
            .setTransactions(List.of(transaction(producer, false, 0))), response -> settled(firstError(response)));
        assertThat(firstError(added)).isEqualTo(ErrorCode.NONE.code());

        AddPartitionsToTxnResponseData verified = client.send(ApiMessageType.ADD_PARTITIONS_TO_TXN, 5, new AddPartitionsToTxnRequestData()
            .setTransactions(List.of(transaction(producer, true, 0, 1))));
        assertThat(verified.errorCode()).isEqualTo(ErrorCode.NONE.code());
        List<AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResult> results =
            verified.resultsByTransaction().get(0).topicResults().get(0).resultsByPartition();
        assertThat(results).extracting(AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResult::partitionErrorCode)
            .containsExactly(ErrorCode.NONE.code(), ErrorCode.INVALID_TXN_STATE.code());
    }

    private static AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction transaction(InitProducerIdResponseData producer, boolean verifyOnly,
                                                                                           Integer... partitions) {
        return new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction().setTransactionalId("tx").setProducerId(producer.producerId())
            .setProducerEpoch(producer.producerEpoch()).setVerifyOnly(verifyOnly).setTopics(List.of(
                new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(TOPIC).setPartitions(List.of(partitions))));
    }

    private static short firstError(AddPartitionsToTxnResponseData response) {
        return response.resultsByTransaction().get(0).topicResults().get(0).resultsByPartition().get(0).partitionErrorCode();
    }

    @Test
    void updateFeaturesAnswersInEachVersionsShapeAndApiVersionsFollows() throws Exception {
        ApiVersionsResponseData before = apiVersionsV5(null, -1);
        assertThat(transactionVersion(before)).isEqualTo((short) 2);
        // On success v0-v1 list each feature with NONE (and message "NONE", as Kafka 4.4 sends it).
        UpdateFeaturesResponseData v1 = client.send(ApiMessageType.UPDATE_FEATURES, 1, updateFeatures("transaction.version", 1, SAFE_DOWNGRADE, false));
        assertThat(v1.errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(v1.results()).singleElement().satisfies(result -> {
            assertThat(result.feature()).isEqualTo("transaction.version");
            assertThat(result.errorCode()).isEqualTo(ErrorCode.NONE.code());
            assertThat(result.errorMessage()).isEqualTo("NONE");
        });
        ApiVersionsResponseData downgraded = apiVersionsV5(null, -1);
        assertThat(transactionVersion(downgraded)).isEqualTo((short) 1);
        assertThat(downgraded.finalizedFeaturesEpoch()).isGreaterThan(before.finalizedFeaturesEpoch());
        assertThat(maxVersion(downgraded, ApiMessageType.PRODUCE)).as("transactions v2 no longer advertised").isEqualTo((short) 11);
        assertThat(maxVersion(downgraded, ApiMessageType.END_TXN)).isEqualTo((short) 4);

        // A refusal is one top-level error and no per-feature results.
        UpdateFeaturesResponseData refused = client.send(ApiMessageType.UPDATE_FEATURES, 1, updateFeatures("transaction.version", 3, UPGRADE, false));
        assertThat(refused.errorCode()).isEqualTo(ErrorCode.INVALID_UPDATE_VERSION.code());
        assertThat(refused.results()).isEmpty();
        // v2 has no results field; validateOnly writes nothing.
        UpdateFeaturesResponseData dryRun = client.send(ApiMessageType.UPDATE_FEATURES, 2, updateFeatures("transaction.version", 2, UPGRADE, true));
        assertThat(dryRun.errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(transactionVersion(apiVersionsV5(null, -1))).isEqualTo((short) 1);
        // v0 says upgrade with AllowDowngrade=false.
        UpdateFeaturesRequestData v0 = new UpdateFeaturesRequestData().setTimeoutMs(10_000);
        v0.featureUpdates().add(new UpdateFeaturesRequestData.FeatureUpdateKey().setFeature("transaction.version").setMaxVersionLevel((short) 2)
            .setAllowDowngrade(false));
        assertThat(((UpdateFeaturesResponseData) client.send(ApiMessageType.UPDATE_FEATURES, 0, v0)).errorCode()).isEqualTo(ErrorCode.NONE.code());
        ApiVersionsResponseData upgraded = apiVersionsV5(null, -1);
        assertThat(transactionVersion(upgraded)).isEqualTo((short) 2);
        assertThat(maxVersion(upgraded, ApiMessageType.PRODUCE)).isEqualTo((short) 13);
        assertThat(maxVersion(upgraded, ApiMessageType.END_TXN)).isEqualTo((short) 5);
    }

    private static final byte UPGRADE = 1;
    private static final byte SAFE_DOWNGRADE = 2;

    private static short transactionVersion(ApiVersionsResponseData response) {
        return response.finalizedFeatures().stream().filter(feature -> feature.name().equals("transaction.version")).findFirst()
            .orElseThrow().maxVersionLevel();
    }

    private static short maxVersion(ApiVersionsResponseData response, ApiMessageType api) {
        return response.apiKeys().stream().filter(key -> key.apiKey() == api.apiKey).findFirst().orElseThrow().maxVersion();
    }

    private static UpdateFeaturesRequestData updateFeatures(String feature, int level, byte upgradeType, boolean validateOnly) {
        UpdateFeaturesRequestData request = new UpdateFeaturesRequestData().setTimeoutMs(10_000).setValidateOnly(validateOnly);
        request.featureUpdates().add(new UpdateFeaturesRequestData.FeatureUpdateKey().setFeature(feature).setMaxVersionLevel((short) level)
            .setUpgradeType(upgradeType));
        return request;
    }

    @Test
    void describeQuorumAnswersForTheMetadataPartitionOnly() throws Exception {
        DescribeQuorumRequestData metadata = new DescribeQuorumRequestData().setTopics(List.of(new DescribeQuorumRequestData.TopicData()
            .setTopicName("__cluster_metadata").setPartitions(List.of(new DescribeQuorumRequestData.PartitionData().setPartitionIndex(0)))));
        DescribeQuorumResponseData v2 = client.send(ApiMessageType.DESCRIBE_QUORUM, 2, metadata);
        DescribeQuorumResponseData.PartitionData partition = v2.topics().get(0).partitions().get(0);
        assertThat(partition.errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(partition.leaderId()).isEqualTo(broker.server().nodeId());
        assertThat(partition.currentVoters()).singleElement().satisfies(voter -> {
            assertThat(voter.logEndOffset()).isEqualTo(partition.highWatermark());
            assertThat(voter.lastFetchTimestamp()).isPositive();
        });
        assertThat(v2.nodes()).singleElement().satisfies(node -> assertThat(node.listeners()).isNotEmpty());
        // v0 has no timestamps: the client reads them as unknown (-1).
        DescribeQuorumResponseData v0 = client.send(ApiMessageType.DESCRIBE_QUORUM, 0, metadata);
        assertThat(v0.topics().get(0).partitions().get(0).currentVoters().get(0).lastFetchTimestamp()).isEqualTo(-1);

        DescribeQuorumResponseData other = client.send(ApiMessageType.DESCRIBE_QUORUM, 2, new DescribeQuorumRequestData().setTopics(List.of(
            new DescribeQuorumRequestData.TopicData().setTopicName(TOPIC).setPartitions(List.of(new DescribeQuorumRequestData.PartitionData())))));
        assertThat(other.topics().get(0).partitions().get(0).errorCode()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(other.topics().get(0).partitions().get(0).errorMessage()).isEqualTo("This server does not host this topic-partition.");
    }

    @Test
    void aTransactionsV2MarkerMustBeAboveTheEpochTheDataWasWrittenWith() throws Exception {
        InitProducerIdResponseData producer = initProducerId("tx");
        short epoch = producer.producerEpoch();
        var records = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0)
            .producerState(producer.producerId(), epoch, 0, true)
            .append(System.currentTimeMillis(), null, "in-transaction".getBytes(java.nio.charset.StandardCharsets.UTF_8)).build();
        ProduceRequestData produce = new ProduceRequestData().setTransactionalId("tx").setAcks((short) -1).setTimeoutMs(10_000)
            .setTopicData(List.of(new ProduceRequestData.TopicProduceData().setName(TOPIC)
                .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records)))));
        ProduceResponseData produced = sendUntil(ApiMessageType.PRODUCE, 12, produce,
            answer -> settled(answer.responses().get(0).partitionResponses().get(0).errorCode()));
        assertThat(produced.responses().get(0).partitionResponses().get(0).errorCode()).isEqualTo(ErrorCode.NONE.code());

        // A v2 marker at the data's own epoch is stale: a transactions v2 coordinator always ends with a bumped epoch.
        assertThat(writeMarker(2, producer.producerId(), epoch, (byte) 2)).isEqualTo(ErrorCode.INVALID_PRODUCER_EPOCH.code());
        // The bumped epoch a transactions v2 coordinator ends with is accepted.
        assertThat(writeMarker(2, producer.producerId(), (short) (epoch + 1), (byte) 2)).isEqualTo(ErrorCode.NONE.code());
    }

    private short writeMarker(int version, long producerId, short epoch, byte transactionVersion) throws Exception {
        WriteTxnMarkersRequestData request = new WriteTxnMarkersRequestData().setMarkers(List.of(new WriteTxnMarkersRequestData.WritableTxnMarker()
            .setProducerId(producerId).setProducerEpoch(epoch).setTransactionResult(false).setCoordinatorEpoch(0)
            .setTransactionVersion(transactionVersion).setTopics(List.of(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName(TOPIC)
                .setPartitionIndexes(List.of(0))))));
        WriteTxnMarkersResponseData response = client.send(ApiMessageType.WRITE_TXN_MARKERS, version, request);
        return response.markers().get(0).topics().get(0).partitions().get(0).errorCode();
    }

    private InitProducerIdResponseData initProducerId(String transactionalId) throws Exception {
        FindCoordinatorResponseData coordinator = sendUntil(ApiMessageType.FIND_COORDINATOR, 3,
            new FindCoordinatorRequestData().setKey(transactionalId).setKeyType((byte) 1), response -> settled(response.errorCode()));
        assertThat(coordinator.errorCode()).isEqualTo(ErrorCode.NONE.code());
        InitProducerIdResponseData init = sendUntil(ApiMessageType.INIT_PRODUCER_ID, 5, new InitProducerIdRequestData()
            .setTransactionalId(transactionalId).setTransactionTimeoutMs(60_000).setProducerId(-1).setProducerEpoch((short) -1),
            response -> settled(response.errorCode()));
        assertThat(init.errorCode()).isEqualTo(ErrorCode.NONE.code());
        return init;
    }
}
