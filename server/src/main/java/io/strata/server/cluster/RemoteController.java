package io.strata.server.cluster;

import io.strata.common.Time;
import io.strata.metadata.ControllerApi;
import io.strata.metadata.FeatureUpdates;
import io.strata.metadata.NotControllerException;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AllocateProducerIdsRequestData;
import io.strata.protocol.message.AllocateProducerIdsResponseData;
import io.strata.protocol.message.AlterPartitionReassignmentsRequestData;
import io.strata.protocol.message.AlterPartitionReassignmentsResponseData;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.BrokerHeartbeatRequestData;
import io.strata.protocol.message.BrokerHeartbeatResponseData;
import io.strata.protocol.message.BrokerRegistrationRequestData;
import io.strata.protocol.message.BrokerRegistrationResponseData;
import io.strata.protocol.message.CreatePartitionsRequestData;
import io.strata.protocol.message.CreatePartitionsResponseData;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.CreateTopicsResponseData;
import io.strata.protocol.message.DeleteTopicsRequestData;
import io.strata.protocol.message.DeleteTopicsResponseData;
import io.strata.protocol.message.ElectLeadersRequestData;
import io.strata.protocol.message.ElectLeadersResponseData;
import io.strata.protocol.message.IncrementalAlterConfigsRequestData;
import io.strata.protocol.message.IncrementalAlterConfigsResponseData;
import io.strata.protocol.message.ListPartitionReassignmentsRequestData;
import io.strata.protocol.message.ListPartitionReassignmentsResponseData;
import io.strata.protocol.message.UnregisterBrokerRequestData;
import io.strata.protocol.message.UnregisterBrokerResponseData;
import io.strata.protocol.message.UpdateFeaturesRequestData;
import io.strata.protocol.message.UpdateFeaturesResponseData;
import io.strata.raft.RaftNode;
import io.strata.server.network.client.InterBrokerClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.function.Predicate;

/**
 * The controller as a node without the active controller in its process reaches it: each
 * operation is the Kafka request the controller serves (CreateTopics, DeleteTopics,
 * CreatePartitions, IncrementalAlterConfigs, AllocateProducerIds, BrokerRegistration,
 * BrokerHeartbeat, UpdateFeatures, UnregisterBroker), sent to the quorum's current leader — learned from this node's replica of the
 * metadata quorum — at its controller endpoint. NOT_CONTROLLER, no known leader or a failed
 * connection: the request goes again, after {@link #RETRY_BACKOFF_MS} or as soon as the quorum
 * names a new leader ({@link #onLeaderChange}), to whoever leads then, until its deadline; past it the operation fails with {@link NotControllerException}. Nothing
 * here blocks: retries are scheduled on one small thread.
 */
