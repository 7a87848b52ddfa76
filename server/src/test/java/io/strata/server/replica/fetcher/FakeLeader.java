package io.strata.server.replica.fetcher;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.message.ListOffsetsRequestData;
import io.strata.protocol.message.ListOffsetsResponseData;
import io.strata.protocol.message.OffsetForLeaderEpochRequestData;
import io.strata.protocol.message.OffsetForLeaderEpochResponseData;
import io.strata.storage.EpochOffset;
import io.strata.storage.TopicPartition;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * A scripted leader: answers follower requests from in-memory leader logs with Kafka's leader-side
 * rules (CurrentLeaderEpoch fenced/unknown, LastFetchedEpoch → DivergingEpoch, out of range, read
 * to the log end, high watermark and log start), records every request, and can be told to fail
 * requests, hold them unanswered, or answer an error for a partition. Thread-safe (synchronized).
 */
final class FakeLeader implements LeaderEndpoint {
    /** One partition this leader leads. */
    static final class Led {
        final InMemoryLog log;
        int leaderEpoch;
        long highWatermark;

        Led(InMemoryLog log, int leaderEpoch) {
            this.log = log;
            this.leaderEpoch = leaderEpoch;
        }
    }

    private final int leaderId;
    private final boolean truncationOnFetch;
    private final Map<TopicPartition, Led> led = new HashMap<>();
    private final Map<UUID, String> topicNames = new HashMap<>();
    private final Map<TopicPartition, Deque<ErrorCode>> scriptedErrors = new HashMap<>();
    final List<Object> requests = new ArrayList<>();
    private int failNextRequests;
    private boolean holdRequests;
    final List<CompletableFuture<?>> held = new ArrayList<>();
    private boolean closed;

    FakeLeader(int leaderId) {
        this(leaderId, true);
    }

    FakeLeader(int leaderId, boolean truncationOnFetch) {
        this.leaderId = leaderId;
        this.truncationOnFetch = truncationOnFetch;
    }

    synchronized Led lead(InMemoryLog log, int leaderEpoch) {
        Led partition = new Led(log, leaderEpoch);
        led.put(log.topicPartition(), partition);
        topicNames.put(log.topicId(), log.topicPartition().topic());
        return partition;
    }

    synchronized void failNextRequests(int count) {
        failNextRequests = count;
    }

    synchronized void holdRequests(boolean hold) {
        holdRequests = hold;
    }

    synchronized void answerNext(TopicPartition topicPartition, ErrorCode error) {
        scriptedErrors.computeIfAbsent(topicPartition, tp -> new ArrayDeque<>()).add(error);
    }

    synchronized boolean isClosed() {
        return closed;
    }

    synchronized <T> List<T> requestsOf(Class<T> type) {
        return requests.stream().filter(type::isInstance).map(type::cast).toList();
    }

    @Override
    public int leaderId() {
        return leaderId;
    }

    @Override
    public boolean isTruncationOnFetchSupported() {
        return truncationOnFetch;
    }

    private <T> CompletableFuture<T> answer(Object request, java.util.function.Supplier<T> body) {
        requests.add(request);
        if (failNextRequests > 0) {
            failNextRequests--;
            return CompletableFuture.failedFuture(new IOException("connection refused (scripted)"));
        }
        if (holdRequests) {
            CompletableFuture<T> future = new CompletableFuture<>();
            held.add(future);
            return future;
        }
        return CompletableFuture.completedFuture(body.get());
    }

    private ErrorCode epochError(Led partition, int currentLeaderEpoch) {
        if (partition == null) {
            return ErrorCode.NOT_LEADER_OR_FOLLOWER;
        }
        if (currentLeaderEpoch < partition.leaderEpoch) {
            return ErrorCode.FENCED_LEADER_EPOCH;
        }
        return currentLeaderEpoch > partition.leaderEpoch ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.NONE;
    }

    private ErrorCode scripted(TopicPartition topicPartition) {
        Deque<ErrorCode> errors = scriptedErrors.get(topicPartition);
        return errors == null || errors.isEmpty() ? null : errors.poll();
    }

    @Override
    public synchronized CompletableFuture<FetchResponseData> fetch(FetchRequestData request) {
        return answer(request, () -> {
            FetchResponseData response = new FetchResponseData();
            for (FetchRequestData.FetchTopic topic : request.topics()) {
                FetchResponseData.FetchableTopicResponse topicResponse = new FetchResponseData.FetchableTopicResponse().setTopicId(topic.topicId());
                for (FetchRequestData.FetchPartition partition : topic.partitions()) {
                    TopicPartition topicPartition = new TopicPartition(topicNames.getOrDefault(topic.topicId(), "?"), partition.partition());
                    topicResponse.partitions().add(fetchPartition(topicPartition, partition, request.maxBytes()));
                }
                response.responses().add(topicResponse);
            }
            return response;
        });
    }

