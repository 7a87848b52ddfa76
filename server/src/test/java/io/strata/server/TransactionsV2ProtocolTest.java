package io.strata.server;

import io.strata.coordinator.transaction.TransactionCoordinator;
import io.strata.coordinator.transaction.TransactionMetadata;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AddPartitionsToTxnRequestData;
import io.strata.protocol.message.AddPartitionsToTxnResponseData;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsRequestData;
import io.strata.protocol.message.ApiVersionsResponseData;
import io.strata.protocol.message.DescribeProducersRequestData;
import io.strata.protocol.message.DescribeProducersResponseData;
import io.strata.protocol.message.EndTxnRequestData;
import io.strata.protocol.message.EndTxnResponseData;
import io.strata.protocol.message.FindCoordinatorRequestData;
import io.strata.protocol.message.FindCoordinatorResponseData;
import io.strata.protocol.message.InitProducerIdRequestData;
import io.strata.protocol.message.InitProducerIdResponseData;
import io.strata.protocol.message.ProduceRequestData;
import io.strata.protocol.message.ProduceResponseData;
import io.strata.protocol.message.TxnOffsetCommitRequestData;
import io.strata.protocol.message.TxnOffsetCommitResponseData;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Transactions v2 (KIP-890 part 2) on the wire, request by request: a transactional Produce v12
 * puts its partition into the transaction without AddPartitionsToTxn, EndTxn v5 bumps the epoch
 * and returns it, the old epoch is fenced from the partition, TxnOffsetCommit v5 adds the offsets
 * partition itself; and a transactions v1 client (AddPartitionsToTxn v3, Produce v11, EndTxn v4)
 * keeps its protocol, epoch included.
 */
class TransactionsV2ProtocolTest {
    private static final String TOPIC = "txn-v2";

    @TempDir
    Path dataDir;

    private TestBroker broker;
    private RawClient client;

    @BeforeEach
    void start() throws Exception {
        broker = new TestBroker(dataDir, Map.of("transaction.state.log.num.partitions", "1", "offsets.topic.num.partitions", "1"));
        broker.createTopic(TOPIC, 1, Map.of());
        client = new RawClient(broker.port());
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        broker.close();
    }

    /** Sends until the answer is no longer a transient one (coordinator loading, previous transaction completing). */
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

