package io.strata.server.cluster;

import io.strata.metadata.MetadataImage;
import io.strata.metadata.record.PartitionRecord;
import io.strata.metadata.record.RegisterBrokerRecord;
import io.strata.metadata.record.TopicRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AddPartitionsToTxnRequestData;
import io.strata.protocol.message.AddPartitionsToTxnResponseData;
import io.strata.server.api.InternalTopics;
import io.strata.storage.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * AddPartitionsToTxnManager without sockets: an image where node 1 (this node) leads shard 0 of
 * {@code __transaction_state} and node 2 leads shard 1, a local coordinator and a sender that
 * records requests and answers when the test says.
 */
class AddPartitionsToTxnManagerTest {
    private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);
    private static final TopicPartition ORDERS_1 = new TopicPartition("orders", 1);

    private record Sent(int brokerId, String host, int port, AddPartitionsToTxnRequestData request,
                        CompletableFuture<AddPartitionsToTxnResponseData> answer) {
    }

    private final List<Sent> sent = new ArrayList<>();
    private final List<String> localCalls = new ArrayList<>();
    private MetadataImage image = image(true);
    private final AddPartitionsToTxnManager manager = new AddPartitionsToTxnManager(1, () -> image,
        transactionalId -> transactionalId.startsWith("local") ? 0 : 1,
        (transactionalId, producerId, producerEpoch, partitions, verifyOnly) -> {
            localCalls.add(transactionalId + (verifyOnly ? " verify" : " add"));
            return CompletableFuture.completedFuture(Map.of(ORDERS_0, ErrorCode.NONE));
        },
        "PLAINTEXT", (brokerId, host, port, request) -> {
            CompletableFuture<AddPartitionsToTxnResponseData> answer = new CompletableFuture<>();
            sent.add(new Sent(brokerId, host, port, request, answer));
            return answer;
        });

    private static MetadataImage image(boolean shardOneHasLeader) {
        UUID topicId = new UUID(7, 7);
        List<ApiMessage> records = new ArrayList<>();
        for (int id = 1; id <= 2; id++) {
            RegisterBrokerRecord broker = new RegisterBrokerRecord().setBrokerId(id).setBrokerEpoch(id).setIncarnationId(new UUID(id, id))
                .setFenced(false);
            broker.endPoints().add(new RegisterBrokerRecord.BrokerEndpoint().setName("PLAINTEXT").setHost("host" + id).setPort(9090 + id)
                .setSecurityProtocol((short) 0));
            records.add(broker);
        }
        records.add(new TopicRecord().setName(InternalTopics.TRANSACTION_STATE).setTopicId(topicId));
        records.add(partition(topicId, 0, 1));
        records.add(partition(topicId, 1, shardOneHasLeader ? 2 : -1));
        return MetadataImage.EMPTY.apply(records, records.size() - 1);
    }

    private static PartitionRecord partition(UUID topicId, int index, int leader) {
        PartitionRecord record = new PartitionRecord().setTopicId(topicId).setPartitionId(index).setLeader(leader).setLeaderEpoch(0)
            .setPartitionEpoch(0);
        record.replicas().add(leader < 0 ? 2 : leader);
        record.isr().add(leader < 0 ? 2 : leader);
        return record;
    }

    private CompletableFuture<Map<TopicPartition, ErrorCode>> add(String transactionalId, int epoch, TopicPartition... partitions) {
        return manager.addOrVerify(transactionalId, 10, (short) epoch, Set.of(partitions), false);
    }

    private static AddPartitionsToTxnResponseData answer(AddPartitionsToTxnRequestData request, ErrorCode error) {
        AddPartitionsToTxnResponseData response = new AddPartitionsToTxnResponseData();
        for (AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction transaction : request.transactions()) {
            AddPartitionsToTxnResponseData.AddPartitionsToTxnResult result = new AddPartitionsToTxnResponseData.AddPartitionsToTxnResult()
                .setTransactionalId(transaction.transactionalId());
            for (AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic topic : transaction.topics()) {
                AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult topicResult = new AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult()
                    .setName(topic.name());
                topic.partitions().forEach(index -> topicResult.resultsByPartition().add(
                    new AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResult().setPartitionIndex(index).setPartitionErrorCode(error.code())));
                result.topicResults().add(topicResult);
            }
            response.resultsByTransaction().add(result);
        }
        return response;
    }

    @Test
    void aShardLedHereIsAskedDirectlyAndNothingIsSent() {
        assertThat(manager.addOrVerify("local-a", 10, (short) 0, Set.of(ORDERS_0), true).join()).containsEntry(ORDERS_0, ErrorCode.NONE);
        assertThat(localCalls).containsExactly("local-a verify");
        assertThat(sent).isEmpty();
    }

    @Test
    void aShardLedElsewhereGetsAVersion5BatchAtItsLeadersInterBrokerEndpoint() {
        CompletableFuture<Map<TopicPartition, ErrorCode>> verified = manager.addOrVerify("remote-a", 10, (short) 3, Set.of(ORDERS_0, ORDERS_1), true);
        assertThat(sent).hasSize(1);
        Sent request = sent.get(0);
        assertThat(request.brokerId()).isEqualTo(2);
        assertThat(request.host()).isEqualTo("host2");
        assertThat(request.port()).isEqualTo(9092);
        AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction transaction = request.request().transactions().get(0);
        assertThat(transaction.transactionalId()).isEqualTo("remote-a");
        assertThat(transaction.producerEpoch()).isEqualTo((short) 3);
        assertThat(transaction.verifyOnly()).isTrue();
        assertThat(transaction.topics().get(0).partitions()).containsExactlyInAnyOrder(0, 1);
        request.answer().complete(answer(request.request(), ErrorCode.INVALID_TXN_STATE));
        assertThat(verified.join()).containsOnly(Map.entry(ORDERS_0, ErrorCode.INVALID_TXN_STATE), Map.entry(ORDERS_1, ErrorCode.INVALID_TXN_STATE));
        assertThat(localCalls).isEmpty();
    }

    @Test
    void whileARequestIsInFlightTheNextTransactionsWaitAndGoOutAsOneRequest() {
        CompletableFuture<Map<TopicPartition, ErrorCode>> first = add("remote-a", 0, ORDERS_0);
        CompletableFuture<Map<TopicPartition, ErrorCode>> second = add("remote-b", 0, ORDERS_0);
        CompletableFuture<Map<TopicPartition, ErrorCode>> third = add("remote-c", 0, ORDERS_1);
        assertThat(sent).hasSize(1);
        sent.get(0).answer().complete(answer(sent.get(0).request(), ErrorCode.NONE));
        assertThat(first.join()).containsOnly(Map.entry(ORDERS_0, ErrorCode.NONE));
        assertThat(sent).hasSize(2);
        assertThat(sent.get(1).request().transactions()).extracting(AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction::transactionalId)
            .containsExactly("remote-b", "remote-c");
        assertThat(second).isNotDone();
        sent.get(1).answer().complete(answer(sent.get(1).request(), ErrorCode.CONCURRENT_TRANSACTIONS));
        assertThat(second.join()).containsOnly(Map.entry(ORDERS_0, ErrorCode.CONCURRENT_TRANSACTIONS));
        assertThat(third.join()).containsOnly(Map.entry(ORDERS_1, ErrorCode.CONCURRENT_TRANSACTIONS));
    }

    @Test
    void aSecondEntryForAPendingTransactionalIdReplacesOrIsRefusedByEpoch() {
        add("remote-busy", 0, ORDERS_0); // in flight
        CompletableFuture<Map<TopicPartition, ErrorCode>> retried = add("remote-a", 4, ORDERS_0);
        CompletableFuture<Map<TopicPartition, ErrorCode>> retry = add("remote-a", 4, ORDERS_0);
        assertThat(retried.join()).as("same epoch: the client retried").containsOnly(Map.entry(ORDERS_0, ErrorCode.NETWORK_EXCEPTION));
        CompletableFuture<Map<TopicPartition, ErrorCode>> newer = add("remote-a", 5, ORDERS_0);
        assertThat(retry.join()).as("a higher epoch fences the pending one").containsOnly(Map.entry(ORDERS_0, ErrorCode.INVALID_PRODUCER_EPOCH));
        CompletableFuture<Map<TopicPartition, ErrorCode>> zombie = add("remote-a", 4, ORDERS_0);
        assertThat(zombie.join()).as("a lower epoch is refused at once").containsOnly(Map.entry(ORDERS_0, ErrorCode.INVALID_PRODUCER_EPOCH));
        sent.get(0).answer().complete(answer(sent.get(0).request(), ErrorCode.NONE));
        assertThat(sent).hasSize(2);
        assertThat(sent.get(1).request().transactions()).hasSize(1);
        assertThat(sent.get(1).request().transactions().get(0).producerEpoch()).isEqualTo((short) 5);
        assertThat(newer).isNotDone();
    }

    @Test
    void failuresAndUndecidedPartitionsAreRetriableAndAnUnledShardIsCoordinatorNotAvailable() {
        CompletableFuture<Map<TopicPartition, ErrorCode>> lost = add("remote-a", 0, ORDERS_0);
        sent.get(0).answer().completeExceptionally(new java.io.IOException("connection refused"));
        assertThat(lost.join()).containsOnly(Map.entry(ORDERS_0, ErrorCode.NETWORK_EXCEPTION));

        CompletableFuture<Map<TopicPartition, ErrorCode>> partial = add("remote-a", 0, ORDERS_0, ORDERS_1);
        AddPartitionsToTxnRequestData request = sent.get(1).request();
        AddPartitionsToTxnResponseData response = answer(request, ErrorCode.NONE);
        response.resultsByTransaction().get(0).topicResults().get(0).resultsByPartition().removeIf(result -> result.partitionIndex() == 1);
        sent.get(1).answer().complete(response);
        assertThat(partial.join()).containsOnly(Map.entry(ORDERS_0, ErrorCode.NONE), Map.entry(ORDERS_1, ErrorCode.NETWORK_EXCEPTION));

        CompletableFuture<Map<TopicPartition, ErrorCode>> denied = add("remote-a", 0, ORDERS_0);
        sent.get(2).answer().complete(new AddPartitionsToTxnResponseData().setErrorCode(ErrorCode.CLUSTER_AUTHORIZATION_FAILED.code()));
        assertThat(denied.join()).containsOnly(Map.entry(ORDERS_0, ErrorCode.INVALID_TXN_STATE));

        image = image(false);
        assertThat(add("remote-a", 0, ORDERS_0).join()).containsOnly(Map.entry(ORDERS_0, ErrorCode.COORDINATOR_NOT_AVAILABLE));
        assertThat(sent).hasSize(3);
    }

    @Test
    void closingAnswersTheWaitingTransactions() {
        add("remote-busy", 0, ORDERS_0);
        CompletableFuture<Map<TopicPartition, ErrorCode>> waiting = add("remote-a", 0, ORDERS_0);
        manager.close();
        assertThat(waiting.join()).containsOnly(Map.entry(ORDERS_0, ErrorCode.NETWORK_EXCEPTION));
        assertThat(add("remote-b", 0, ORDERS_0).join()).containsOnly(Map.entry(ORDERS_0, ErrorCode.NETWORK_EXCEPTION));
    }
}