    private FetchResponseData.PartitionData fetchPartition(TopicPartition topicPartition, FetchRequestData.FetchPartition partition, int maxBytes) {
        FetchResponseData.PartitionData data = new FetchResponseData.PartitionData().setPartitionIndex(partition.partition())
            .setHighWatermark(-1).setLogStartOffset(-1);
        Led leader = led.get(topicPartition);
        ErrorCode error = scripted(topicPartition);
        if (error == null) {
            error = epochError(leader, partition.currentLeaderEpoch());
        }
        if (error != ErrorCode.NONE) {
            return data.setErrorCode(error.code());
        }
        InMemoryLog log = leader.log;
        data.setHighWatermark(leader.highWatermark).setLogStartOffset(log.logStartOffset());
        if (partition.lastFetchedEpoch() >= 0) {
            Optional<EpochOffset> end = log.endOffsetForEpoch(partition.lastFetchedEpoch());
            EpochOffset epochEnd = end.orElse(new EpochOffset(-1, -1));
            if (epochEnd.epoch() < partition.lastFetchedEpoch() || epochEnd.endOffset() < partition.fetchOffset()) {
                return data.setDivergingEpoch(new FetchResponseData.EpochEndOffset().setEpoch(epochEnd.epoch()).setEndOffset(epochEnd.endOffset()));
            }
        }
        if (partition.fetchOffset() > log.logEndOffset() || partition.fetchOffset() < log.logStartOffset()) {
            return data.setErrorCode(ErrorCode.OFFSET_OUT_OF_RANGE.code()).setHighWatermark(-1).setLogStartOffset(-1);
        }
        return data.setRecords(log.read(partition.fetchOffset(), Math.min(maxBytes, partition.partitionMaxBytes())));
    }

    @Override
    public synchronized CompletableFuture<OffsetForLeaderEpochResponseData> fetchEpochEndOffsets(OffsetForLeaderEpochRequestData request) {
        return answer(request, () -> {
            OffsetForLeaderEpochResponseData response = new OffsetForLeaderEpochResponseData();
            for (OffsetForLeaderEpochRequestData.OffsetForLeaderTopic topic : request.topics()) {
                OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult result =
                    new OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult().setTopic(topic.topic());
                for (OffsetForLeaderEpochRequestData.OffsetForLeaderPartition partition : topic.partitions()) {
                    Led leader = led.get(new TopicPartition(topic.topic(), partition.partition()));
                    ErrorCode error = epochError(leader, partition.currentLeaderEpoch());
                    OffsetForLeaderEpochResponseData.EpochEndOffset answer = new OffsetForLeaderEpochResponseData.EpochEndOffset()
                        .setPartition(partition.partition()).setErrorCode(error.code()).setLeaderEpoch(-1).setEndOffset(-1);
                    if (error == ErrorCode.NONE) {
                        leader.log.endOffsetForEpoch(partition.leaderEpoch())
                            .ifPresent(end -> answer.setLeaderEpoch(end.epoch()).setEndOffset(end.endOffset()));
                    }
                    result.partitions().add(answer);
                }
                response.topics().add(result);
            }
            return response;
        });
    }

    @Override
    public synchronized CompletableFuture<ListOffsetsResponseData> listOffsets(ListOffsetsRequestData request) {
        return answer(request, () -> {
            ListOffsetsResponseData response = new ListOffsetsResponseData();
            for (ListOffsetsRequestData.ListOffsetsTopic topic : request.topics()) {
                ListOffsetsResponseData.ListOffsetsTopicResponse result = new ListOffsetsResponseData.ListOffsetsTopicResponse().setName(topic.name());
                for (ListOffsetsRequestData.ListOffsetsPartition partition : topic.partitions()) {
                    Led leader = led.get(new TopicPartition(topic.name(), partition.partitionIndex()));
                    ErrorCode error = epochError(leader, partition.currentLeaderEpoch());
                    ListOffsetsResponseData.ListOffsetsPartitionResponse answer = new ListOffsetsResponseData.ListOffsetsPartitionResponse()
                        .setPartitionIndex(partition.partitionIndex()).setErrorCode(error.code()).setOffset(-1).setTimestamp(-1);
                    if (error == ErrorCode.NONE) {
                        answer.setOffset(partition.timestamp() == ReplicaFetcher.LATEST_TIMESTAMP ? leader.log.logEndOffset() : leader.log.logStartOffset());
                    }
                    result.partitions().add(answer);
                }
                response.topics().add(result);
            }
            return response;
        });
    }

    @Override
    public synchronized void close() {
        closed = true;
    }
}
