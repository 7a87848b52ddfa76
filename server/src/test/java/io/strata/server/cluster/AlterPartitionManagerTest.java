package io.strata.server.cluster;

import io.strata.common.MockTime;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.storage.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** Batching, one request in flight, retries with back-off, and per-partition answers of the AlterPartitionManager. */
class AlterPartitionManagerTest {
    private static final UUID TOPIC_A = UUID.randomUUID();
    private static final UUID TOPIC_B = UUID.randomUUID();

    /** Requests the manager sent, answered when the test says. */
    private final List<AlterPartitionRequestData> requests = new ArrayList<>();
    private final List<CompletableFuture<AlterPartitionResponseData>> answers = new ArrayList<>();
    /** Retries the manager scheduled (delay, task); run when the test says. */
    private final List<Long> delays = new ArrayList<>();
    private final List<Runnable> retries = new ArrayList<>();
    private final AtomicLong brokerEpoch = new AtomicLong(42L);
    private final AlterPartitionManager manager = new AlterPartitionManager(1, brokerEpoch::get, request -> {
        CompletableFuture<AlterPartitionResponseData> answer = new CompletableFuture<>();
        requests.add(request);
        answers.add(answer);
        return answer;
    }, (task, delayMs) -> {
        delays.add(delayMs);
        retries.add(task);
    }, new MockTime());

    private static AlterPartitionRequestData.PartitionData change(int partition, int leaderEpoch, int partitionEpoch, int... isr) {
        AlterPartitionRequestData.PartitionData change = new AlterPartitionRequestData.PartitionData().setPartitionIndex(partition)
            .setLeaderEpoch(leaderEpoch).setPartitionEpoch(partitionEpoch);
        for (int member : isr) {
            change.newIsrWithEpochs().add(new AlterPartitionRequestData.BrokerState().setBrokerId(member).setBrokerEpoch(100 + member));
        }
        return change;
    }

    private CompletableFuture<AlterPartitionResponseData.PartitionData> submit(String topic, UUID id, int partition, int... isr) {
        return manager.submit(new TopicPartition(topic, partition), id, change(partition, 3, 5, isr));
    }

    private static AlterPartitionResponseData answer(UUID topicId, int partition, ErrorCode error, int partitionEpoch, Integer... isr) {
        AlterPartitionResponseData response = new AlterPartitionResponseData().setErrorCode(ErrorCode.NONE.code());
        AlterPartitionResponseData.TopicData topic = new AlterPartitionResponseData.TopicData().setTopicId(topicId);
        topic.partitions().add(new AlterPartitionResponseData.PartitionData().setPartitionIndex(partition).setErrorCode(error.code())
            .setLeaderId(1).setLeaderEpoch(3).setPartitionEpoch(partitionEpoch).setIsr(List.of(isr)));
        response.topics().add(topic);
        return response;
    }

    @Test
    void oneRequestIsInFlightAndWhatQueuesMeanwhileGoesOutAsOneBatch() {
        CompletableFuture<AlterPartitionResponseData.PartitionData> first = submit("a", TOPIC_A, 0, 1, 2);
        assertThat(requests).hasSize(1);
        AlterPartitionRequestData sent = requests.get(0);
        assertThat(sent.brokerId()).isEqualTo(1);
        assertThat(sent.brokerEpoch()).isEqualTo(42L);
        assertThat(sent.topics()).singleElement().satisfies(topic -> {
            assertThat(topic.topicId()).isEqualTo(TOPIC_A);
            assertThat(topic.partitions()).singleElement().satisfies(partition -> {
                assertThat(partition.leaderEpoch()).isEqualTo(3);
                assertThat(partition.partitionEpoch()).isEqualTo(5);
                assertThat(partition.newIsrWithEpochs()).extracting(AlterPartitionRequestData.BrokerState::brokerId).containsExactly(1, 2);
            });
        });

        CompletableFuture<AlterPartitionResponseData.PartitionData> second = submit("a", TOPIC_A, 1, 1);
        CompletableFuture<AlterPartitionResponseData.PartitionData> third = submit("b", TOPIC_B, 0, 1, 3);
        assertThat(requests).as("one request in flight").hasSize(1);
        assertThat(manager.pendingCount()).isEqualTo(3);

        answers.get(0).complete(answer(TOPIC_A, 0, ErrorCode.NONE, 6, 1, 2));
        assertThat(first).isCompletedWithValueMatching(data -> data.partitionEpoch() == 6 && data.isr().equals(List.of(1, 2)));
        assertThat(requests).as("the queued changes leave together").hasSize(2);
        AlterPartitionRequestData batch = requests.get(1);
        assertThat(batch.topics()).extracting(AlterPartitionRequestData.TopicData::topicId).containsExactly(TOPIC_A, TOPIC_B);
        assertThat(batch.topics().get(0).partitions()).extracting(AlterPartitionRequestData.PartitionData::partitionIndex).containsExactly(1);
        assertThat(second).isNotDone();
        assertThat(third).isNotDone();
    }

