package io.strata.server.api;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import io.strata.coordinator.group.GroupCoordinator;
import io.strata.coordinator.transaction.TransactionCoordinator;
import io.strata.coordinator.transaction.TransactionMetadata;
import io.strata.metadata.TopicImage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AddOffsetsToTxnRequestData;
import io.strata.protocol.message.AddOffsetsToTxnResponseData;
import io.strata.protocol.message.AddPartitionsToTxnRequestData;
import io.strata.protocol.message.AddPartitionsToTxnResponseData;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.DescribeProducersRequestData;
import io.strata.protocol.message.DescribeProducersResponseData;
import io.strata.protocol.message.DescribeTransactionsRequestData;
import io.strata.protocol.message.DescribeTransactionsResponseData;
import io.strata.protocol.message.EndTxnRequestData;
import io.strata.protocol.message.EndTxnResponseData;
import io.strata.protocol.message.ListTransactionsRequestData;
import io.strata.protocol.message.ListTransactionsResponseData;
import io.strata.protocol.message.TxnOffsetCommitRequestData;
import io.strata.protocol.message.TxnOffsetCommitResponseData;
import io.strata.protocol.message.WriteTxnMarkersRequestData;
import io.strata.protocol.message.WriteTxnMarkersResponseData;
import io.strata.server.network.Request;
import io.strata.server.replica.Partition;
import io.strata.storage.ProducerStateEntry;
import io.strata.storage.TopicPartition;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The transaction APIs: AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit,
 * WriteTxnMarkers, DescribeTransactions, ListTransactions, DescribeProducers. Thin adapters
 * between the wire (per version) and the transaction and group coordinators.
 */
final class TransactionHandlers {
    private final BrokerContext context;
    private final TransactionMarkers markers;

    TransactionHandlers(BrokerContext context) {
        this.context = context;
        this.markers = new TransactionMarkers(context.replicaManager(), context.groupCoordinator(), context.time());
    }

    void register(Map<ApiMessageType, ApiHandler> handlers) {
        handlers.put(ApiMessageType.ADD_PARTITIONS_TO_TXN, this::addPartitions);
        handlers.put(ApiMessageType.ADD_OFFSETS_TO_TXN, this::addOffsets);
        handlers.put(ApiMessageType.END_TXN, this::endTxn);
        handlers.put(ApiMessageType.TXN_OFFSET_COMMIT, this::txnOffsetCommit);
        handlers.put(ApiMessageType.WRITE_TXN_MARKERS, this::writeTxnMarkers);
        handlers.put(ApiMessageType.DESCRIBE_TRANSACTIONS, this::describeTransactions);
        handlers.put(ApiMessageType.LIST_TRANSACTIONS, this::listTransactions);
        handlers.put(ApiMessageType.DESCRIBE_PRODUCERS, this::describeProducers);
    }

    private TransactionCoordinator coordinator() {
        return context.transactionCoordinator();
    }

    private static ErrorCode fencedForVersion(ErrorCode error, short version, int fencedSinceVersion) {
        return error == ErrorCode.PRODUCER_FENCED && version < fencedSinceVersion ? ErrorCode.INVALID_PRODUCER_EPOCH : error;
    }

    // ---------------------------------------------------------------- AddPartitionsToTxn (client versions 0-3)

    /**
     * AddPartitionsToTxn. v0-v3 come from clients (one transaction); v4+ come from partition
     * leaders (KIP-890): a batch of transactions, each either added or, with VerifyOnly, only
     * checked (NONE if the partition is already in the producer's open transaction, else
     * INVALID_TXN_STATE). v5 may answer TRANSACTION_ABORTABLE; older versions get
     * INVALID_TXN_STATE in its place, the error their senders know.
     */
    private void addPartitions(Request request) {
        AddPartitionsToTxnRequestData body = request.body(AddPartitionsToTxnRequestData.class);
        short version = request.apiVersion();
        if (version >= 4) {
            addPartitionsBatch(request, body, version);
            return;
        }
        addPartitionsOfOne(body.v3AndBelowTransactionalId(), body.v3AndBelowProducerId(), body.v3AndBelowProducerEpoch(), false,
            body.v3AndBelowTopics(), version).whenComplete((errors, failure) -> {
                AddPartitionsToTxnResponseData response = new AddPartitionsToTxnResponseData();
                response.resultsByTopicV3AndBelow().addAll(topicResults(errors));
                request.respond(response);
            });
    }