    private short produce(int version, String transactionalId, long producerId, int epoch, int sequence, String value) throws Exception {
        var records = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0)
            .producerState(producerId, (short) epoch, sequence, true)
            .append(System.currentTimeMillis(), null, value.getBytes(StandardCharsets.UTF_8)).build();
        ProduceRequestData request = new ProduceRequestData().setTransactionalId(transactionalId).setAcks((short) -1).setTimeoutMs(10_000)
            .setTopicData(List.of(new ProduceRequestData.TopicProduceData().setName(TOPIC)
                .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records)))));
        ProduceResponseData response = sendUntil(ApiMessageType.PRODUCE, version, request,
            answer -> answer.responses().get(0).partitionResponses().get(0).errorCode() != ErrorCode.CONCURRENT_TRANSACTIONS.code());
        return response.responses().get(0).partitionResponses().get(0).errorCode();
    }

    private EndTxnResponseData endTxn(int version, String transactionalId, long producerId, int epoch, boolean commit) throws Exception {
        return sendUntil(ApiMessageType.END_TXN, version, new EndTxnRequestData().setTransactionalId(transactionalId).setProducerId(producerId)
            .setProducerEpoch((short) epoch).setCommitted(commit), response -> settled(response.errorCode()));
    }

    private TransactionCoordinator.TransactionView describe(String transactionalId) throws Exception {
        return broker.server().transactionCoordinator().describe(transactionalId).get(10, TimeUnit.SECONDS);
    }

    private int partitionProducerEpoch(long producerId) throws Exception {
        DescribeProducersResponseData producers = client.send(ApiMessageType.DESCRIBE_PRODUCERS, 0, new DescribeProducersRequestData()
            .setTopics(List.of(new DescribeProducersRequestData.TopicRequest().setName(TOPIC).setPartitionIndexes(List.of(0)))));
        return producers.topics().get(0).partitions().get(0).activeProducers().stream().filter(p -> p.producerId() == producerId)
            .findFirst().orElseThrow().producerEpoch();
    }

    @Test
    void theBrokerAdvertisesTransactionsV2AndFinalizesItOnANewCluster() throws Exception {
        ApiVersionsResponseData versions = client.send(ApiMessageType.API_VERSIONS, 3,
            new ApiVersionsRequestData().setClientSoftwareName("raw").setClientSoftwareVersion("1"));
        assertThat(versions.finalizedFeatures()).anySatisfy(feature -> {
            assertThat(feature.name()).isEqualTo("transaction.version");
            assertThat(feature.maxVersionLevel()).isEqualTo((short) 2);
        });
        assertThat(versions.supportedFeatures()).anySatisfy(feature -> {
            assertThat(feature.name()).isEqualTo("transaction.version");
            assertThat(feature.maxVersion()).isEqualTo((short) 2);
        });
        Map<Short, Short> max = new java.util.HashMap<>();
        versions.apiKeys().forEach(api -> max.put(api.apiKey(), api.maxVersion()));
        assertThat(max.get(ApiMessageType.PRODUCE.apiKey)).isEqualTo((short) 13);
        assertThat(max.get(ApiMessageType.END_TXN.apiKey)).isEqualTo((short) 5);
        assertThat(max.get(ApiMessageType.TXN_OFFSET_COMMIT.apiKey)).isEqualTo((short) 6);
    }

    @Test
    void produceV12JoinsTheTransactionAndEndTxnV5BumpsTheEpochThatFencesLateWrites() throws Exception {
        InitProducerIdResponseData producer = initProducerId("tx");
        long pid = producer.producerId();
        assertThat(producer.producerEpoch()).isZero();

        assertThat(produce(12, "tx", pid, 0, 0, "first")).isEqualTo(ErrorCode.NONE.code());
        TransactionCoordinator.TransactionView open = describe("tx");
        assertThat(open.state()).isEqualTo("Ongoing");
        assertThat(open.partitions()).containsExactly(new TransactionMetadata.TxnPartition(TOPIC, 0));

        EndTxnResponseData committed = endTxn(5, "tx", pid, 0, true);
        assertThat(committed.errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(committed.producerId()).isEqualTo(pid);
        assertThat(committed.producerEpoch()).isEqualTo((short) 1);
        // A retry of the same EndTxn (its answer lost) gets the same new identity.
        EndTxnResponseData retried = endTxn(5, "tx", pid, 0, true);
        assertThat(retried.errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(retried.producerEpoch()).isEqualTo((short) 1);
        // The commit marker carries the bumped epoch.
        assertThat(partitionProducerEpoch(pid)).isEqualTo(1);

        // A late write of the committed transaction can neither join it nor open a new one.
        assertThat(produce(12, "tx", pid, 0, 1, "late")).isEqualTo(ErrorCode.INVALID_PRODUCER_EPOCH.code());
        assertThat(describe("tx").state()).isEqualTo("CompleteCommit");

        // The next transaction uses the new epoch, its sequences from 0.
        assertThat(produce(12, "tx", pid, 1, 0, "second")).isEqualTo(ErrorCode.NONE.code());
        EndTxnResponseData aborted = endTxn(5, "tx", pid, 1, false);
        assertThat(aborted.errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(aborted.producerEpoch()).isEqualTo((short) 2);
        assertThat(endTxn(5, "tx", pid, 0, false).errorCode()).isEqualTo(ErrorCode.PRODUCER_FENCED.code());
        assertThat(endTxn(4, "tx", pid, 0, false).errorCode()).isEqualTo(ErrorCode.PRODUCER_FENCED.code());
        assertThat(partitionProducerEpoch(pid)).isEqualTo(2);
    }

    @Test
    void txnOffsetCommitV5AddsTheOffsetsPartitionToTheTransaction() throws Exception {
        InitProducerIdResponseData producer = initProducerId("tx-offsets");
        long pid = producer.producerId();
        TxnOffsetCommitRequestData commit = new TxnOffsetCommitRequestData().setTransactionalId("tx-offsets").setGroupId("g")
            .setProducerId(pid).setProducerEpoch((short) 0).setGenerationIdOrMemberEpoch(-1).setMemberId("")
            .setTopics(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName(TOPIC)
                .setPartitions(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition().setPartitionIndex(0)
                    .setCommittedOffset(42).setCommittedLeaderEpoch(-1).setCommittedMetadata("")))));
        TxnOffsetCommitResponseData response = sendUntil(ApiMessageType.TXN_OFFSET_COMMIT, 5, commit,
            answer -> settled(answer.topics().get(0).partitions().get(0).errorCode()));
        assertThat(response.topics().get(0).partitions().get(0).errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(describe("tx-offsets").partitions()).containsExactly(new TransactionMetadata.TxnPartition("__consumer_offsets", 0));
        assertThat(endTxn(5, "tx-offsets", pid, 0, true).producerEpoch()).isEqualTo((short) 1);

        // The fenced epoch cannot commit offsets any more.
        TxnOffsetCommitResponseData fenced = sendUntil(ApiMessageType.TXN_OFFSET_COMMIT, 5, commit,
            answer -> settled(answer.topics().get(0).partitions().get(0).errorCode()));
        assertThat(fenced.topics().get(0).partitions().get(0).errorCode()).isEqualTo(ErrorCode.INVALID_PRODUCER_EPOCH.code());
    }

    @Test
    void idleTransactionalIdsExpireOnTheConfiguredSchedule(@TempDir Path otherDataDir) throws Exception {
        client.close();
        broker.close();
        broker = new TestBroker(otherDataDir, Map.of("transaction.state.log.num.partitions", "1", "transactional.id.expiration.ms", "3000",
            "transaction.remove.expired.transaction.cleanup.interval.ms", "100"));
        broker.createTopic(TOPIC, 1, Map.of());
        client = new RawClient(broker.port());
        long idle = initProducerId("idle").producerId();
        long open = initProducerId("open").producerId();
        assertThat(produce(12, "open", open, 0, 0, "open")).isEqualTo(ErrorCode.NONE.code());

        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TestBroker.TIMEOUT_MS);
        while (describe("idle") != null && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(describe("idle")).as("expired transactional id").isNull();
        // An open transaction is left to its own timeout (60 s here), however long it idles.
        assertThat(describe("open").state()).isEqualTo("Ongoing");
        InitProducerIdResponseData fresh = initProducerId("idle");
        assertThat(fresh.producerId()).isNotEqualTo(idle);
        assertThat(fresh.producerEpoch()).isZero();
    }

    @Test
    void aTransactionsV1ClientAddsPartitionsItselfAndKeepsItsEpoch() throws Exception {
        InitProducerIdResponseData producer = initProducerId("tx-v1");
        long pid = producer.producerId();
        // KIP-890 part 1: without AddPartitionsToTxn a v11 write is refused.
        assertThat(produce(11, "tx-v1", pid, 0, 0, "unadded")).isEqualTo(ErrorCode.INVALID_TXN_STATE.code());

        for (int txn = 0; txn < 2; txn++) {
            AddPartitionsToTxnResponseData added = sendUntil(ApiMessageType.ADD_PARTITIONS_TO_TXN, 3, new AddPartitionsToTxnRequestData()
                .setV3AndBelowTransactionalId("tx-v1").setV3AndBelowProducerId(pid).setV3AndBelowProducerEpoch((short) 0)
                .setV3AndBelowTopics(List.of(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(TOPIC).setPartitions(List.of(0)))),
                (AddPartitionsToTxnResponseData answer) -> settled(answer.resultsByTopicV3AndBelow().get(0).resultsByPartition().get(0)
                    .partitionErrorCode()));
            assertThat(added.resultsByTopicV3AndBelow().get(0).resultsByPartition().get(0).partitionErrorCode()).isEqualTo(ErrorCode.NONE.code());
            assertThat(produce(11, "tx-v1", pid, 0, txn, "v1-" + txn)).isEqualTo(ErrorCode.NONE.code());
            assertThat(endTxn(4, "tx-v1", pid, 0, true).errorCode()).isEqualTo(ErrorCode.NONE.code());
            assertThat(describe("tx-v1").producerEpoch()).isZero();
        }
        assertThat(endTxn(4, "tx-v1", pid, 0, true).errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(partitionProducerEpoch(pid)).isZero();
    }
}