public final class RemoteController implements ControllerApi, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RemoteController.class);
    static final long RETRY_BACKOFF_MS = 100;

    /** The quorum's current leader, -1 when none is known. */
    private final IntSupplier quorumLeader;
    private final QuorumPeers peers;
    private final InterBrokerClient client;
    private final Time time;
    private final long requestTimeoutMs;
    private final ScheduledExecutorService retries;
    /** Retries waiting out their backoff; a leader change runs them at once ({@link #onLeaderChange}). */
    private final java.util.Set<Retry> waiting = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Told when the controller may have changed or the connection to it was lost ({@link #onControllerChange}). */
    private final java.util.List<Runnable> controllerChangeListeners = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * @param client           connections of its own: a request the controller holds until its
     *                         batch commits must never wait in line behind, or in front of, the
     *                         quorum's own Fetch on a shared connection (the node serves one
     *                         request per connection at a time, as Kafka does)
     * @param requestTimeoutMs how long an operation keeps looking for an active controller
     */
    public RemoteController(RaftNode quorum, QuorumPeers peers, InterBrokerClient client, Time time, long requestTimeoutMs) {
        this(quorum::leaderId, peers, client, time, requestTimeoutMs);
    }

    /** @param quorumLeader the quorum's current leader id, -1 when none is known */
    RemoteController(IntSupplier quorumLeader, QuorumPeers peers, InterBrokerClient client, Time time, long requestTimeoutMs) {
        this.quorumLeader = quorumLeader;
        this.peers = peers;
        this.client = client;
        this.time = time;
        this.requestTimeoutMs = requestTimeoutMs;
        this.retries = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "strata-controller-channel");
            thread.setDaemon(true);
            return thread;
        });
        client.setConnectionLostListener(endpoint -> notifyControllerChange());
    }

    /**
     * Runs {@code listener} whenever the quorum names a new leader or a connection of this
     * channel to a controller is lost (the broker's lifecycle heartbeats at once then, so the
     * active controller, which fences a broker whose heartbeat connection closed and stays silent,
     * hears from it over the new connection). Runs on a network or quorum thread: it must not block.
     */
    public void onControllerChange(Runnable listener) {
        controllerChangeListeners.add(listener);
    }

    private void notifyControllerChange() {
        for (Runnable listener : controllerChangeListeners) {
            try {
                listener.run();
            } catch (RuntimeException e) {
                LOG.error("A controller-change listener failed", e);
            }
        }
    }

    /** How long an operation keeps looking for an active controller. */
    public long requestTimeoutMs() {
        return requestTimeoutMs;
    }

    /**
     * Sends {@code request} to the active controller, again while {@code notController} says the
     * answer came from a node that is not it; completes with the first other answer.
     */
    public <R extends ApiMessage> CompletableFuture<R> call(ApiMessageType api, short version, ApiMessage request, Predicate<R> notController,
                                                            long timeoutMs) {
        CompletableFuture<R> result = new CompletableFuture<>();
        attempt(api, version, request, notController, time.milliseconds() + timeoutMs, result, null);
        return result;
    }

    @SuppressWarnings("unchecked")
    private <R extends ApiMessage> void attempt(ApiMessageType api, short version, ApiMessage request, Predicate<R> notController, long deadlineMs,
                                                CompletableFuture<R> result, String lastProblem) {
        if (time.milliseconds() >= deadlineMs) {
            result.completeExceptionally(new NotControllerException("no active controller answered " + api.apiName + " in time"
                + (lastProblem == null ? "" : ": " + lastProblem)));
            return;
        }
        int leader = quorumLeader.getAsInt();
        InterBrokerClient.Endpoint endpoint = leader < 0 ? null : peers.endpoint(leader);
        if (endpoint == null) {
            retryLater(api, version, request, notController, deadlineMs, result, "the metadata quorum has no known leader");
            return;
        }
        client.send(endpoint, api, version, request).whenComplete((response, failure) -> {
            if (failure != null && quorumLeader.getAsInt() >= 0 && quorumLeader.getAsInt() != leader) {
                // The quorum elected another leader while this attempt failed: no backoff to wait out.
                attempt(api, version, request, notController, deadlineMs, result, endpoint + ": " + failure);
            } else if (failure != null) {
                retryLater(api, version, request, notController, deadlineMs, result, endpoint + ": " + failure);
            } else if (notController.test((R) response)) {
                retryLater(api, version, request, notController, deadlineMs, result, endpoint + " is not the active controller");
            } else {
                result.complete((R) response);
            }
        });
    }

    private <R extends ApiMessage> void retryLater(ApiMessageType api, short version, ApiMessage request, Predicate<R> notController, long deadlineMs,
                                                   CompletableFuture<R> result, String problem) {
        LOG.debug("{} to the controller: {}; retrying", api.apiName, problem);
        Retry retry = new Retry(() -> attempt(api, version, request, notController, deadlineMs, result, problem), result);
        waiting.add(retry);
        try {
            retry.timer = retries.schedule(retry, RETRY_BACKOFF_MS, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            waiting.remove(retry);
            result.completeExceptionally(new NotControllerException("the node is shutting down"));
        }
    }

    /**
     * The quorum names a new leader (quorum thread): the requests waiting out their backoff go to
     * it now. After a failover that saves up to {@link #RETRY_BACKOFF_MS} per forwarded request.
     */
    public void onLeaderChange(int leaderId) {
        if (leaderId < 0) {
            return;
        }
        notifyControllerChange();
        if (waiting.isEmpty()) {
            return;
        }
        try {
            retries.execute(() -> {
                for (Retry retry : waiting) {
                    retry.run();
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // Shutting down: nothing is retried any more.
        }
    }

    /** One waiting retry: runs once, at its backoff's end or at a leader change, whichever comes first. */
    private final class Retry implements Runnable {
        private final Runnable attempt;
        private final CompletableFuture<?> result;
        private final java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        private volatile java.util.concurrent.ScheduledFuture<?> timer;

        Retry(Runnable attempt, CompletableFuture<?> result) {
            this.attempt = attempt;
            this.result = result;
        }

        /** Gives the request up (the node is closing): its caller hears so instead of waiting for ever. */
        void fail(Throwable reason) {
            if (done.compareAndSet(false, true)) {
                waiting.remove(this);
                result.completeExceptionally(reason);
            }
        }

        @Override
        public void run() {
            if (!done.compareAndSet(false, true)) {
                return;
            }
            waiting.remove(this);
            java.util.concurrent.ScheduledFuture<?> scheduled = timer;
            if (scheduled != null) {
                scheduled.cancel(false);
            }
            attempt.run();
        }
    }

    // ---------------------------------------------------------------- ControllerApi

    @Override
    public CompletableFuture<List<CreateTopicsResponseData.CreatableTopicResult>> createTopics(List<CreateTopicsRequestData.CreatableTopic> topics,
                                                                                             boolean validateOnly) {
        CreateTopicsRequestData request = new CreateTopicsRequestData().setTimeoutMs((int) requestTimeoutMs).setValidateOnly(validateOnly);
        for (CreateTopicsRequestData.CreatableTopic topic : topics) {
            request.topics().add(topic);
        }
        return timedOutAsTimeout(this.<CreateTopicsResponseData>call(ApiMessageType.CREATE_TOPICS, (short) 7, request,
                response -> response.topics().stream().anyMatch(t -> t.errorCode() == ErrorCode.NOT_CONTROLLER.code()), requestTimeoutMs))
            .thenApply(response -> {
                // The controller answers per requested topic, in order, duplicates included.
                return new ArrayList<>(response.topics());
            });
    }

    @Override
    public CompletableFuture<List<DeleteResult>> deleteTopics(List<String> names, List<UUID> ids) {
        DeleteTopicsRequestData request = new DeleteTopicsRequestData().setTimeoutMs((int) requestTimeoutMs);
        for (int i = 0; i < names.size(); i++) {
            request.topics().add(new DeleteTopicsRequestData.DeleteTopicState().setName(names.get(i))
                .setTopicId(ids.get(i) == null ? io.strata.protocol.Uuids.ZERO : ids.get(i)));
        }
        return timedOutAsTimeout(this.<DeleteTopicsResponseData>call(ApiMessageType.DELETE_TOPICS, (short) 6, request,
                response -> response.responses().stream().anyMatch(t -> t.errorCode() == ErrorCode.NOT_CONTROLLER.code()), requestTimeoutMs))
            .thenApply(response -> {
                List<DeleteResult> results = new ArrayList<>();
                for (DeleteTopicsResponseData.DeletableTopicResult topic : response.responses()) {
                    results.add(new DeleteResult(topic.name(), topic.topicId(), ErrorCode.forCode(topic.errorCode()), topic.errorMessage()));
                }
                return results;
            });
    }

    @Override
    public CompletableFuture<List<CreatePartitionsResponseData.CreatePartitionsTopicResult>> createPartitions(
            List<CreatePartitionsRequestData.CreatePartitionsTopic> topics, boolean validateOnly) {
        CreatePartitionsRequestData request = new CreatePartitionsRequestData().setTimeoutMs((int) requestTimeoutMs).setValidateOnly(validateOnly);
        for (CreatePartitionsRequestData.CreatePartitionsTopic topic : topics) {
            request.topics().add(topic);
        }
        return timedOutAsTimeout(this.<CreatePartitionsResponseData>call(ApiMessageType.CREATE_PARTITIONS, (short) 3, request,
                response -> response.results().stream().anyMatch(t -> t.errorCode() == ErrorCode.NOT_CONTROLLER.code()), requestTimeoutMs))
            .thenApply(response -> new ArrayList<>(response.results()));
    }

    /**
     * Sent as CreateAcls v3; answered per creation, so a NOT_CONTROLLER on any creation (or no
     * known leader, or a failed connection) is retried at the quorum's leader until
     * {@link #requestTimeoutMs()}, then fails as REQUEST_TIMED_OUT.
     */
    @Override
    public CompletableFuture<io.strata.protocol.message.CreateAclsResponseData> createAcls(io.strata.protocol.message.CreateAclsRequestData request) {
        return timedOutAsTimeout(this.<io.strata.protocol.message.CreateAclsResponseData>call(ApiMessageType.CREATE_ACLS, (short) 3, request,
            response -> response.results().stream().anyMatch(r -> r.errorCode() == ErrorCode.NOT_CONTROLLER.code()), requestTimeoutMs));
    }

    /** Sent as DeleteAcls v3; retried as {@link #createAcls}. */
    @Override
    public CompletableFuture<io.strata.protocol.message.DeleteAclsResponseData> deleteAcls(io.strata.protocol.message.DeleteAclsRequestData request) {
        return timedOutAsTimeout(this.<io.strata.protocol.message.DeleteAclsResponseData>call(ApiMessageType.DELETE_ACLS, (short) 3, request,
            response -> response.filterResults().stream().anyMatch(r -> r.errorCode() == ErrorCode.NOT_CONTROLLER.code()), requestTimeoutMs));
    }

    /** Sent as IncrementalAlterConfigs SET / DELETE operations, already validated by this broker. */
    @Override
    public CompletableFuture<Void> alterConfigs(List<ConfigChange> changes) {
        Map<String, IncrementalAlterConfigsRequestData.AlterConfigsResource> resources = new LinkedHashMap<>();
        for (ConfigChange change : changes) {
            IncrementalAlterConfigsRequestData.AlterConfigsResource resource = resources.computeIfAbsent(
                change.resource().type() + "/" + change.resource().name(), key -> new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                    .setResourceType(change.resource().type()).setResourceName(change.resource().name()));
            resource.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig().setName(change.name())
                .setConfigOperation(change.value() == null ? (byte) 1 : (byte) 0).setValue(change.value()));
        }
        IncrementalAlterConfigsRequestData request = new IncrementalAlterConfigsRequestData();
        resources.values().forEach(request.resources()::add);
        return timedOutAsTimeout(this.<IncrementalAlterConfigsResponseData>call(ApiMessageType.INCREMENTAL_ALTER_CONFIGS, (short) 1, request,
                response -> response.responses().stream().anyMatch(r -> r.errorCode() == ErrorCode.NOT_CONTROLLER.code()), requestTimeoutMs))
            .thenApply(response -> {
                for (IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse resource : response.responses()) {
                    if (resource.errorCode() != ErrorCode.NONE.code()) {
                        // The controller's own answer (e.g. KIP-966's INVALID_CONFIG), passed on to the client as is.
                        throw new io.strata.metadata.ControllerRefusedException(ErrorCode.forCode(resource.errorCode()), resource.errorMessage());
                    }
                }
                return null;
            });
    }

    @Override
    public CompletableFuture<Long> allocateProducerIds(int brokerId, long brokerEpoch) {
        return this.<AllocateProducerIdsResponseData>call(ApiMessageType.ALLOCATE_PRODUCER_IDS, (short) 0,
                new AllocateProducerIdsRequestData().setBrokerId(brokerId).setBrokerEpoch(brokerEpoch),
                response -> response.errorCode() == ErrorCode.NOT_CONTROLLER.code(), requestTimeoutMs)
            .thenApply(response -> {
                if (response.errorCode() != ErrorCode.NONE.code()) {
                    throw new IllegalStateException("the controller refused a producer id block: " + ErrorCode.forCode(response.errorCode()));
                }
                return response.producerIdStart();
            });
    }

    @Override
    public CompletableFuture<BrokerRegistrationResponseData> registerBroker(BrokerRegistrationRequestData request) {
        return call(ApiMessageType.BROKER_REGISTRATION, (short) 4, request,
            (BrokerRegistrationResponseData response) -> response.errorCode() == ErrorCode.NOT_CONTROLLER.code(), requestTimeoutMs);
    }

    @Override
    public CompletableFuture<BrokerHeartbeatResponseData> brokerHeartbeat(BrokerHeartbeatRequestData request) {
        return call(ApiMessageType.BROKER_HEARTBEAT, (short) 1, request,
            (BrokerHeartbeatResponseData response) -> response.errorCode() == ErrorCode.NOT_CONTROLLER.code(), requestTimeoutMs);
    }

    @Override
    public CompletableFuture<io.strata.protocol.message.AssignReplicasToDirsResponseData> assignReplicasToDirs(
        io.strata.protocol.message.AssignReplicasToDirsRequestData request) {
        return call(ApiMessageType.ASSIGN_REPLICAS_TO_DIRS, (short) 0, request,
            (io.strata.protocol.message.AssignReplicasToDirsResponseData response) -> response.errorCode() == ErrorCode.NOT_CONTROLLER.code(),
            requestTimeoutMs);
    }

    @Override
    public CompletableFuture<UnregisterBrokerResponseData> unregisterBroker(int brokerId) {
        return call(ApiMessageType.UNREGISTER_BROKER, (short) 0, new UnregisterBrokerRequestData().setBrokerId(brokerId),
            (UnregisterBrokerResponseData response) -> response.errorCode() == ErrorCode.NOT_CONTROLLER.code(), requestTimeoutMs);
    }

    /**
     * Sent at {@code version} (2-3; a leader's AlterPartitionManager sends v3). A top-level
     * NOT_CONTROLLER answer, no known leader or a failed connection is retried at the quorum's
     * leader until {@link #requestTimeoutMs()}; per-partition errors (including NOT_CONTROLLER
     * for epochs the controller has not seen yet) go back to the caller.
     */
    @Override
    public CompletableFuture<AlterPartitionResponseData> alterPartition(AlterPartitionRequestData request, short version) {
        if (version < 2 || version > 3) {
            throw new IllegalArgumentException("AlterPartition is sent at versions 2-3: version=" + version);
        }
        return call(ApiMessageType.ALTER_PARTITION, version, request,
            (AlterPartitionResponseData response) -> response.errorCode() == ErrorCode.NOT_CONTROLLER.code(), requestTimeoutMs);
    }

    /**
     * Sent as ElectLeaders v2 (v1+ carry the election type and the top-level error). A top-level
     * NOT_CONTROLLER answer, no known leader or a failed connection is retried at the quorum's
     * leader until {@link #requestTimeoutMs()}; per-partition answers go back to the caller.
     */
    @Override
    public CompletableFuture<ElectLeadersResponseData> electLeaders(ElectLeadersRequestData request) {
        return timedOutAsTimeout(call(ApiMessageType.ELECT_LEADERS, (short) 2, request,
            (ElectLeadersResponseData response) -> response.errorCode() == ErrorCode.NOT_CONTROLLER.code(), requestTimeoutMs));
    }

    /**
     * Sent as AlterPartitionReassignments v1; a top-level NOT_CONTROLLER, no known leader or a
     * failed connection is retried as for ElectLeaders. Past {@link #requestTimeoutMs()} it fails
     * with a {@link java.util.concurrent.TimeoutException} (REQUEST_TIMED_OUT), as Kafka's
     * ForwardingManager answers a forwarded request that timed out.
     */
    @Override
    public CompletableFuture<AlterPartitionReassignmentsResponseData> alterPartitionReassignments(
        AlterPartitionReassignmentsRequestData request) {
        return timedOutAsTimeout(call(ApiMessageType.ALTER_PARTITION_REASSIGNMENTS, (short) 1, request,
            (AlterPartitionReassignmentsResponseData response) -> response.errorCode() == ErrorCode.NOT_CONTROLLER.code(),
            requestTimeoutMs));
    }

    /** Sent as ListPartitionReassignments v0; retried, and timed out, as AlterPartitionReassignments. */
    @Override
    public CompletableFuture<ListPartitionReassignmentsResponseData> listPartitionReassignments(
        ListPartitionReassignmentsRequestData request) {
        return timedOutAsTimeout(call(ApiMessageType.LIST_PARTITION_REASSIGNMENTS, (short) 0, request,
            (ListPartitionReassignmentsResponseData response) -> response.errorCode() == ErrorCode.NOT_CONTROLLER.code(),
            requestTimeoutMs));
    }

    /**
     * {@code forwarded} with its end of retries ({@link NotControllerException}: no active
     * controller answered in time, or this node shuts down) turned into a
     * {@link java.util.concurrent.TimeoutException} with the same message: Kafka's broker answers
     * a forwarded request it could not deliver in time with REQUEST_TIMED_OUT, never NOT_CONTROLLER.
     */
    static <R> CompletableFuture<R> timedOutAsTimeout(CompletableFuture<R> forwarded) {
        CompletableFuture<R> result = new CompletableFuture<>();
        forwarded.whenComplete((response, failure) -> {
            Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            if (cause == null) {
                result.complete(response);
            } else if (cause instanceof NotControllerException) {
                result.completeExceptionally(new java.util.concurrent.TimeoutException(cause.getMessage()));
            } else {
                result.completeExceptionally(cause);
            }
        });
        return result;
    }

    /** Sent as UpdateFeatures v1 (upgrade types, validate-only); the controller validates against its own supported levels. */
    @Override
    public CompletableFuture<FeatureUpdates.Result> updateFeatures(Map<String, FeatureUpdates.Update> updates, Map<String, short[]> supported,
                                                                   boolean validateOnly) {
        UpdateFeaturesRequestData request = new UpdateFeaturesRequestData().setTimeoutMs((int) requestTimeoutMs).setValidateOnly(validateOnly);
        updates.forEach((feature, update) -> request.featureUpdates().add(new UpdateFeaturesRequestData.FeatureUpdateKey().setFeature(feature)
            .setMaxVersionLevel(update.level()).setUpgradeType(update.upgradeType())));
        return timedOutAsTimeout(this.<UpdateFeaturesResponseData>call(ApiMessageType.UPDATE_FEATURES, (short) 1, request,
                response -> response.errorCode() == ErrorCode.NOT_CONTROLLER.code(), requestTimeoutMs))
            .thenApply(response -> new FeatureUpdates.Result(ErrorCode.forCode(response.errorCode()), response.errorMessage(), List.of()));
    }

    @Override
    public void close() {
        retries.shutdownNow();
        for (Retry retry : waiting) {
            retry.fail(new NotControllerException("the node is shutting down"));
        }
    }
}
