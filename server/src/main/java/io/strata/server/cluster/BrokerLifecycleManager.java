package io.strata.server.cluster;

import io.strata.common.Time;
import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.ControllerApi;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AssignReplicasToDirsRequestData;
import io.strata.protocol.message.AssignReplicasToDirsResponseData;
import io.strata.protocol.message.BrokerHeartbeatRequestData;
import io.strata.protocol.message.BrokerHeartbeatResponseData;
import io.strata.protocol.message.BrokerRegistrationRequestData;
import io.strata.protocol.message.BrokerRegistrationResponseData;
import io.strata.server.replica.Halter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A broker's side of its life in the cluster, as Kafka's BrokerLifecycleManager: register
 * (BrokerRegistration: a new incarnation, fenced), then heartbeat (BrokerHeartbeat) with the
 * metadata offset this node has applied until the controller unfences it, then every
 * {@code broker.heartbeat.interval.ms}; at shutdown, heartbeats that ask for a controlled
 * shutdown until the controller has moved every leadership away.
 *
 * <p>States: {@code REGISTERING → FENCED (catching up) → RUNNING → SHUTTING_DOWN → STOPPED}; a
 * registration the controller forgot (BROKER_ID_NOT_REGISTERED, STALE_BROKER_EPOCH) goes back to
 * REGISTERING. One thread; one request in flight at a time.
 *
 * <p>{@link #heartbeatNow} (the controller changed, or the connection to it was lost) sends the
 * next heartbeat at once instead of at its scheduled time, unless one is in flight: the active
 * controller fences a broker whose heartbeat connection closed and that stays silent for
 * {@code strata.broker.disconnect.fence.ms}, so a live broker must heartbeat over its new
 * connection well within that (a Strata addition; Kafka's broker waits for its schedule).
 */
public final class BrokerLifecycleManager implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerLifecycleManager.class);
    /** While fenced or shutting down, the next heartbeat goes this soon: the controller is waiting for news. */
    static final long EAGER_HEARTBEAT_MS = 20;
    static final long RETRY_BACKOFF_MS = 200;

    /** The lifecycle states. */
    public enum State { REGISTERING, FENCED, RUNNING, SHUTTING_DOWN, STOPPED }

    private final int nodeId;
    private final String clusterId;
    private final ControllerApi controller;
    private final LongSupplier appliedOffset;
    private final long heartbeatIntervalMs;
    private final ScheduledExecutorService thread;
    private final CompletableFuture<Long> unfenced = new CompletableFuture<>();
    private final CompletableFuture<Void> shutDownDone = new CompletableFuture<>();
    private final UUID incarnationId = UUID.randomUUID();
    private List<BrokerRegistration.Endpoint> endpoints;
    private String rack;
    private volatile State state = State.REGISTERING;
    private volatile long brokerEpoch = -1;
    /** Sent in every BrokerRegistration: the epoch of the previous run's clean shutdown, -1 if unknown. */
    private volatile long previousBrokerEpoch = -1;
    /** The directory ids of {@code log.dirs}, sent as {@code LogDirs} in every BrokerRegistration (KIP-858). */
    private volatile List<UUID> logDirs = List.of();
    /** Directories that failed (KIP-858): sent as {@code OfflineLogDirs} in every heartbeat from then on. */
    private final Set<UUID> offlineLogDirs = ConcurrentHashMap.newKeySet();
    // Lifecycle thread only:
    /**
     * Replicas of failed directories the controller has not yet taken offline: sent in
     * AssignReplicasToDirs (assigned to the failed directory) after a heartbeat that reported the
     * directory, resent until the controller accepts them.
     */
    private final Map<UUID, Map<UUID, Set<Integer>>> pendingOfflineReplicas = new LinkedHashMap<>();
    private boolean assignmentInFlight;
    /** {@code log.dir.failure.timeout.ms} and how to halt when it passes (KIP-858). */
    private volatile long logDirFailureTimeoutMs = 30_000L;
    private volatile Halter halter = Halter.RUNTIME;
    /** A heartbeat was sent and its answer has not been handled. */
    private boolean heartbeatInFlight;
    /** The next scheduled heartbeat, or null. */
    private java.util.concurrent.ScheduledFuture<?> nextHeartbeat;

    /** @param appliedOffset the offset of the last metadata record this node has applied (-1 before any) */
    public BrokerLifecycleManager(int nodeId, String clusterId, ControllerApi controller, LongSupplier appliedOffset, long heartbeatIntervalMs,
                                  Time time) {
        this.nodeId = nodeId;
        this.clusterId = clusterId;
        this.controller = controller;
        this.appliedOffset = appliedOffset;
        this.heartbeatIntervalMs = heartbeatIntervalMs;
        this.thread = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread lifecycle = new Thread(task, "strata-broker-lifecycle-" + nodeId);
            lifecycle.setDaemon(true);
            return lifecycle;
        });
    }

    /** {@link #start(List, String, OptionalLong)} with no previous broker epoch known. */
    public CompletableFuture<Long> start(List<BrokerRegistration.Endpoint> advertised, String brokerRack) {
        return start(advertised, brokerRack, OptionalLong.empty());
    }

    /**
     * Registers and heartbeats from now on; the future completes with the broker epoch once the controller first unfences this broker.
     *
     * @param previousBrokerEpoch the epoch the clean-shutdown markers of the previous run recorded
     *        ({@code LogManager.previousBrokerEpoch()}); every registration of this run sends it as
     *        {@code PreviousBrokerEpoch}, -1 when empty, as Kafka's BrokerLifecycleManager does (KIP-966)
     */
    public CompletableFuture<Long> start(List<BrokerRegistration.Endpoint> advertised, String brokerRack, OptionalLong previousBrokerEpoch) {
        this.previousBrokerEpoch = previousBrokerEpoch.orElse(-1L);
        this.endpoints = List.copyOf(advertised);
        this.rack = brokerRack;
        thread.execute(this::register);
        return unfenced;
    }

    /** The directory ids of {@code log.dirs} (registered as {@code LogDirs}); set before {@link #start}. */
    public void setLogDirs(List<UUID> directoryIds) {
        this.logDirs = List.copyOf(directoryIds);
    }

    /**
     * {@code log.dir.failure.timeout.ms}: a failed directory whose replicas the controller has not
     * taken offline within this long halts the broker through {@code halter} (Kafka's
     * BrokerLifecycleManager does the same). Before {@link #start}.
     */
    public void setLogDirFailureTimeout(long timeoutMs, Halter halter) {
        if (timeoutMs < 1) {
            throw new IllegalArgumentException("log.dir.failure.timeout.ms must be at least 1: timeoutMs=" + timeoutMs);
        }
        this.logDirFailureTimeoutMs = timeoutMs;
        this.halter = Objects.requireNonNull(halter);
    }

    /**
     * A log directory failed (KIP-858): every heartbeat reports it in {@code OfflineLogDirs} from
     * now on, and the replicas it held ({@code partitions}: topic id → partition indexes) are sent to
     * the controller in AssignReplicasToDirs naming the failed directory, which takes them offline:
     * leaders move to other ISR members and this broker leaves their ISRs. Any thread; returns at once.
     */
    public void onLogDirFailure(UUID directoryId, Map<UUID, Set<Integer>> partitions) {
        offlineLogDirs.add(directoryId);
        thread.execute(() -> {
            Map<UUID, Set<Integer>> pending = pendingOfflineReplicas.computeIfAbsent(directoryId,
                id -> new LinkedHashMap<>());
            partitions.forEach((topicId, indexes) -> pending.computeIfAbsent(topicId, id -> new TreeSet<>()).addAll(indexes));
            schedule(() -> haltIfStillPending(directoryId), logDirFailureTimeoutMs);
        });
        heartbeatNow();
    }

    /** The directories reported offline. */
    public Set<UUID> offlineLogDirs() {
        return Set.copyOf(offlineLogDirs);
    }

    private void haltIfStillPending(UUID directoryId) {
        if (state == State.STOPPED || !pendingOfflineReplicas.containsKey(directoryId)) {
            return;
        }
        String reason = "the controller did not take the replicas of failed log directory " + directoryId + " offline within "
            + "log.dir.failure.timeout.ms=" + logDirFailureTimeoutMs + "; halting broker " + nodeId;
        LOG.error("Fatal log directory failure: {}", reason);
        halter.halt(Halter.LOG_DIR_FAILURE_STATUS, reason);
    }

    /** Sends the pending offline replicas once a heartbeat carried their directories; lifecycle thread. */
    private void maybeSendOfflineReplicas() {
        if (assignmentInFlight || pendingOfflineReplicas.isEmpty() || state == State.STOPPED || state == State.REGISTERING) {
            return;
        }
        AssignReplicasToDirsRequestData request = new AssignReplicasToDirsRequestData().setBrokerId(nodeId).setBrokerEpoch(brokerEpoch);
        pendingOfflineReplicas.forEach((directoryId, topics) -> {
            AssignReplicasToDirsRequestData.DirectoryData directory = new AssignReplicasToDirsRequestData.DirectoryData().setId(directoryId);
            topics.forEach((topicId, indexes) -> {
                AssignReplicasToDirsRequestData.TopicData topic = new AssignReplicasToDirsRequestData.TopicData().setTopicId(topicId);
                indexes.forEach(index -> topic.partitions().add(new AssignReplicasToDirsRequestData.PartitionData().setPartitionIndex(index)));
                directory.topics().add(topic);
            });
            request.directories().add(directory);
        });
        assignmentInFlight = true;
        controller.assignReplicasToDirs(request).whenComplete((response, failure) -> thread.execute(() -> onOfflineReplicasSent(response, failure)));
    }

    private void onOfflineReplicasSent(AssignReplicasToDirsResponseData response, Throwable failure) {
        assignmentInFlight = false;
        if (failure != null || response.errorCode() != ErrorCode.NONE.code()) {
            LOG.warn("Broker {}: the controller did not take the replicas of offline directories {} offline ({}); retrying", nodeId,
                pendingOfflineReplicas.keySet(), failure != null ? failure.toString() : ErrorCode.forCode(response.errorCode()));
            schedule(this::maybeSendOfflineReplicas, RETRY_BACKOFF_MS);
            return;
        }
        for (AssignReplicasToDirsResponseData.DirectoryData directory : response.directories()) {
            Map<UUID, Set<Integer>> pending = pendingOfflineReplicas.get(directory.id());
            if (pending == null) {
                continue;
            }
            for (AssignReplicasToDirsResponseData.TopicData topic : directory.topics()) {
                Set<Integer> indexes = pending.get(topic.topicId());
                for (AssignReplicasToDirsResponseData.PartitionData partition : topic.partitions()) {
                    if (indexes != null && partition.errorCode() == ErrorCode.NONE.code()) {
                        indexes.remove(partition.partitionIndex());
                    } else if (partition.errorCode() != ErrorCode.NONE.code()) {
                        LOG.warn("Broker {}: the controller answered {} for offline replica {}-{}", nodeId,
                            ErrorCode.forCode(partition.errorCode()), topic.topicId(), partition.partitionIndex());
                    }
                }
                if (indexes != null && indexes.isEmpty()) {
                    pending.remove(topic.topicId());
                }
            }
            if (pending.isEmpty()) {
                pendingOfflineReplicas.remove(directory.id());
            }
        }
        if (!pendingOfflineReplicas.isEmpty()) {
            schedule(this::maybeSendOfflineReplicas, RETRY_BACKOFF_MS);
        }
    }

    public State state() {
        return state;
    }

    public long brokerEpoch() {
        return brokerEpoch;
    }

    private void register() {
        if (state == State.STOPPED) {
            return;
        }
        state = State.REGISTERING;
        BrokerRegistrationRequestData request = new BrokerRegistrationRequestData().setBrokerId(nodeId).setClusterId(clusterId)
            .setIncarnationId(incarnationId).setRack(rack).setPreviousBrokerEpoch(previousBrokerEpoch).setLogDirs(new ArrayList<>(logDirs));
        for (BrokerRegistration.Endpoint endpoint : endpoints) {
            request.listeners().add(new BrokerRegistrationRequestData.Listener().setName(endpoint.listenerName()).setHost(endpoint.host())
                .setPort(endpoint.port()).setSecurityProtocol(endpoint.securityProtocol()));
        }
        controller.registerBroker(request).whenComplete((response, failure) -> thread.execute(() -> onRegistered(response, failure)));
    }

    private void onRegistered(BrokerRegistrationResponseData response, Throwable failure) {
        if (state == State.STOPPED) {
            return;
        }
        if (failure != null || response.errorCode() != ErrorCode.NONE.code()) {
            LOG.info("Broker {}: registration failed ({}); retrying", nodeId, failure != null ? failure.toString() : ErrorCode.forCode(response.errorCode()));
            schedule(this::register, RETRY_BACKOFF_MS);
            return;
        }
        brokerEpoch = response.brokerEpoch();
        state = State.FENCED;
        LOG.info("Broker {} registered with epoch {}; catching up with the metadata", nodeId, brokerEpoch);
        heartbeat();
    }

    private void heartbeat() {
        State current = state;
        if (current == State.STOPPED || current == State.REGISTERING) {
            return;
        }
        if (nextHeartbeat != null) {
            nextHeartbeat.cancel(false);
            nextHeartbeat = null;
        }
        BrokerHeartbeatRequestData request = new BrokerHeartbeatRequestData().setBrokerId(nodeId).setBrokerEpoch(brokerEpoch)
            .setCurrentMetadataOffset(appliedOffset.getAsLong()).setWantFence(false).setWantShutDown(current == State.SHUTTING_DOWN)
            .setOfflineLogDirs(new ArrayList<>(offlineLogDirs));
        heartbeatInFlight = true;
        controller.brokerHeartbeat(request).whenComplete((response, failure) -> thread.execute(() -> onHeartbeat(request, response, failure)));
    }

    private void onHeartbeat(BrokerHeartbeatRequestData request, BrokerHeartbeatResponseData response, Throwable failure) {
        heartbeatInFlight = false;
        if (state == State.STOPPED || state == State.REGISTERING) {
            return;
        }
        if (failure != null) {
            LOG.debug("Broker {}: heartbeat failed: {}", nodeId, failure.toString());
            scheduleHeartbeat(RETRY_BACKOFF_MS);
            return;
        }
        ErrorCode error = ErrorCode.forCode(response.errorCode());
        if (error == ErrorCode.BROKER_ID_NOT_REGISTERED || error == ErrorCode.STALE_BROKER_EPOCH) {
            LOG.warn("Broker {}: the controller answered {} to a heartbeat of epoch {}; registering again", nodeId, error, request.brokerEpoch());
            schedule(this::register, RETRY_BACKOFF_MS);
            return;
        }
        if (error != ErrorCode.NONE) {
            scheduleHeartbeat(RETRY_BACKOFF_MS);
            return;
        }
        if (request.offlineLogDirs().containsAll(pendingOfflineReplicas.keySet())) {
            maybeSendOfflineReplicas(); // the controller knows these directories are offline now
        }
        if (state == State.SHUTTING_DOWN) {
            if (response.shouldShutDown()) {
                state = State.STOPPED;
                LOG.info("Broker {}: the controller completed the controlled shutdown", nodeId);
                shutDownDone.complete(null);
                return;
            }
            scheduleHeartbeat(EAGER_HEARTBEAT_MS);
            return;
        }
        if (!response.isFenced()) {
            if (state == State.FENCED) {
                state = State.RUNNING;
                LOG.info("Broker {} (epoch {}) is unfenced", nodeId, brokerEpoch);
                unfenced.complete(brokerEpoch);
            }
            scheduleHeartbeat(heartbeatIntervalMs);
        } else {
            if (state == State.RUNNING) {
                state = State.FENCED;
                LOG.warn("Broker {} was fenced by the controller", nodeId);
            }
            scheduleHeartbeat(EAGER_HEARTBEAT_MS);
        }
    }

    private void scheduleHeartbeat(long delayMs) {
        if (nextHeartbeat != null) {
            nextHeartbeat.cancel(false);
        }
        nextHeartbeat = schedule(this::heartbeat, delayMs);
    }

    /**
     * The controller may have changed, or the connection to it was lost: the next heartbeat goes
     * now, not at its scheduled time, unless one is in flight (its answer schedules the next) or
     * the broker is not registered. Any thread.
     */
    public void heartbeatNow() {
        try {
            thread.execute(() -> {
                State current = state;
                if (heartbeatInFlight || current == State.REGISTERING || current == State.STOPPED) {
                    return;
                }
                LOG.debug("Broker {}: the controller changed or the connection to it was lost; heartbeating now", nodeId);
                heartbeat();
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // Closed.
        }
    }

    /** The scheduled work, or null once closed. */
    private java.util.concurrent.ScheduledFuture<?> schedule(Runnable work, long delayMs) {
        try {
            return thread.schedule(() -> {
                try {
                    work.run();
                } catch (RuntimeException e) {
                    LOG.error("Broker {}: lifecycle step failed; retrying", nodeId, e);
                    schedule(work, RETRY_BACKOFF_MS);
                }
            }, delayMs, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return null; // Closed.
        }
    }

    /**
     * Controlled shutdown: asks the controller to move this broker's leaderships away and waits
     * (at most {@code timeoutMs}) until it says the broker may stop. A broker that never
     * registered stops at once.
     */
    public void controlledShutdown(long timeoutMs) {
        thread.execute(() -> {
            if (state == State.FENCED || state == State.RUNNING) {
                state = State.SHUTTING_DOWN;
                if (!heartbeatInFlight) {
                    heartbeat(); // else the answer in flight schedules the next, which asks to shut down
                }
            } else {
                state = State.STOPPED;
                shutDownDone.complete(null);
            }
        });
        try {
            shutDownDone.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            LOG.warn("Broker {}: the controlled shutdown did not complete within {} ms; stopping anyway", nodeId, timeoutMs);
        }
    }

    @Override
    public void close() {
        state = State.STOPPED;
        thread.shutdownNow();
        unfenced.completeExceptionally(new IllegalStateException("broker " + nodeId + " stopped before it was unfenced"));
    }
}