    private void addPartitionsBatch(Request request, AddPartitionsToTxnRequestData body, short version) {
        List<CompletableFuture<Map<TransactionMetadata.TxnPartition, ErrorCode>>> results = new ArrayList<>();
        for (AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction transaction : body.transactions()) {
            results.add(addPartitionsOfOne(transaction.transactionalId(), transaction.producerId(), transaction.producerEpoch(),
                transaction.verifyOnly(), transaction.topics(), version));
        }
        CompletableFuture.allOf(results.toArray(new CompletableFuture[0])).whenComplete((done, failure) -> {
            AddPartitionsToTxnResponseData response = new AddPartitionsToTxnResponseData();
            for (int i = 0; i < results.size(); i++) {
                response.resultsByTransaction().add(new AddPartitionsToTxnResponseData.AddPartitionsToTxnResult()
                    .setTransactionalId(body.transactions().get(i).transactionalId()).setTopicResults(topicResults(results.get(i).join())));
            }
            request.respond(response);
        });
    }

    /** One transaction's partitions: unknown partitions fail the whole add, as in Kafka (the others are OPERATION_NOT_ATTEMPTED). */
    private CompletableFuture<Map<TransactionMetadata.TxnPartition, ErrorCode>> addPartitionsOfOne(String transactionalId, long producerId,
            short producerEpoch, boolean verifyOnly, List<AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic> topics, short version) {
        Set<TransactionMetadata.TxnPartition> partitions = new LinkedHashSet<>();
        Set<TransactionMetadata.TxnPartition> unknown = new LinkedHashSet<>();
        for (AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic topic : topics) {
            TopicImage image = context.image().topic(topic.name());
            for (int partition : topic.partitions()) {
                TransactionMetadata.TxnPartition txnPartition = new TransactionMetadata.TxnPartition(topic.name(), partition);
                if (image == null || image.partition(partition) == null) {
                    unknown.add(txnPartition);
                } else {
                    partitions.add(txnPartition);
                }
            }
        }
        Map<TransactionMetadata.TxnPartition, ErrorCode> errors = new LinkedHashMap<>();
        if (!unknown.isEmpty()) {
            partitions.forEach(p -> errors.put(p, ErrorCode.OPERATION_NOT_ATTEMPTED));
            unknown.forEach(p -> errors.put(p, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
            return CompletableFuture.completedFuture(errors);
        }
        if (verifyOnly) {
            // Errors of the whole transaction (NOT_COORDINATOR, PRODUCER_FENCED, ...) come per partition; the leader maps them for its client.
            return coordinator().verifyPartitions(transactionalId, producerId, producerEpoch, partitions).exceptionally(failure -> {
                partitions.forEach(partition -> errors.put(partition, ErrorCode.COORDINATOR_NOT_AVAILABLE));
                return errors;
            });
        }
        // v4+ adds come from partition leaders and group coordinators on a transactions v2 client's behalf (Produce v12, TxnOffsetCommit v5).
        short clientTransactionVersion = version >= 4 ? TransactionMetadata.TRANSACTION_VERSION_2 : 0;
        return coordinator().addPartitions(transactionalId, producerId, producerEpoch, partitions, clientTransactionVersion).handle((error, failure) -> {
            ErrorCode result = failure != null ? ErrorCode.UNKNOWN_SERVER_ERROR : fencedForVersion(error, version, 2);
            if (result == ErrorCode.TRANSACTION_ABORTABLE && version < 5) {
                result = ErrorCode.INVALID_TXN_STATE;
            }
            for (TransactionMetadata.TxnPartition partition : partitions) {
                errors.put(partition, result);
            }
            return errors;
        });
    }

    private static List<AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult> topicResults(Map<TransactionMetadata.TxnPartition, ErrorCode> errors) {
        Map<String, AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult> topics = new LinkedHashMap<>();
        for (Map.Entry<TransactionMetadata.TxnPartition, ErrorCode> entry : errors.entrySet()) {
            topics.computeIfAbsent(entry.getKey().topic(), name -> new AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult().setName(name))
                .resultsByPartition().add(new AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResult()
                    .setPartitionIndex(entry.getKey().partition()).setPartitionErrorCode(entry.getValue().code()));
        }
        return new ArrayList<>(topics.values());
    }

    // ---------------------------------------------------------------- AddOffsetsToTxn, EndTxn

    private void addOffsets(Request request) {
        AddOffsetsToTxnRequestData body = request.body(AddOffsetsToTxnRequestData.class);
        short version = request.apiVersion();
        if (!context.offsetsTopic().ensureReady()) {
            request.respond(new AddOffsetsToTxnResponseData().setErrorCode(ErrorCode.COORDINATOR_NOT_AVAILABLE.code()));
            return;
        }
        int partition = context.groupCoordinator().partitionFor(body.groupId());
        coordinator().addPartitions(body.transactionalId(), body.producerId(), body.producerEpoch(),
                Set.of(new TransactionMetadata.TxnPartition(InternalTopics.CONSUMER_OFFSETS, partition)))
            .whenComplete((error, failure) -> request.respond(new AddOffsetsToTxnResponseData().setErrorCode(
                (failure != null ? ErrorCode.UNKNOWN_SERVER_ERROR : fencedForVersion(error, version, 2)).code())));
    }

    /** EndTxn; v5+ is transactions v2: the coordinator bumps the epoch and the response carries the new producer id and epoch. */
    private void endTxn(Request request) {
        EndTxnRequestData body = request.body(EndTxnRequestData.class);
        short version = request.apiVersion();
        short clientTransactionVersion = version >= 5 ? TransactionMetadata.TRANSACTION_VERSION_2 : 0;
        coordinator().endTransaction(body.transactionalId(), body.producerId(), body.producerEpoch(), body.committed(), clientTransactionVersion)
            .whenComplete((result, failure) -> {
                EndTxnResponseData response = new EndTxnResponseData();
                if (failure != null) {
                    response.setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code());
                } else {
                    response.setErrorCode(fencedForVersion(result.error(), version, 2).code()).setProducerId(result.producerId())
                        .setProducerEpoch(result.producerEpoch());
                }
                request.respond(response);
            });
    }

    // ---------------------------------------------------------------- TxnOffsetCommit

    /**
     * TxnOffsetCommit; v5+ is transactions v2: the client sent no AddOffsetsToTxn, so the group's
     * {@code __consumer_offsets} partition is first added to the transaction here, as Kafka's group
     * coordinator does through its partition leader. Before v5 the client added it and it is
     * verified (KIP-890 part 1), so a late commit of a finished transaction cannot land in the
     * next one. Either way the transaction's coordinator is asked where it runs, often another node.
     */
    private void txnOffsetCommit(Request request) {
        TxnOffsetCommitRequestData body = request.body(TxnOffsetCommitRequestData.class);
        short version = request.apiVersion();
        TopicIds ids = version >= 6 ? TopicIds.resolve(context.image(), body) : TopicIds.NONE;
        if (!context.offsetsTopic().ensureReady()) {
            request.respond(txnOffsetCommitError(body, ErrorCode.COORDINATOR_NOT_AVAILABLE, version, ids));
            return;
        }
        int partition = context.groupCoordinator().partitionFor(body.groupId());
        Set<TopicPartition> offsetsPartition = Set.of(new TopicPartition(InternalTopics.CONSUMER_OFFSETS, partition));
        // The transaction's coordinator may be another node: asked over the inter-broker listener, as a partition leader asks it for
        // Produce. v5+ (transactions v2) adds the partition; before, the client added it (AddOffsetsToTxn) and it is verified (KIP-890 part 1).
        CompletableFuture<ErrorCode> inTransaction = version >= 5
            ? context.replicaManager().addPartitionsToTransaction(body.transactionalId(), body.producerId(), body.producerEpoch(), offsetsPartition)
            : context.replicaManager().verifyPartitionsInTransaction(body.transactionalId(), body.producerId(), body.producerEpoch(), offsetsPartition);
        inTransaction.whenComplete((error, failure) -> {
            ErrorCode added = failure != null ? ErrorCode.COORDINATOR_NOT_AVAILABLE : error;
            if (added == ErrorCode.NONE) {
                commitTransactionalOffsets(request, body, version, ids);
            } else {
                request.respond(txnOffsetCommitError(body, addPartitionsErrorForTxnOffsetCommit(added), version, ids));
            }
        });
    }

    /**
     * The implicit add's error as TxnOffsetCommit answers it, as Kafka's group coordinator
     * normalises a failed verification: fenced is INVALID_PRODUCER_EPOCH; an unreachable or
     * unavailable transaction coordinator is COORDINATOR_NOT_AVAILABLE, which the client retries
     * after looking the group coordinator up again (never UNKNOWN_SERVER_ERROR, KAFKA-14034).
     */
    static ErrorCode addPartitionsErrorForTxnOffsetCommit(ErrorCode error) {
        return switch (error) {
            case PRODUCER_FENCED -> ErrorCode.INVALID_PRODUCER_EPOCH;
            case NETWORK_EXCEPTION, NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT, UNKNOWN_TOPIC_OR_PARTITION -> ErrorCode.COORDINATOR_NOT_AVAILABLE;
            default -> error;
        };
    }

    /**
     * TxnOffsetCommit v6+ names topics by id (KIP-1319): the ids are resolved against the image
     * before anything else; the topics of unknown ids are taken out of the request and answered
     * UNKNOWN_TOPIC_ID, and every answered topic is named by its id again.
     */
    private record TopicIds(Map<String, java.util.UUID> idsByName, List<TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic> unknown) {
        static final TopicIds NONE = new TopicIds(Map.of(), List.of());

        static TopicIds resolve(io.strata.metadata.MetadataImage image, TxnOffsetCommitRequestData body) {
            Map<String, java.util.UUID> idsByName = new LinkedHashMap<>();
            List<TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic> unknown = new ArrayList<>();
            List<TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic> known = new ArrayList<>();
            for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic topic : body.topics()) {
                TopicImage byId = image.topic(topic.topicId());
                if (byId == null) {
                    TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic answer = new TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic()
                        .setTopicId(topic.topicId());
                    topic.partitions().forEach(partition -> answer.partitions().add(new TxnOffsetCommitResponseData.TxnOffsetCommitResponsePartition()
                        .setPartitionIndex(partition.partitionIndex()).setErrorCode(ErrorCode.UNKNOWN_TOPIC_ID.code())));
                    unknown.add(answer);
                } else {
                    known.add(topic.setName(byId.name()));
                    idsByName.put(byId.name(), byId.id());
                }
            }
            body.setTopics(known);
            return new TopicIds(idsByName, unknown);
        }

        java.util.UUID idOf(String name) {
            return idsByName.getOrDefault(name, io.strata.protocol.Uuids.ZERO);
        }
    }