    @Test
    void aSecondChangeForAPartitionWithOnePendingIsNotAttempted() {
        submit("a", TOPIC_A, 0, 1, 2);
        CompletableFuture<AlterPartitionResponseData.PartitionData> duplicate = submit("a", TOPIC_A, 0, 1);
        assertThat(duplicate).isCompletedWithValueMatching(data -> data.errorCode() == ErrorCode.OPERATION_NOT_ATTEMPTED.code());
        assertThat(requests).hasSize(1);
    }

    @Test
    void aFailedRequestIsRetriedWithBackOffAndTheCurrentBrokerEpoch() {
        CompletableFuture<AlterPartitionResponseData.PartitionData> change = submit("a", TOPIC_A, 0, 1, 2);
        answers.get(0).completeExceptionally(new java.util.concurrent.TimeoutException("no answer"));
        assertThat(change).isNotDone();
        assertThat(manager.failedRequests()).isEqualTo(1);
        assertThat(delays).containsExactly(AlterPartitionManager.RETRY_BACKOFF_INITIAL_MS);

        submit("b", TOPIC_B, 0, 1);
        assertThat(requests).as("nothing is sent while the retry waits").hasSize(1);

        brokerEpoch.set(43L);
        retries.get(0).run();
        assertThat(requests).hasSize(2);
        assertThat(requests.get(1).brokerEpoch()).isEqualTo(43L);
        assertThat(requests.get(1).topics()).extracting(AlterPartitionRequestData.TopicData::topicId).containsExactly(TOPIC_A, TOPIC_B);

        answers.get(1).complete(new AlterPartitionResponseData().setErrorCode(ErrorCode.NOT_CONTROLLER.code()));
        assertThat(delays).as("the back-off doubles").containsExactly(AlterPartitionManager.RETRY_BACKOFF_INITIAL_MS,
            2 * AlterPartitionManager.RETRY_BACKOFF_INITIAL_MS);
        assertThat(change).isNotDone();

        retries.get(1).run();
        answers.get(2).complete(answer(TOPIC_A, 0, ErrorCode.NONE, 6, 1, 2));
        assertThat(change).isCompletedWithValueMatching(data -> data.errorCode() == ErrorCode.NONE.code() && data.partitionEpoch() == 6);
        assertThat(manager.failedRequests()).isEqualTo(2);
    }

    @Test
    void aSenderThatThrowsIsAFailureToRetry() {
        AlterPartitionManager throwing = new AlterPartitionManager(1, () -> 1L, request -> {
            throw new IllegalStateException("no controller channel");
        }, (task, delayMs) -> retries.add(task), new MockTime());
        CompletableFuture<AlterPartitionResponseData.PartitionData> change =
            throwing.submit(new TopicPartition("a", 0), TOPIC_A, change(0, 3, 5, 1));
        assertThat(change).isNotDone();
        assertThat(throwing.failedRequests()).isEqualTo(1);
        assertThat(retries).hasSize(1);
        assertThat(throwing.pendingCount()).isEqualTo(1);
    }

    @Test
    void perPartitionErrorsGoBackToTheirPartitionAndAMissingAnswerIsAnError() {
        CompletableFuture<AlterPartitionResponseData.PartitionData> refused = submit("a", TOPIC_A, 0, 1, 2);
        answers.get(0).complete(answer(TOPIC_A, 0, ErrorCode.INELIGIBLE_REPLICA, -1));
        assertThat(refused).isCompletedWithValueMatching(data -> data.errorCode() == ErrorCode.INELIGIBLE_REPLICA.code());
        assertThat(manager.failedRequests()).as("a per-partition error is the partition's to handle").isZero();

        CompletableFuture<AlterPartitionResponseData.PartitionData> fenced = submit("a", TOPIC_A, 0, 1);
        CompletableFuture<AlterPartitionResponseData.PartitionData> missing = submit("b", TOPIC_B, 0, 1);
        assertThat(requests).hasSize(2);
        assertThat(missing).isNotDone();
        answers.get(1).complete(answer(TOPIC_A, 0, ErrorCode.FENCED_LEADER_EPOCH, -1));
        assertThat(fenced).isCompletedWithValueMatching(data -> data.errorCode() == ErrorCode.FENCED_LEADER_EPOCH.code());
        assertThat(requests).as("the change queued meanwhile leaves after the answer").hasSize(3);
        answers.get(2).complete(new AlterPartitionResponseData().setErrorCode(ErrorCode.NONE.code()));
        assertThat(missing).isCompletedWithValueMatching(data -> data.errorCode() == ErrorCode.UNKNOWN_SERVER_ERROR.code());
        assertThat(manager.pendingCount()).isZero();
    }
}