    private static TxnOffsetCommitResponseData txnOffsetCommitError(TxnOffsetCommitRequestData body, ErrorCode error, short version, TopicIds ids) {
        TxnOffsetCommitResponseData response = new TxnOffsetCommitResponseData();
        for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic topic : body.topics()) {
            TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic topicResponse = new TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic()
                .setName(topic.name()).setTopicId(ids.idOf(topic.name()));
            for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition partition : topic.partitions()) {
                topicResponse.partitions().add(new TxnOffsetCommitResponseData.TxnOffsetCommitResponsePartition()
                    .setPartitionIndex(partition.partitionIndex()).setErrorCode(fencedForVersion(error, version, 3).code()));
            }
            response.topics().add(topicResponse);
        }
        response.topics().addAll(ids.unknown());
        return response;
    }

    private void commitTransactionalOffsets(Request request, TxnOffsetCommitRequestData body, short version, TopicIds ids) {
        GroupCoordinator groups = context.groupCoordinator();
        groups.commitTransactionalOffsets(body).whenComplete((results, failure) -> {
            TxnOffsetCommitResponseData response = new TxnOffsetCommitResponseData();
            Map<String, TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic> topics = new LinkedHashMap<>();
            List<GroupCoordinator.CommitResult> answered = results;
            if (failure != null) {
                answered = new ArrayList<>();
                for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic topic : body.topics()) {
                    for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition partition : topic.partitions()) {
                        answered.add(new GroupCoordinator.CommitResult(topic.name(), partition.partitionIndex(), ErrorCode.UNKNOWN_SERVER_ERROR));
                    }
                }
            }
            for (GroupCoordinator.CommitResult result : answered) {
                topics.computeIfAbsent(result.topic(), name -> {
                    TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic topic = new TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic()
                        .setName(name).setTopicId(ids.idOf(name));
                    response.topics().add(topic);
                    return topic;
                }).partitions().add(new TxnOffsetCommitResponseData.TxnOffsetCommitResponsePartition().setPartitionIndex(result.partition())
                    .setErrorCode(fencedForVersion(result.error(), version, 3).code()));
            }
            response.topics().addAll(ids.unknown());
            request.respond(response);
        });
    }

    // ---------------------------------------------------------------- WriteTxnMarkers (inter-broker)

    private void writeTxnMarkers(Request request) {
        WriteTxnMarkersRequestData body = request.body(WriteTxnMarkersRequestData.class);
        WriteTxnMarkersResponseData response = new WriteTxnMarkersResponseData();
        for (WriteTxnMarkersRequestData.WritableTxnMarker marker : body.markers()) {
            WriteTxnMarkersResponseData.WritableTxnMarkerResult result = new WriteTxnMarkersResponseData.WritableTxnMarkerResult()
                .setProducerId(marker.producerId());
            for (WriteTxnMarkersRequestData.WritableTxnMarkerTopic topic : marker.topics()) {
                WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult topicResult =
                    new WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult().setName(topic.name());
                for (int partition : topic.partitionIndexes()) {
                    TopicPartition topicPartition = new TopicPartition(topic.name(), partition);
                    // WriteTxnMarkers v2 (KIP-1228) says which transaction version the marker ends; see MarkerCheck.
                    ErrorCode error = markers.writeMarker(topicPartition, marker.producerId(), marker.producerEpoch(), marker.coordinatorEpoch(),
                        marker.transactionResult(), marker.transactionVersion() >= TransactionMetadata.TRANSACTION_VERSION_2
                            ? io.strata.storage.MarkerCheck.NEWER_WHILE_OPEN : io.strata.storage.MarkerCheck.NOT_OLDER);
                    topicResult.partitions().add(new WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult()
                        .setPartitionIndex(partition).setErrorCode(error.code()));
                }
                result.topics().add(topicResult);
            }
            response.markers().add(result);
        }
        request.respond(response);
    }

    // ---------------------------------------------------------------- admin

    private void describeTransactions(Request request) {
        DescribeTransactionsRequestData body = request.body(DescribeTransactionsRequestData.class);
        List<CompletableFuture<DescribeTransactionsResponseData.TransactionState>> states = new ArrayList<>();
        for (String id : body.transactionalIds()) {
            if (!coordinator().coordinates(id)) {
                states.add(CompletableFuture.completedFuture(new DescribeTransactionsResponseData.TransactionState().setTransactionalId(id)
                    .setErrorCode(ErrorCode.NOT_COORDINATOR.code()).setTransactionState("")));
                continue;
            }
            states.add(coordinator().describe(id).thenApply(view -> {
                DescribeTransactionsResponseData.TransactionState state = new DescribeTransactionsResponseData.TransactionState().setTransactionalId(id);
                if (view == null) {
                    return state.setErrorCode(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND.code()).setTransactionState("");
                }
                state.setErrorCode(ErrorCode.NONE.code()).setTransactionState(view.state()).setTransactionTimeoutMs(view.timeoutMs())
                    .setTransactionStartTimeMs(view.startTimestampMs()).setProducerId(view.producerId()).setProducerEpoch(view.producerEpoch());
                Map<String, List<Integer>> byTopic = new LinkedHashMap<>();
                for (TransactionMetadata.TxnPartition partition : view.partitions()) {
                    byTopic.computeIfAbsent(partition.topic(), t -> new ArrayList<>()).add(partition.partition());
                }
                byTopic.forEach((topic, partitions) -> state.topics().add(new DescribeTransactionsResponseData.TopicData().setTopic(topic)
                    .setPartitions(partitions)));
                return state;
            }));
        }
        CompletableFuture.allOf(states.toArray(new CompletableFuture[0])).whenComplete((done, failure) -> {
            DescribeTransactionsResponseData response = new DescribeTransactionsResponseData();
            for (CompletableFuture<DescribeTransactionsResponseData.TransactionState> state : states) {
                response.transactionStates().add(state.isCompletedExceptionally()
                    ? new DescribeTransactionsResponseData.TransactionState().setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code()).setTransactionState("")
                    : state.join());
            }
            request.respond(response);
        });
    }

    private static final Set<String> STATE_NAMES = Set.of("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit",
        "CompleteAbort", "Dead", "PrepareEpochFence");

    /**
     * The TransactionalIdPattern filter (v2+, KIP-1152), or null to list every id. Compiled with
     * RE2/J as Kafka does: RE2's syntax, and matching in time linear in the id's length, so no
     * pattern a client sends can stall the coordinator's thread.
     *
     * @throws PatternSyntaxException if RE2/J refuses the pattern (Kafka: INVALID_REGULAR_EXPRESSION)
     */
    private static Pattern transactionalIdPattern(ListTransactionsRequestData body, short version) {
        String pattern = body.transactionalIdPattern();
        return version >= 2 && pattern != null && !pattern.isEmpty() ? Pattern.compile(pattern) : null;
    }

    private void listTransactions(Request request) {
        ListTransactionsRequestData body = request.body(ListTransactionsRequestData.class);
        short version = request.apiVersion();
        Pattern pattern;
        try {
            pattern = transactionalIdPattern(body, version);
        } catch (PatternSyntaxException e) {
            request.respond(new ListTransactionsResponseData().setErrorCode(ErrorCode.INVALID_REGULAR_EXPRESSION.code()));
            return;
        }
        long now = context.time().milliseconds();
        coordinator().list().whenComplete((views, failure) -> {
            ListTransactionsResponseData response = new ListTransactionsResponseData();
            if (failure != null) {
                request.respond(response.setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code()));
                return;
            }
            for (String state : body.stateFilters()) {
                if (!STATE_NAMES.contains(state)) {
                    response.unknownStateFilters().add(state);
                }
            }
            for (TransactionCoordinator.TransactionView view : views) {
                if (!body.stateFilters().isEmpty() && !body.stateFilters().contains(view.state())) {
                    continue;
                }
                if (!body.producerIdFilters().isEmpty() && !body.producerIdFilters().contains(view.producerId())) {
                    continue;
                }
                if (version >= 1 && body.durationFilter() >= 0 && (view.startTimestampMs() < 0 || now - view.startTimestampMs() < body.durationFilter())) {
                    continue;
                }
                if (pattern != null && !pattern.matcher(view.transactionalId()).matches()) {
                    continue;
                }
                response.transactionStates().add(new ListTransactionsResponseData.TransactionState().setTransactionalId(view.transactionalId())
                    .setProducerId(view.producerId()).setTransactionState(view.state()));
            }
            request.respond(response);
        });
    }

    private void describeProducers(Request request) {
        DescribeProducersRequestData body = request.body(DescribeProducersRequestData.class);
        DescribeProducersResponseData response = new DescribeProducersResponseData();
        for (DescribeProducersRequestData.TopicRequest topic : body.topics()) {
            DescribeProducersResponseData.TopicResponse topicResponse = new DescribeProducersResponseData.TopicResponse().setName(topic.name());
            for (int index : topic.partitionIndexes()) {
                DescribeProducersResponseData.PartitionResponse partitionResponse = new DescribeProducersResponseData.PartitionResponse()
                    .setPartitionIndex(index);
                Partition partition = context.replicaManager().partition(new TopicPartition(topic.name(), index));
                ErrorCode leadership = context.replicaManager().leadershipError(new TopicPartition(topic.name(), index));
                if (leadership != ErrorCode.NONE) {
                    // Kafka: only the leader describes its producers.
                    partitionResponse.setErrorCode(leadership.code()).setErrorMessage(leadership == ErrorCode.NOT_LEADER_OR_FOLLOWER
                        ? "Broker " + context.nodeId() + " is not the leader of " + topic.name() + "-" + index : null);
                } else {
                    for (ProducerStateEntry entry : partition.log().producerStateSnapshot()) {
                        partitionResponse.activeProducers().add(new DescribeProducersResponseData.ProducerState().setProducerId(entry.producerId())
                            .setProducerEpoch(entry.producerEpoch()).setLastSequence(entry.lastSeq()).setLastTimestamp(entry.lastTimestamp())
                            .setCoordinatorEpoch(entry.coordinatorEpoch())
                            .setCurrentTxnStartOffset(entry.currentTxnFirstOffset().orElse(-1L)));
                    }
                }
                topicResponse.partitions().add(partitionResponse);
            }
            response.topics().add(topicResponse);
        }
        request.respond(response);
    }
}
