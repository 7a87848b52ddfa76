package io.strata.metadata;

import io.strata.common.Time;
import io.strata.common.config.ConfigException;
import io.strata.metadata.record.BrokerRegistrationChangeRecord;
import io.strata.metadata.record.ConfigRecord;
import io.strata.metadata.record.FenceBrokerRecord;
import io.strata.metadata.record.UnfenceBrokerRecord;
import io.strata.metadata.record.UnregisterBrokerRecord;
import io.strata.metadata.record.FeatureLevelRecord;
import io.strata.metadata.record.NoOpRecord;
import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.metadata.record.PartitionRecord;
import io.strata.metadata.record.ProducerIdsRecord;
import io.strata.metadata.record.RegisterBrokerRecord;
import io.strata.metadata.record.RemoveTopicRecord;
import io.strata.metadata.record.TopicRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Uuids;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.protocol.message.AssignReplicasToDirsRequestData;
import io.strata.protocol.message.AssignReplicasToDirsResponseData;
import io.strata.protocol.message.BrokerHeartbeatRequestData;
import io.strata.protocol.message.BrokerHeartbeatResponseData;
import io.strata.protocol.message.BrokerRegistrationRequestData;
import io.strata.protocol.message.BrokerRegistrationResponseData;
import io.strata.protocol.message.CreatePartitionsRequestData;
import io.strata.protocol.message.CreatePartitionsResponseData;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.CreateTopicsResponseData;
import io.strata.protocol.message.UnregisterBrokerResponseData;
import io.strata.raft.RaftNode;
import io.strata.storage.LogConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The controller: the only writer of the metadata log, over the Raft quorum. One thread
 * ({@code strata-controller}) runs every operation and every event of the quorum, so the state
 * machine needs no locks and two concurrent requests (say, two creations of the same topic) are
 * strictly ordered.
 *
 * <p>State: the <em>committed</em> image (every committed batch, delivered by the quorum, in
 * order) and, while active, the <em>latest</em> image = committed + this controller's own
 * batches not committed yet. The controller is active from the moment the quorum's leader, this
 * node, has committed a batch of its own epoch (its LEADER_CHANGE record: everything older is then
 * committed and applied) until the quorum reports another epoch or leader. An operation validates
 * against the latest image, turns the request into records, appends them as one batch
 * ({@link RaftNode#append}), applies them to the latest image at once (so the next operation sees
 * them) and completes when that batch is committed, after {@code appliedBarrier} (the local
 * metadata loader, where there is one) has applied it. An operation that writes nothing completes
 * once every batch before it is committed. Losing leadership drops the uncommitted batches: the
 * latest image goes back to the committed one (KAFKA-13114) and their operations fail with
 * {@link NotControllerException} (their outcome is unknown to the caller, as in Kafka). When not
 * active every operation fails with NotControllerException.
 *
 * <p>A record the image cannot apply is a bug: the operation fails and nothing is written.
 */
public final class QuorumController implements ControllerApi, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(QuorumController.class);
    /** How long the controller thread waits for the quorum's thread to take an append (it answers within a poll). */
    private static final long APPEND_WAIT_MS = 5_000;

    /** A batch this controller appended that is not committed yet. */
    private record PendingBatch(long lastOffset, MetadataImage imageAfter, List<Runnable> onCommit) {
    }

    private final ControllerSettings settings;
    private final Map<String, Short> bootstrapFeatures;
    private final Time time;
    private final ScheduledExecutorService thread;
    private final java.util.function.LongFunction<CompletableFuture<Void>> appliedBarrier;
    private volatile RaftNode quorum;
    // Controller thread only:
    private MetadataImage committed = MetadataImage.EMPTY;
    private MetadataImage latest = MetadataImage.EMPTY;
    private final ArrayDeque<PendingBatch> pending = new ArrayDeque<>();
    /** The quorum's epoch and leader as last reported. */
    private int quorumEpoch = -1;
    private int quorumLeader = -1;
    /** The epoch of the latest committed batch (control batches included). */
    private int committedEpoch = -1;
    /** The offset after the latest committed batch. */
    private long committedEndOffset;
    /** While active: the offset the next appended batch starts at (this controller is the log's only writer). */
    private long nextWriteOffset;
    private final BrokerHeartbeatManager heartbeats = new BrokerHeartbeatManager();
    /**
     * The directories each broker reported offline in its heartbeats since it registered
     * (KIP-858's OfflineLogDirs); controller thread only. Not in the metadata log: a new active
     * controller learns them from the next heartbeat, which repeats them.
     */
    private final Map<Integer, Set<UUID>> offlineLogDirs = new java.util.HashMap<>();
    private final ReplicationControl replication;
    private final LeaderElections elections;
    private final PartitionReassignments reassignments;
    private final ElectionSettings electionSettings;
    /** While active: when the next preferred-leader rebalance and unclean-election passes are due (controller thread). */
    private long nextBalanceMs = Long.MAX_VALUE;
    private long nextUncleanElectionMs = Long.MAX_VALUE;
    /** Committed unclean leader elections by this node while active (UncleanLeaderElectionsPerSec's count). */
    private final java.util.concurrent.atomic.AtomicLong uncleanLeaderElections = new java.util.concurrent.atomic.AtomicLong();
    /** Committed elections of an ELR member by this node while active (ElectionFromEligibleLeaderReplicasPerSec's count). */
    private final java.util.concurrent.atomic.AtomicLong electionsFromEligibleLeaderReplicas = new java.util.concurrent.atomic.AtomicLong();
    /** The epoch this controller is active in, or -1. */
    private volatile int activeEpoch = -1;
    /** While active with {@code maxIdleIntervalMs} > 0: when the next NoOpRecord is due (controller thread). */
    private long nextNoOpMs = Long.MAX_VALUE;

    /**
     * @param bootstrapFeatures the feature levels a new cluster starts with (written by the first active controller of an empty log)
     * @param appliedBarrier    given a committed batch's last offset, completes once this node's metadata loader has applied it
     */
    public QuorumController(ControllerSettings settings, Map<String, Short> bootstrapFeatures, Time time,
                            java.util.function.LongFunction<CompletableFuture<Void>> appliedBarrier) {
        this(settings, ElectionSettings.DEFAULTS, bootstrapFeatures, time, appliedBarrier);
    }

    /** @param electionSettings the periodic preferred-leader rebalance and unclean elections */
    public QuorumController(ControllerSettings settings, ElectionSettings electionSettings, Map<String, Short> bootstrapFeatures, Time time,
                            java.util.function.LongFunction<CompletableFuture<Void>> appliedBarrier) {
        this.settings = settings;
        this.electionSettings = electionSettings;
        this.replication = new ReplicationControl(settings.topicDefaults());
        this.elections = new LeaderElections(replication);
        this.reassignments = new PartitionReassignments(replication);
        this.bootstrapFeatures = Map.copyOf(bootstrapFeatures);
        this.time = time;
        this.appliedBarrier = appliedBarrier;
        this.thread = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread controllerThread = new Thread(task, "strata-controller-" + settings.nodeId());
            controllerThread.setDaemon(true);
            return controllerThread;
        });
    }

    /** Starts taking operations on {@code quorum} (whose commits reach {@link #handleCommit}). */
    public void start(RaftNode quorum) {
        this.quorum = quorum;
        long checkMs = Math.max(10, Math.min(1000, settings.brokerSessionTimeoutMs() / 8));
        thread.scheduleWithFixedDelay(() -> {
            try {
                fenceExpiredSessions();
            } catch (RuntimeException e) {
                LOG.error("Node {}: the broker session check failed; it runs again in {} ms", settings.nodeId(), checkMs, e);
            }
        }, checkMs, checkMs, TimeUnit.MILLISECONDS);
        long idleMs = settings.maxIdleIntervalMs();
        if (idleMs > 0) {
            // Ticks several times per interval: the clock decides when one is due (maybeWriteNoOp), the ticks only look.
            long tickMs = Math.max(1, idleMs / 4);
            thread.scheduleWithFixedDelay(() -> {
                try {
                    maybeWriteNoOp();
                } catch (RuntimeException e) {
                    LOG.error("Node {}: writing a NoOp record failed; it is tried again in {} ms", settings.nodeId(), tickMs, e);
                }
            }, tickMs, tickMs, TimeUnit.MILLISECONDS);
        }
        // The clock decides when a pass is due; the ticks only look (at most once a second, so a pass runs within 1 s of its time).
        long electionTickMs = Math.max(1, Math.min(1000, Math.min(electionSettings.leaderImbalanceCheckIntervalMs(),
            electionSettings.uncleanLeaderElectionCheckIntervalMs())));
        thread.scheduleWithFixedDelay(() -> {
            try {
                maybeRunElections();
            } catch (RuntimeException e) {
                LOG.error("Node {}: the periodic leader elections failed; they run again in {} ms", settings.nodeId(), electionTickMs, e);
            }
        }, electionTickMs, electionTickMs, TimeUnit.MILLISECONDS);
    }

    /** Whether this controller is the active one (it may stop being so at any moment). */
    public boolean isActive() {
        return activeEpoch >= 0;
    }

    // ---------------------------------------------------------------- the quorum's events (quorum thread → controller thread)

    /** A committed batch. */
    public void handleCommit(MetadataBatch batch) {
        thread.execute(() -> onCommit(batch));
    }

    /** The state is this snapshot's. */
    public void handleSnapshot(long endOffset, List<ApiMessage> records) {
        thread.execute(() -> {
            if (isActive()) {
                // A leader never loads a snapshot from another; the quorum forbids it.
                throw new IllegalStateException("node " + settings.nodeId() + " is the active controller and was given a snapshot ending at " + endOffset);
            }
            committed = MetadataImage.EMPTY.apply(records, endOffset - 1);
            latest = committed;
            committedEndOffset = endOffset;
        });
    }

    public void handleLeaderChange(int epoch, int leaderId) {
        thread.execute(() -> {
            quorumEpoch = epoch;
            quorumLeader = leaderId;
            if (activeEpoch >= 0 && (epoch != activeEpoch || leaderId != settings.nodeId())) {
                resign("the quorum moved to epoch " + epoch + " with leader " + leaderId);
            }
            maybeBecomeActive();
        });
    }

    /** Active once this node leads the quorum's epoch and a batch of that epoch is committed (whichever is learned last). */
    private void maybeBecomeActive() {
        if (activeEpoch < 0 && quorumLeader == settings.nodeId() && committedEpoch == quorumEpoch) {
            becomeActive(quorumEpoch);
        }
    }

    private void onCommit(MetadataBatch batch) {
        committedEpoch = Math.max(committedEpoch, batch.epoch());
        committedEndOffset = Math.max(committedEndOffset, batch.lastOffset() + 1);
        if (batch.control()) {
            maybeBecomeActive();
            return;
        }
        PendingBatch own = pending.peekFirst();
        if (own != null && own.lastOffset() == batch.lastOffset()) {
            pending.pollFirst();
            committed = own.imageAfter();
            long offset = batch.lastOffset() + 1;
            appliedBarrier.apply(offset).whenComplete((ignored, failure) -> thread.execute(() -> own.onCommit().forEach(Runnable::run)));
            return;
        }
        if (own != null) {
            throw new IllegalStateException("node " + settings.nodeId() + ": batch " + batch.baseOffset() + "-" + batch.lastOffset()
                + " was committed while this controller's batch ending at " + own.lastOffset() + " is pending");
        }
        committed = committed.apply(batch.records(), batch.lastOffset());
        if (!isActive()) {
            latest = committed;
        }
    }

    private void becomeActive(int epoch) {
        activeEpoch = epoch;
        latest = committed;
        // Everything the log holds is committed and delivered (the leader appended nothing after its LEADER_CHANGE).
        nextWriteOffset = committedEndOffset;
        // KAFKA-13841: every registered broker gets a full session from now, heartbeat or not.
        heartbeats.resetAll(committed.brokers().keySet(), time.milliseconds(), committedEndOffset - 1);
        nextNoOpMs = settings.maxIdleIntervalMs() > 0 ? time.milliseconds() + settings.maxIdleIntervalMs() : Long.MAX_VALUE;
        nextBalanceMs = electionSettings.autoLeaderRebalanceEnable() ? time.milliseconds() + electionSettings.leaderImbalanceCheckIntervalMs()
            : Long.MAX_VALUE;
        nextUncleanElectionMs = time.milliseconds() + electionSettings.uncleanLeaderElectionCheckIntervalMs();
        LOG.info("Node {} is the active controller in epoch {} (metadata offset {})", settings.nodeId(), epoch, committed.offset());
        if (committed.features().isEmpty() && !bootstrapFeatures.isEmpty()) {
            List<ApiMessage> records = new ArrayList<>();
            for (Map.Entry<String, Short> feature : bootstrapFeatures.entrySet()) {
                records.add(new FeatureLevelRecord().setName(feature.getKey()).setFeatureLevel(feature.getValue()));
            }
            records.addAll(clusterMinIsrForElr(committed, records));
            write(records, () -> LOG.info("Bootstrapped the cluster's features: {}", bootstrapFeatures), e -> LOG.warn("Could not write the bootstrap features", e));
        }
    }

    private void resign(String why) {
        LOG.info("Node {} is no longer the active controller of epoch {}: {}; {} uncommitted batches dropped", settings.nodeId(), activeEpoch, why,
            pending.size());
        activeEpoch = -1;
        latest = committed;
        List<PendingBatch> dropped = new ArrayList<>(pending);
        pending.clear();
        for (PendingBatch batch : dropped) {
            // The runnables complete their operations; with the controller inactive they fail them (see write).
            batch.onCommit().forEach(Runnable::run);
        }
    }

    // ---------------------------------------------------------------- running operations

    /** The image operations validate against (controller thread only). */
    private MetadataImage image() {
        return latest;
    }

    /** An operation's outcome: records to write (possibly none) and the value to answer once they are committed. */
    private record Outcome<T>(List<ApiMessage> records, T value) {
        static <T> Outcome<T> of(List<ApiMessage> records, T value) {
            return new Outcome<>(records, value);
        }
    }

    /**
     * Runs {@code operation} on the controller thread against the latest image; writes its
     * records and completes with its value once they are committed.
     */
    private <T> CompletableFuture<T> submit(String name, Supplier<Outcome<T>> operation) {
        return submit(name, Long.MAX_VALUE, operation);
    }

    /**
     * {@link #submit(String, Supplier)} with a deadline (Kafka's event-queue deadline): if the
     * operation has not started on the controller thread by {@code deadlineMs} (this controller's
     * clock, reached or passed) it fails with a {@link java.util.concurrent.TimeoutException}
     * (REQUEST_TIMED_OUT) and does nothing. Once started, its commit is waited for without a deadline.
     */
    private <T> CompletableFuture<T> submit(String name, long deadlineMs, Supplier<Outcome<T>> operation) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            thread.execute(() -> {
                if (deadlineMs != Long.MAX_VALUE && time.milliseconds() >= deadlineMs) {
                    result.completeExceptionally(new java.util.concurrent.TimeoutException(name + " did not start before its deadline ("
                        + deadlineMs + " ms)"));
                    return;
                }
                if (!isActive()) {
                    result.completeExceptionally(notController());
                    return;
                }
                Outcome<T> outcome;
                try {
                    outcome = operation.get();
                } catch (ControllerRefusedException e) {
                    LOG.info("Controller operation {} refused: {} {}", name, e.error(), e.getMessage());
                    result.completeExceptionally(e);
                    return;
                } catch (Throwable e) {
                    LOG.error("Controller operation {} failed", name, e);
                    result.completeExceptionally(e);
                    return;
                }
                write(outcome.records(), () -> result.complete(outcome.value()), result::completeExceptionally);
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            result.completeExceptionally(notController());
        }
        return result;
    }

    private NotControllerException notController() {
        int leader = quorumLeader;
        return new NotControllerException("node " + settings.nodeId() + " is not the active controller"
            + (leader >= 0 && leader != settings.nodeId() ? " (the quorum's leader is " + leader + ")" : ""));
    }

    /**
     * Appends {@code records} as one batch and applies them to the latest image; {@code done} runs
     * once they are committed (and applied locally), {@code failed} if they cannot be or leadership
     * is lost first. No records: {@code done} runs once everything before is committed.
     */
    private void write(List<ApiMessage> records, Runnable done, java.util.function.Consumer<Throwable> failed) {
        int epoch = activeEpoch;
        Runnable complete = () -> {
            if (activeEpoch == epoch) {
                done.run();
            } else {
                failed.accept(notController());
            }
        };
        if (records.isEmpty()) {
            PendingBatch last = pending.peekLast();
            if (last == null) {
                done.run();
            } else {
                last.onCommit().add(complete);
            }
            return;
        }
        MetadataImage after;
        // Counted against the image the records were generated from, once committed: every election path (fence, unfence,
        // ElectLeaders, the periodic passes) writes through here.
        int fromElr = LeaderElections.electionsFromElr(latest, records);
        try {
            // The batch's offsets are known only once it is appended: applied first (a record that cannot be applied is never
            // written), the image takes its real offset after the append.
            after = latest.apply(records, latest.offset());
        } catch (RuntimeException e) {
            LOG.error("Controller records cannot be applied; nothing written: {}", records, e);
            failed.accept(e);
            return;
        }
        long lastOffset;
        try {
            lastOffset = quorum.append(MetadataRecords.encode(records)).get(APPEND_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failed.accept(e);
            return;
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            failed.accept(new NotControllerException("the metadata quorum did not take the write: " + e));
            return;
        }
        if (lastOffset < 0) {
            failed.accept(notController());
            return;
        }
        long expectedLastOffset = nextWriteOffset + records.size() - 1;
        nextWriteOffset = lastOffset + 1;
        if (lastOffset != expectedLastOffset) {
            // Broker epochs were computed from the predicted offsets; a gap means another writer: a bug.
            LOG.error("Node {}: the metadata batch was appended at {} instead of the expected {}", settings.nodeId(), lastOffset, expectedLastOffset);
        }
        after = after.withOffset(lastOffset);
        latest = after;
        List<Runnable> onCommit = new ArrayList<>();
        if (fromElr > 0) {
            onCommit.add(() -> electionsFromEligibleLeaderReplicas.addAndGet(fromElr));
        }
        onCommit.add(complete);
        pending.addLast(new PendingBatch(lastOffset, after, onCommit));
    }

    // ---------------------------------------------------------------- registration and features

    /**
     * BrokerRegistration: a broker's start (a new incarnation with its current endpoints). The
     * broker is registered fenced; its epoch is the offset of its RegisterBrokerRecord (so above
     * every earlier one), and it is unfenced by a heartbeat once it has applied the metadata up to
     * that offset (KAFKA-13959: a fixed target). Partitions it led get other leaders now, or none
     * (RF=1), until it is unfenced: what it led before this start may be behind.
     */
    @Override
    public CompletableFuture<BrokerRegistrationResponseData> registerBroker(BrokerRegistrationRequestData request) {
        return submit("register broker " + request.brokerId(), () -> {
            BrokerRegistrationResponseData response = new BrokerRegistrationResponseData();
            if (settings.clusterId() != null && request.clusterId() != null && !settings.clusterId().equals(request.clusterId())) {
                return Outcome.of(List.<ApiMessage>of(), response.setErrorCode(ErrorCode.INCONSISTENT_CLUSTER_ID.code()).setBrokerEpoch(-1));
            }
            BrokerRegistration existing = image().brokers().get(request.brokerId());
            if (existing != null && existing.incarnationId().equals(request.incarnationId())) {
                // A retried registration of the same start: answer it again.
                return Outcome.of(List.<ApiMessage>of(), response.setBrokerEpoch(existing.epoch()));
            }
            long epoch = nextWriteOffset;
            RegisterBrokerRecord register = new RegisterBrokerRecord()
                .setBrokerId(request.brokerId())
                .setIncarnationId(request.incarnationId())
                .setBrokerEpoch(epoch)
                .setRack(request.rack())
                .setFenced(true);
            for (BrokerRegistrationRequestData.Listener listener : request.listeners()) {
                register.endPoints().add(new RegisterBrokerRecord.BrokerEndpoint().setName(listener.name()).setHost(listener.host())
                    .setPort(listener.port()).setSecurityProtocol(listener.securityProtocol()));
            }
            List<ApiMessage> records = new ArrayList<>();
            records.add(register);
            // The election counts the registering broker as unusable whatever the image says of it: no need to apply the record first.
            // A broker that did not stop cleanly (its previous epoch is not the one registered) may have lost data it
            // acknowledged: with ELR on it leaves every ELR (KIP-966, KAFKA-15586).
            boolean unclean = ReplicationControl.elrEnabled(image())
                && ReplicationControl.uncleanShutdown(image(), request.brokerId(), request.previousBrokerEpoch());
            if (unclean) {
                LOG.info("Broker {} registers with previous epoch {}, not its last registered one: an unclean shutdown, it leaves every ELR",
                    request.brokerId(), request.previousBrokerEpoch());
            }
            records.addAll(replication.forUnusableBrokers(image(), Set.of(request.brokerId()),
                unclean ? Set.of(request.brokerId()) : Set.of()));
            heartbeats.register(request.brokerId(), time.milliseconds(), epoch);
            offlineLogDirs.remove(request.brokerId()); // a restarted broker's directories are online again
            return Outcome.of(records, response.setBrokerEpoch(epoch));
        });
    }

    /**
     * BrokerHeartbeat: keeps a broker's session; unfences it once it has caught up (unless it
     * wants to stay fenced), runs its controlled shutdown (leaders move away; it may stop once it
     * leads nothing, and is fenced then), fences it when it asks.
     */
    @Override
    public CompletableFuture<BrokerHeartbeatResponseData> brokerHeartbeat(BrokerHeartbeatRequestData request) {
        return brokerHeartbeat(request, null);
    }

    /**
     * {@link #brokerHeartbeat(BrokerHeartbeatRequestData)} that arrived over {@code connection}
     * (the network layer's id of it; null for none): once the caller reports that connection
     * closed ({@link #connectionClosed}) the broker is suspect, and fenced if no heartbeat follows
     * within {@code strata.broker.disconnect.fence.ms}. The caller must report the close after
     * calling this (a close reported before is forgotten by the heartbeat).
     */
    public CompletableFuture<BrokerHeartbeatResponseData> brokerHeartbeat(BrokerHeartbeatRequestData request, Object connection) {
        return submit("heartbeat of broker " + request.brokerId(), () -> {
            BrokerHeartbeatResponseData response = new BrokerHeartbeatResponseData();
            int id = request.brokerId();
            BrokerRegistration broker = image().brokers().get(id);
            if (broker == null) {
                return Outcome.of(List.<ApiMessage>of(), response.setErrorCode(ErrorCode.BROKER_ID_NOT_REGISTERED.code()).setIsFenced(true));
            }
            if (broker.epoch() != request.brokerEpoch()) {
                return Outcome.of(List.<ApiMessage>of(), response.setErrorCode(ErrorCode.STALE_BROKER_EPOCH.code()).setIsFenced(true));
            }
            long nowMs = time.milliseconds();
            if (!heartbeats.isRegistered(id)) {
                heartbeats.register(id, nowMs, broker.epoch());
            }
            heartbeats.touch(id, nowMs, connection);
            if (!request.offlineLogDirs().isEmpty()) {
                Set<UUID> known = offlineLogDirs.computeIfAbsent(id, brokerId -> new java.util.HashSet<>());
                for (UUID dir : request.offlineLogDirs()) {
                    if (known.add(dir)) {
                        LOG.warn("Broker {} (epoch {}) reports log directory {} offline", id, broker.epoch(), dir);
                    }
                }
            }
            boolean caughtUp = heartbeats.caughtUp(id, request.currentMetadataOffset());
            List<ApiMessage> records = new ArrayList<>();
            boolean fenced = broker.fenced();
            // The elections below count the broker as unusable (or usable) whatever the image says: records about it need not be
            // applied before them.
            if (request.wantShutDown()) {
                List<PartitionChangeRecord> moves = List.of();
                if (!broker.inControlledShutdown() && !fenced) {
                    records.add(new BrokerRegistrationChangeRecord().setBrokerId(id).setBrokerEpoch(broker.epoch()).setInControlledShutdown((byte) 1));
                    moves = replication.forUnusableBrokers(image(), Set.of(id));
                    records.addAll(moves);
                }
                boolean leadsNothing = leads(image(), id) == leadershipChanges(moves);
                if (leadsNothing && !fenced) {
                    records.add(new FenceBrokerRecord().setBrokerId(id).setBrokerEpoch(broker.epoch()));
                    fenced = true;
                }
                response.setShouldShutDown(leadsNothing);
            } else if (fenced && !request.wantFence() && caughtUp) {
                records.add(new UnfenceBrokerRecord().setBrokerId(id).setBrokerEpoch(broker.epoch()));
                records.addAll(noteUncleanElections(image(), replication.forUnfencedBrokers(image(), Set.of(id))));
                fenced = false;
                LOG.info("Unfencing broker {} (epoch {}): it has caught up to offset {}", id, broker.epoch(), request.currentMetadataOffset());
            } else if (!fenced && request.wantFence()) {
                records.addAll(fenceRecords(image(), List.of(broker)));
                fenced = true;
            }
            return Outcome.of(records, response.setIsCaughtUp(caughtUp).setIsFenced(fenced));
        });
    }

    /**
     * AssignReplicasToDirs (KIP-858), the part Strata implements: replicas assigned to a directory
     * the broker reported offline ({@code OfflineLogDirs} in a heartbeat of its current epoch) are
     * taken offline: the broker leaves their ISRs and the partitions it led get another leader,
     * the same election as fencing ({@link ReplicationControl#forOfflineReplicas}). Kafka's
     * {@code handleAssignReplicasToDirs} does the same for an offline directory. Assignments to
     * other directories are answered NONE and not recorded (no {@code Directories} yet).
     * STALE_BROKER_EPOCH / BROKER_ID_NOT_REGISTERED at the top for another epoch or an unknown
     * broker; UNKNOWN_TOPIC_ID / UNKNOWN_TOPIC_OR_PARTITION per partition.
     */
    @Override
    public CompletableFuture<AssignReplicasToDirsResponseData> assignReplicasToDirs(AssignReplicasToDirsRequestData request) {
        return submit("directory assignments of broker " + request.brokerId(), () -> {
            var response = new AssignReplicasToDirsResponseData();
            BrokerRegistration broker = image().brokers().get(request.brokerId());
            if (broker == null) {
                return Outcome.of(List.<ApiMessage>of(), response.setErrorCode(ErrorCode.BROKER_ID_NOT_REGISTERED.code()));
            }
            if (broker.epoch() != request.brokerEpoch()) {
                return Outcome.of(List.<ApiMessage>of(), response.setErrorCode(ErrorCode.STALE_BROKER_EPOCH.code()));
            }
            Set<UUID> offline = offlineLogDirs.getOrDefault(request.brokerId(), Set.of());
            Map<UUID, Set<Integer>> toOffline = new java.util.LinkedHashMap<>();
            for (var directory : request.directories()) {
                var directoryResult = new AssignReplicasToDirsResponseData.DirectoryData().setId(directory.id());
                for (var topic : directory.topics()) {
                    var topicResult = new AssignReplicasToDirsResponseData.TopicData().setTopicId(topic.topicId());
                    TopicImage topicImage = image().topic(topic.topicId());
                    for (var partition : topic.partitions()) {
                        ErrorCode error = topicImage == null ? ErrorCode.UNKNOWN_TOPIC_ID
                            : topicImage.partition(partition.partitionIndex()) == null
                            || !PartitionRegistration.contains(topicImage.partition(partition.partitionIndex()).replicas(), request.brokerId())
                            ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.NONE;
                        if (error == ErrorCode.NONE && offline.contains(directory.id())) {
                            toOffline.computeIfAbsent(topic.topicId(), id -> new java.util.TreeSet<>()).add(partition.partitionIndex());
                        }
                        topicResult.partitions().add(new AssignReplicasToDirsResponseData.PartitionData()
                            .setPartitionIndex(partition.partitionIndex()).setErrorCode(error.code()));
                    }
                    directoryResult.topics().add(topicResult);
                }
                response.directories().add(directoryResult);
            }
            List<ApiMessage> records = new ArrayList<>(noteUncleanElections(image(),
                replication.forOfflineReplicas(image(), request.brokerId(), toOffline)));
            if (!toOffline.isEmpty()) {
                LOG.warn("Broker {} (epoch {}): taking its replicas in offline log directories offline: {} ({} partition change(s))",
                    request.brokerId(), broker.epoch(), toOffline, records.size());
            }
            return Outcome.of(records, response.setErrorCode(ErrorCode.NONE.code()));
        });
    }

    /**
     * UnregisterBroker, as Kafka's controller does it: any registered broker may be unregistered,
     * fenced or not (an operator removes a broker that is gone for good). It leaves every ISR it
     * is in except where it is the last member, and the partitions it leads get another leader
     * from the ISR, or none: the same election as fencing ({@link PartitionLeaderElection}). Then
     * an UnregisterBrokerRecord for its current epoch removes the registration; its session is
     * forgotten. A broker of that id that registers later is a new registration.
     */
    @Override
    public CompletableFuture<UnregisterBrokerResponseData> unregisterBroker(int brokerId) {
        return submit("unregister broker " + brokerId, () -> {
            UnregisterBrokerResponseData response = new UnregisterBrokerResponseData();
            BrokerRegistration broker = image().brokers().get(brokerId);
            if (broker == null) {
                return Outcome.of(List.<ApiMessage>of(), response.setErrorCode(ErrorCode.BROKER_ID_NOT_REGISTERED.code())
                    .setErrorMessage("Broker ID " + brokerId + " is not currently registered"));
            }
            // The election counts the broker as unusable whatever the image says of it; the records about it come after.
            // Gone for good: it also leaves every ELR, as an unclean shutdown does.
            List<ApiMessage> records = new ArrayList<>(replication.forUnusableBrokers(image(), Set.of(brokerId), Set.of(brokerId)));
            records.add(new UnregisterBrokerRecord().setBrokerId(brokerId).setBrokerEpoch(broker.epoch()));
            heartbeats.remove(brokerId);
            LOG.info("Unregistering broker {} (epoch {}, {}fenced)", brokerId, broker.epoch(), broker.fenced() ? "" : "un");
            return Outcome.of(records, response);
        });
    }

    private static int leads(MetadataImage image, int brokerId) {
        int led = 0;
        for (TopicImage topic : image.topicsById().values()) {
            for (PartitionRegistration partition : topic.partitions().values()) {
                if (partition.leader() == brokerId) {
                    led++;
                }
            }
        }
        return led;
    }

    /** Fences {@code broker} and moves the leadership of its partitions. */
    private List<ApiMessage> fenceRecords(MetadataImage image, List<BrokerRegistration> brokers) {
        List<ApiMessage> records = new ArrayList<>();
        Set<Integer> ids = new java.util.TreeSet<>();
        for (BrokerRegistration broker : brokers) {
            records.add(new FenceBrokerRecord().setBrokerId(broker.id()).setBrokerEpoch(broker.epoch()));
            ids.add(broker.id());
        }
        // Several brokers at once: the election treats them all as unusable, in ascending id order.
        records.addAll(noteUncleanElections(image, replication.forUnusableBrokers(image, ids)));
        return records;
    }

    /**
     * Logs at WARN and counts ({@link #uncleanLeaderElections()}) the unclean elections among
     * {@code changes} made at fence or unfence time (topics with unclean.leader.election.enable),
     * then returns {@code changes}. Counted when generated, not when committed: a lost write
     * over-counts, which only a controller failover can cause.
     */
    private List<PartitionChangeRecord> noteUncleanElections(MetadataImage image, List<PartitionChangeRecord> changes) {
        for (PartitionChangeRecord change : changes) {
            TopicImage topic = image.topicsById().get(change.topicId());
            PartitionRegistration before = topic == null ? null : topic.partitions().get(change.partitionId());
            if (before != null && LeaderElections.isUnclean(before, change)) {
                uncleanLeaderElections.incrementAndGet();
                LOG.warn("Unclean leader election for {}-{}: broker {} leads without being known to hold every committed record; "
                    + "acknowledged data may be lost", topic.name(), change.partitionId(), change.leader());
            }
        }
        return changes;
    }

    /** How many of {@code moves} change a leader (for a broker's own election: every partition it led). */
    private static int leadershipChanges(List<PartitionChangeRecord> moves) {
        int moved = 0;
        for (PartitionChangeRecord move : moves) {
            if (move.leader() != -2) {
                moved++;
            }
        }
        return moved;
    }

    /**
     * {@code metadata.max.idle.interval.ms}, as Kafka 4's periodic task: the active controller
     * appends a NoOpRecord every interval (from becoming active, then from each NoOp), whatever
     * else it writes, so the quorum's high watermark and every node's applied offset keep moving
     * and a node can tell a silent controller from an idle one. 0 writes none. (Kafka gated this on
     * metadata.version 3.3-IV0; every version Kafka 4 and Strata support is later.) Controller
     * thread; returns whether one was written.
     */
    private boolean maybeWriteNoOp() {
        long nowMs = time.milliseconds();
        if (!isActive() || nowMs < nextNoOpMs) {
            return false;
        }
        nextNoOpMs = nowMs + settings.maxIdleIntervalMs();
        write(List.of(new NoOpRecord()), () -> { }, e -> LOG.debug("Node {}: a NoOp record was not committed: {}", settings.nodeId(), e.toString()));
        return true;
    }

    /** Runs the NoOp check once on the controller thread (tests step it with a fake clock); completes with whether a NoOp was written. */
    CompletableFuture<Boolean> pollNoOp() {
        return CompletableFuture.supplyAsync(this::maybeWriteNoOp, thread);
    }

    /**
     * The connection that carried broker heartbeats ({@link #brokerHeartbeat(BrokerHeartbeatRequestData, Object)})
     * closed: each broker whose latest heartbeat came over it is suspect, and is fenced (the same
     * records as a session expiry) unless it heartbeats within {@code strata.broker.disconnect.fence.ms}.
     * A Strata addition; with the key 0, or on a controller that is not active, this does nothing.
     * Any thread; the work runs on the controller thread.
     */
    public void connectionClosed(Object connection) {
        long graceMs = settings.disconnectFenceMs();
        if (graceMs == 0) {
            return;
        }
        try {
            thread.execute(() -> {
                if (!isActive()) {
                    return;
                }
                List<Integer> suspects = heartbeats.connectionClosed(connection, time.milliseconds());
                if (suspects.isEmpty()) {
                    return;
                }
                LOG.info("Brokers {} are suspect: the connection {} of their latest heartbeat closed; fenced unless they heartbeat within {} ms",
                    suspects, connection, graceMs);
                // One check just after the grace ends; the periodic check covers a delayed or rejected one.
                thread.schedule(this::checkSessionsLogged, graceMs + 1, TimeUnit.MILLISECONDS);
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOG.debug("Node {}: closed; connection {} closing is not tracked", settings.nodeId(), connection);
        }
    }

    /**
     * The unfenced brokers (other than this node) that this active controller has not heard from
     * since it became active or they registered: candidates for a reachability probe (the
     * dead-broker fast path after a controller failover, when a broker killed together with the
     * old controller has no heartbeat connection here to close). Empty when not active or with
     * {@code strata.broker.disconnect.fence.ms} 0. Any thread; computed on the controller thread.
     */
    public CompletableFuture<List<BrokerRegistration>> unheardBrokers() {
        if (settings.disconnectFenceMs() == 0) {
            return CompletableFuture.completedFuture(List.of());
        }
        return CompletableFuture.supplyAsync(() -> {
            if (!isActive()) {
                return List.<BrokerRegistration>of();
            }
            MetadataImage image = image();
            return heartbeats.unheard(id -> {
                BrokerRegistration broker = image.brokers().get(id);
                return id != settings.nodeId() && broker != null && !broker.fenced();
            }).stream().map(id -> image.brokers().get(id)).toList();
        }, thread);
    }

    /**
     * A probe found the listener of broker {@code brokerId} (registered with {@code brokerEpoch})
     * refusing connections: if this active controller has not heard from it since it became
     * active, the broker is suspect and fenced unless it heartbeats within
     * {@code strata.broker.disconnect.fence.ms}, as when a heartbeat connection closes. Ignored
     * for another registration, a broker heard from, or a controller that is not active. Any
     * thread; the work runs on the controller thread.
     */
    public void brokerRefusedConnection(int brokerId, long brokerEpoch) {
        long graceMs = settings.disconnectFenceMs();
        if (graceMs == 0) {
            return;
        }
        try {
            thread.execute(() -> {
                BrokerRegistration broker = image().brokers().get(brokerId);
                if (!isActive() || broker == null || broker.epoch() != brokerEpoch || broker.fenced()
                    || !heartbeats.isRegistered(brokerId) || !heartbeats.refusedConnection(brokerId, time.milliseconds())) {
                    return;
                }
                LOG.info("Broker {} (epoch {}) is suspect: not heard from since this controller became active, and its listener refuses"
                    + " connections; fenced unless it heartbeats within {} ms", brokerId, brokerEpoch, graceMs);
                thread.schedule(this::checkSessionsLogged, graceMs + 1, TimeUnit.MILLISECONDS);
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOG.debug("Node {}: closed; the refused connection of broker {} is not tracked", settings.nodeId(), brokerId);
        }
    }

    private void checkSessionsLogged() {
        try {
            fenceExpiredSessions();
        } catch (RuntimeException e) {
            LOG.error("Node {}: the broker session check failed; the periodic check runs it again", settings.nodeId(), e);
        }
    }

    /**
     * The active controller's periodic elections, each when its time has come: the preferred-leader
     * rebalance every {@code leader.imbalance.check.interval} (with {@code auto.leader.rebalance.enable}),
     * and unclean elections of leaderless partitions whose topic allows them every
     * {@code uncleanLeaderElectionCheckIntervalMs} (Kafka's maybeBalancePartitionLeaders and
     * maybeElectUncleanLeaders). A pass that stopped at {@link LeaderElections#MAX_ELECTIONS_PER_PASS}
     * is due again at once. Controller thread; returns how many partition changes were written.
     */
    private int maybeRunElections() {
        if (!isActive()) {
            return 0;
        }
        long nowMs = time.milliseconds();
        int written = 0;
        if (nowMs >= nextBalanceMs) {
            LeaderElections.Pass pass = elections.balancePartitionLeaders(image());
            nextBalanceMs = pass.more() ? nowMs : nowMs + electionSettings.leaderImbalanceCheckIntervalMs();
            written += writeElections("preferred leader rebalance", pass);
        }
        if (nowMs >= nextUncleanElectionMs) {
            LeaderElections.Pass pass = elections.electUncleanLeaders(image());
            nextUncleanElectionMs = pass.more() ? nowMs : nowMs + electionSettings.uncleanLeaderElectionCheckIntervalMs();
            written += writeElections("unclean leader election", pass);
        }
        return written;
    }

    private int writeElections(String what, LeaderElections.Pass pass) {
        if (pass.records().isEmpty()) {
            return 0;
        }
        LOG.info("Node {}: {} changes the leaders of {} partitions", settings.nodeId(), what, pass.records().size());
        warnUnclean(pass.unclean());
        write(pass.records(), () -> uncleanLeaderElections.addAndGet(pass.unclean().size()),
            e -> LOG.warn("Node {}: the {} was not committed: {}", settings.nodeId(), what, e.toString()));
        return pass.records().size();
    }

    private void warnUnclean(List<String> partitions) {
        if (!partitions.isEmpty()) {
            LOG.warn("Node {}: unclean leader election for {}: a replica outside the ISR leads; acknowledged records it lacks may be lost",
                settings.nodeId(), partitions);
        }
    }

    /** Runs the periodic elections once on the controller thread (tests step them with a fake clock); completes with the changes written. */
    CompletableFuture<Integer> pollElections() {
        return CompletableFuture.supplyAsync(this::maybeRunElections, thread);
    }

    /** Unclean leader elections this node wrote as active controller and saw committed (kafka.controller ControllerStats UncleanLeaderElectionsPerSec's count). */
    public long uncleanLeaderElections() {
        return uncleanLeaderElections.get();
    }

    /**
     * Leaders this node elected from a partition's eligible leader replicas (KIP-966) as active
     * controller, counted once the change is committed (kafka.controller ControllerStats
     * ElectionFromEligibleLeaderReplicasPerSec's count). Thread-safe.
     */
    public long electionsFromEligibleLeaderReplicas() {
        return electionsFromEligibleLeaderReplicas.get();
    }

    /**
     * ElectLeaders (key 43): {@link LeaderElections#electLeaders}; answered once the elections are
     * committed. An empty topic list elects nothing (a null one every partition), as Kafka's
     * controller. An unknown election type fails with {@link IllegalArgumentException}.
     */
    @Override
    public CompletableFuture<io.strata.protocol.message.ElectLeadersResponseData> electLeaders(io.strata.protocol.message.ElectLeadersRequestData request) {
        if (request.electionType() != LeaderElections.PREFERRED && request.electionType() != LeaderElections.UNCLEAN) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("Unknown election type " + request.electionType()));
        }
        if (request.topicPartitions() != null && request.topicPartitions().isEmpty()) {
            return CompletableFuture.completedFuture(new io.strata.protocol.message.ElectLeadersResponseData());
        }
        CompletableFuture<LeaderElections.Elected> elected = submit("elect leaders", () -> {
            LeaderElections.Elected result = elections.electLeaders(image(), request);
            warnUnclean(result.unclean());
            return Outcome.of(result.records(), result);
        });
        return elected.thenApply(result -> {
            uncleanLeaderElections.addAndGet(result.unclean().size());
            return result.response();
        });
    }

    /**
     * AlterPartitionReassignments (key 45): {@link PartitionReassignments#alter}; answered once its
     * records are committed. As Kafka's controller: no topics → an empty answer at once (active or
     * not); the request's TimeoutMs is the deadline for the operation to start (now + TimeoutMs, so
     * 0 or less always times out: {@link java.util.concurrent.TimeoutException}, REQUEST_TIMED_OUT).
     */
    @Override
    public CompletableFuture<io.strata.protocol.message.AlterPartitionReassignmentsResponseData> alterPartitionReassignments(
        io.strata.protocol.message.AlterPartitionReassignmentsRequestData request) {
        if (request.topics().isEmpty()) {
            return CompletableFuture.completedFuture(new io.strata.protocol.message.AlterPartitionReassignmentsResponseData().setErrorMessage(null)
                .setAllowReplicationFactorChange(request.allowReplicationFactorChange()));
        }
        long deadlineMs = time.milliseconds() + request.timeoutMs();
        return submit("alter partition reassignments", deadlineMs, () -> {
            ReplicationControl.Result<io.strata.protocol.message.AlterPartitionReassignmentsResponseData> result = reassignments.alter(image(), request);
            return Outcome.of(result.records(), result.response());
        });
    }

    /**
     * ListPartitionReassignments (key 46): {@link PartitionReassignments#list} over the latest image,
     * on the controller thread. As Kafka's controller: an empty (not null) topic list → an empty
     * answer at once; TimeoutMs is not used (Kafka's ControllerApis gives this read no deadline).
     */
    @Override
    public CompletableFuture<io.strata.protocol.message.ListPartitionReassignmentsResponseData> listPartitionReassignments(
        io.strata.protocol.message.ListPartitionReassignmentsRequestData request) {
        if (request.topics() != null && request.topics().isEmpty()) {
            return CompletableFuture.completedFuture(new io.strata.protocol.message.ListPartitionReassignmentsResponseData().setErrorMessage(null));
        }
        return submit("list partition reassignments", () -> Outcome.of(List.of(), reassignments.list(image(), request)));
    }

    /** Fences every unfenced broker whose session ended or whose suspicion outlasted its grace (controller thread; runs while active). */
    private void fenceExpiredSessions() {
        if (!isActive()) {
            return;
        }
        long nowMs = time.milliseconds();
        List<Integer> expired = heartbeats.expired(nowMs, settings.brokerSessionTimeoutMs(), settings.disconnectFenceMs(), image());
        if (expired.isEmpty()) {
            return;
        }
        // expired() reports only brokers unfenced in this image.
        List<ApiMessage> records = fenceRecords(image(), expired.stream().map(id -> image().brokers().get(id)).toList());
        LOG.info("Fencing brokers {}: no heartbeat for {} ms, or {} ms since the connection of their latest heartbeat closed (lastContactMs={})",
            expired, settings.brokerSessionTimeoutMs(), settings.disconnectFenceMs(),
            expired.stream().map(id -> id + "=" + heartbeats.lastContactMs(id)).toList());
        write(records, () -> { }, e -> LOG.warn("Could not fence brokers {}", expired, e));
    }

    /**
     * AlterPartition (key 56) from a partition leader: validated and answered as Kafka's
     * controller does ({@link ReplicationControl#alterPartition}); the answer comes once the
     * change records (if any) are committed. A request that changes nothing is answered with
     * the current state after everything before it is committed.
     */
    @Override
    public CompletableFuture<AlterPartitionResponseData> alterPartition(AlterPartitionRequestData request, short version) {
        return submit("alter partition from broker " + request.brokerId(), () -> {
            ReplicationControl.Result<AlterPartitionResponseData> result = replication.alterPartition(image(), request, version);
            return Outcome.of(result.records(), result.response());
        });
    }

    /**
     * UpdateFeatures: validates the changes against the current levels and {@code supported}
     * ({@link FeatureUpdates}) and, unless {@code validateOnly}, writes one FeatureLevelRecord per
     * changed feature in one batch, so the new levels survive a restart and every publisher (and
     * the next ApiVersions answer) sees them together. All or nothing.
     */
    @Override
    public CompletableFuture<FeatureUpdates.Result> updateFeatures(Map<String, FeatureUpdates.Update> updates, Map<String, short[]> supported,
                                                                   boolean validateOnly) {
        return submit("update features", () -> {
            FeatureUpdates.Result result = FeatureUpdates.validate(updates, image().features(), supported, settings.nodeId());
            if (result.error() == ErrorCode.NONE && !validateOnly) {
                LOG.info("Finalized features change: {}", updates);
                List<ApiMessage> records = new ArrayList<>(result.records());
                records.addAll(clusterMinIsrForElr(image(), records));
                return Outcome.of(records, result);
            }
            return Outcome.of(List.of(), result);
        });
    }

    // ---------------------------------------------------------------- topics

    @Override
    public CompletableFuture<List<CreateTopicsResponseData.CreatableTopicResult>> createTopics(List<CreateTopicsRequestData.CreatableTopic> topics,
                                                                                             boolean validateOnly) {
        return submit("create topics", () -> {
            List<CreateTopicsResponseData.CreatableTopicResult> results = new ArrayList<>();
            List<ApiMessage> records = new ArrayList<>();
            Set<String> seenInRequest = new HashSet<>();
            Map<String, String> pendingCollisions = new HashMap<>();
            for (CreateTopicsRequestData.CreatableTopic topic : topics) {
                CreateTopicsResponseData.CreatableTopicResult result = new CreateTopicsResponseData.CreatableTopicResult().setName(topic.name());
                results.add(result);
                if (!seenInRequest.add(topic.name())) {
                    fail(result, ErrorCode.INVALID_REQUEST, "Duplicate topic name " + topic.name() + " in the request");
                    continue;
                }
                List<ApiMessage> topicRecords = createTopicRecords(topic, result, pendingCollisions);
                if (topicRecords != null && !validateOnly) {
                    records.addAll(topicRecords);
                }
            }
            return Outcome.of(records, results);
        });
    }

    private static void fail(CreateTopicsResponseData.CreatableTopicResult result, ErrorCode error, String message) {
        result.setErrorCode(error.code()).setErrorMessage(message).setNumPartitions(-1).setReplicationFactor((short) -1);
    }

    private List<ApiMessage> createTopicRecords(CreateTopicsRequestData.CreatableTopic topic, CreateTopicsResponseData.CreatableTopicResult result,
                                                Map<String, String> pendingCollisions) {
        MetadataImage current = image();
        String invalid = TopicNames.validate(topic.name());
        if (invalid != null) {
            fail(result, ErrorCode.INVALID_TOPIC_EXCEPTION, invalid);
            return null;
        }
        if (current.topic(topic.name()) != null) {
            fail(result, ErrorCode.TOPIC_ALREADY_EXISTS, "Topic '" + topic.name() + "' already exists.");
            return null;
        }
        String unified = TopicNames.unifyCollisionChars(topic.name());
        for (String existing : current.topicsByName().keySet()) {
            if (TopicNames.unifyCollisionChars(existing).equals(unified)) {
                fail(result, ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic '" + topic.name() + "' collides with existing topic: " + existing);
                return null;
            }
        }
        if (pendingCollisions.containsKey(unified)) {
            fail(result, ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic '" + topic.name() + "' collides with topic " + pendingCollisions.get(unified)
                + " in the same request");
            return null;
        }
        Map<String, String> configs = new LinkedHashMap<>();
        for (CreateTopicsRequestData.CreatableTopicConfig config : topic.configs()) {
            if (config.value() == null) {
                fail(result, ErrorCode.INVALID_CONFIG, "Null value not supported for topic configs: " + config.name());
                return null;
            }
            configs.put(config.name(), config.value());
        }
        try {
            LogConfig.validateOverrides(configs);
        } catch (ConfigException e) {
            fail(result, ErrorCode.INVALID_CONFIG, e.getMessage());
            return null;
        }
        List<int[]> assignment = assignReplicas(topic, result);
        if (assignment == null) {
            return null;
        }
        UUID topicId = Uuids.randomTopicId();
        List<ApiMessage> records = new ArrayList<>();
        records.add(new TopicRecord().setName(topic.name()).setTopicId(topicId));
        for (int partition = 0; partition < assignment.size(); partition++) {
            records.add(partitionRecord(topicId, partition, assignment.get(partition)));
        }
        for (Map.Entry<String, String> config : configs.entrySet()) {
            records.add(new ConfigRecord().setResourceType(ConfigResource.TOPIC).setResourceName(topic.name())
                .setName(config.getKey()).setValue(config.getValue()));
        }
        pendingCollisions.put(unified, topic.name());
        result.setTopicId(topicId).setNumPartitions(assignment.size()).setReplicationFactor((short) assignment.get(0).length)
            .setErrorCode(ErrorCode.NONE.code());
        LogConfig effective = LogConfig.of(settings.topicDefaults(), configs);
        for (Map.Entry<String, Object> entry : effective.values().entrySet()) {
            byte source = configs.containsKey(entry.getKey()) ? (byte) 1 : settings.topicDefaults().containsKey(entry.getKey()) ? (byte) 4 : (byte) 5;
            result.configs().add(new CreateTopicsResponseData.CreatableTopicConfigs().setName(entry.getKey())
                .setValue(ConfigValues.toString(entry.getValue())).setReadOnly(false).setConfigSource(source).setIsSensitive(false));
        }
        return records;
    }

    private static PartitionRecord partitionRecord(UUID topicId, int partition, int[] replicas) {
        PartitionRecord record = new PartitionRecord().setPartitionId(partition).setTopicId(topicId)
            .setLeader(replicas[0]).setLeaderEpoch(0).setPartitionEpoch(0);
        for (int replica : replicas) {
            record.replicas().add(replica);
            record.isr().add(replica);
        }
        return record;
    }

    /** Replica lists per partition, from the request's manual assignment or round-robin over registered brokers. */
    private List<int[]> assignReplicas(CreateTopicsRequestData.CreatableTopic topic, CreateTopicsResponseData.CreatableTopicResult result) {
        List<Integer> brokers = new ArrayList<>(image().brokers().keySet());
        brokers.sort(null);
        if (!topic.assignments().isEmpty()) {
            if (topic.numPartitions() != -1 || topic.replicationFactor() != -1) {
                fail(result, ErrorCode.INVALID_REQUEST, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.");
                return null;
            }
            return manualAssignment(topic.assignments().stream()
                .map(a -> Map.entry(a.partitionIndex(), a.brokerIds())).toList(), 0, brokers, result::setErrorCode, result::setErrorMessage);
        }
        int partitions = topic.numPartitions() == -1 ? settings.defaultPartitions() : topic.numPartitions();
        short replication = topic.replicationFactor() == -1 ? settings.defaultReplicationFactor() : topic.replicationFactor();
        if (partitions <= 0) {
            fail(result, ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.");
            return null;
        }
        if (replication <= 0) {
            fail(result, ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0, or -1 to use the default value.");
            return null;
        }
        ReplicaPlacer.Result placed = ReplicaPlacer.place(image(), partitions, replication, Math.floorMod(topic.name().hashCode(), Math.max(1, brokers.size())));
        if (!placed.succeeded()) {
            fail(result, placed.error(), placed.message());
            return null;
        }
        return placed.assignments();
    }

    private interface ErrorSink {
        Object set(short code);
    }

    private interface MessageSink {
        Object set(String message);
    }

    private static List<int[]> manualAssignment(List<Map.Entry<Integer, List<Integer>>> requested, int firstPartition, List<Integer> brokers,
                                                ErrorSink error, MessageSink message) {
        List<int[]> assignment = new ArrayList<>();
        int expectedReplication = -1;
        for (int i = 0; i < requested.size(); i++) {
            Map.Entry<Integer, List<Integer>> entry = requested.get(i);
            String problem = null;
            if (entry.getKey() != firstPartition + i) {
                problem = "Partitions should be numbered consecutively from " + firstPartition + ", but found " + entry.getKey();
            } else if (entry.getValue().isEmpty()) {
                problem = "The manual partition assignment includes an empty replica list.";
            } else if (new HashSet<>(entry.getValue()).size() != entry.getValue().size()) {
                problem = "The manual partition assignment includes duplicate replicas: " + entry.getValue();
            } else if (expectedReplication != -1 && entry.getValue().size() != expectedReplication) {
                problem = "The manual partition assignment includes partitions with different replication factors.";
            } else {
                for (int broker : entry.getValue()) {
                    if (!brokers.contains(broker)) {
                        problem = "The manual partition assignment includes broker " + broker + ", but no such broker is registered.";
                    }
                }
            }
            if (problem != null) {
                error.set(ErrorCode.INVALID_REPLICA_ASSIGNMENT.code());
                message.set(problem);
                return null;
            }
            expectedReplication = entry.getValue().size();
            assignment.add(entry.getValue().stream().mapToInt(Integer::intValue).toArray());
        }
        return assignment;
    }

    @Override
    public CompletableFuture<List<DeleteResult>> deleteTopics(List<String> names, List<UUID> ids) {
        return submit("delete topics", () -> {
            List<DeleteResult> results = new ArrayList<>();
            List<ApiMessage> records = new ArrayList<>();
            Set<UUID> deleting = new HashSet<>();
            MetadataImage current = image();
            for (int i = 0; i < names.size(); i++) {
                String name = names.get(i);
                UUID id = ids.get(i);
                TopicImage topic = name != null ? current.topic(name) : current.topic(id);
                if (topic == null) {
                    ErrorCode error = name != null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.UNKNOWN_TOPIC_ID;
                    results.add(new DeleteResult(name, id, error, name != null
                        ? "This server does not host this topic-partition." : "This server does not host this topic ID."));
                    continue;
                }
                if (!settings.deleteTopicEnable()) {
                    results.add(new DeleteResult(topic.name(), topic.id(), ErrorCode.TOPIC_DELETION_DISABLED, "Topic deletion is disabled."));
                    continue;
                }
                if (deleting.add(topic.id())) {
                    records.add(new RemoveTopicRecord().setTopicId(topic.id()));
                }
                results.add(new DeleteResult(topic.name(), topic.id(), ErrorCode.NONE, null));
            }
            return Outcome.of(records, results);
        });
    }

    @Override
    public CompletableFuture<List<CreatePartitionsResponseData.CreatePartitionsTopicResult>> createPartitions(
            List<CreatePartitionsRequestData.CreatePartitionsTopic> topics, boolean validateOnly) {
        return submit("create partitions", () -> {
            List<CreatePartitionsResponseData.CreatePartitionsTopicResult> results = new ArrayList<>();
            List<ApiMessage> records = new ArrayList<>();
            Set<String> seen = new HashSet<>();
            for (CreatePartitionsRequestData.CreatePartitionsTopic request : topics) {
                CreatePartitionsResponseData.CreatePartitionsTopicResult result =
                    new CreatePartitionsResponseData.CreatePartitionsTopicResult().setName(request.name());
                results.add(result);
                if (!seen.add(request.name())) {
                    result.setErrorCode(ErrorCode.INVALID_REQUEST.code()).setErrorMessage("Duplicate topic name in the request.");
                    continue;
                }
                List<ApiMessage> topicRecords = createPartitionRecords(request, result);
                if (topicRecords != null && !validateOnly) {
                    records.addAll(topicRecords);
                }
            }
            return Outcome.of(records, results);
        });
    }

    private List<ApiMessage> createPartitionRecords(CreatePartitionsRequestData.CreatePartitionsTopic request,
                                                    CreatePartitionsResponseData.CreatePartitionsTopicResult result) {
        TopicImage topic = image().topic(request.name());
        if (topic == null) {
            result.setErrorCode(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code()).setErrorMessage("This server does not host this topic-partition.");
            return null;
        }
        int current = topic.partitionCount();
        if (request.count() < current) {
            result.setErrorCode(ErrorCode.INVALID_PARTITIONS.code()).setErrorMessage("Topic currently has " + current
                + " partitions, which is higher than the requested " + request.count() + ".");
            return null;
        }
        if (request.count() == current) {
            result.setErrorCode(ErrorCode.INVALID_PARTITIONS.code()).setErrorMessage("Topic already has " + current + " partitions.");
            return null;
        }
        int added = request.count() - current;
        List<Integer> brokers = new ArrayList<>(image().brokers().keySet());
        brokers.sort(null);
        int replication = topic.partition(0).replicas().length;
        List<int[]> assignment;
        if (request.assignments() != null && !request.assignments().isEmpty()) {
            if (request.assignments().size() != added) {
                result.setErrorCode(ErrorCode.INVALID_REPLICA_ASSIGNMENT.code()).setErrorMessage("Attempted to add " + added
                    + " additional partition(s), but only " + request.assignments().size() + " assignment(s) were specified.");
                return null;
            }
            List<Map.Entry<Integer, List<Integer>>> entries = new ArrayList<>();
            for (int i = 0; i < added; i++) {
                entries.add(Map.entry(current + i, request.assignments().get(i).brokerIds()));
            }
            assignment = manualAssignment(entries, current, brokers, result::setErrorCode, result::setErrorMessage);
            if (assignment == null) {
                return null;
            }
        } else {
            ReplicaPlacer.Result placed = ReplicaPlacer.place(image(), added, (short) replication, Math.floorMod(topic.name().hashCode() + current,
                Math.max(1, brokers.size())));
            if (!placed.succeeded()) {
                result.setErrorCode(placed.error().code()).setErrorMessage(placed.message());
                return null;
            }
            assignment = placed.assignments();
        }
        List<ApiMessage> records = new ArrayList<>();
        for (int i = 0; i < added; i++) {
            records.add(partitionRecord(topic.id(), current + i, assignment.get(i)));
        }
        result.setErrorCode(ErrorCode.NONE.code());
        return records;
    }

    // ---------------------------------------------------------------- configs

    /**
     * Writes {@code changes} in one batch, with the ClearElrRecords KIP-966 asks for
     * ({@link ElrConfigRules}). All or nothing: a change {@link ElrConfigRules#refusal refused}
     * against the latest image (the broker checked an image that may be older) fails the future
     * with that {@link ControllerRefusedException} and nothing is written.
     */
    @Override
    public CompletableFuture<Void> alterConfigs(List<ConfigChange> changes) {
        return submit("alter configs", () -> {
            MetadataImage image = image();
            List<ApiMessage> records = new ArrayList<>();
            for (ConfigChange change : changes) {
                ControllerRefusedException refused = ElrConfigRules.refusal(image, change.resource(), change.name(), change.value());
                if (refused != null) {
                    throw refused;
                }
                records.add(new ConfigRecord().setResourceType(change.resource().type()).setResourceName(change.resource().name())
                    .setName(change.name()).setValue(change.value()));
            }
            records.addAll(ElrConfigRules.clearElrRecords(image, changes));
            return Outcome.<Void>of(records, null);
        });
    }

    /**
     * KIP-966, as Kafka's controller: when {@code featureRecords} turn ELR on, the records that
     * make every broker resolve the same min ISR ({@link ElrConfigRules#safetyRecords}: the
     * cluster-wide min.insync.replicas with the static default, the broker's
     * {@code min.insync.replicas} else 1, if there is none; every broker-level one removed).
     */
    private List<ApiMessage> clusterMinIsrForElr(MetadataImage image, List<ApiMessage> featureRecords) {
        boolean turnsElrOn = featureRecords.stream().anyMatch(record -> record instanceof FeatureLevelRecord level
            && level.name().equals(ReplicationControl.ELR_FEATURE) && level.featureLevel() >= 1);
        if (!turnsElrOn || ReplicationControl.elrEnabled(image)) {
            return List.of();
        }
        return ElrConfigRules.safetyRecords(image, settings.topicDefaults().getOrDefault(io.strata.storage.LogConfig.MIN_IN_SYNC_REPLICAS, "1"));
    }

    // ---------------------------------------------------------------- ACLs

    @Override
    public CompletableFuture<io.strata.protocol.message.CreateAclsResponseData> createAcls(io.strata.protocol.message.CreateAclsRequestData request) {
        return submit("create acls", () -> {
            var outcome = io.strata.metadata.authorizer.AclControl.createAcls(image().acls(), request, Uuids::randomTopicId);
            return Outcome.of(outcome.records(), outcome.response());
        });
    }

    @Override
    public CompletableFuture<io.strata.protocol.message.DeleteAclsResponseData> deleteAcls(io.strata.protocol.message.DeleteAclsRequestData request) {
        return submit("delete acls", () -> {
            var outcome = io.strata.metadata.authorizer.AclControl.deleteAcls(image().acls(), request);
            return Outcome.of(outcome.records(), outcome.response());
        });
    }

    // ---------------------------------------------------------------- producer ids

    @Override
    public CompletableFuture<Long> allocateProducerIds(int brokerId, long brokerEpoch) {
        return submit("allocate producer ids", () -> {
            long first = image().nextProducerId();
            return Outcome.of(List.of(new ProducerIdsRecord().setBrokerId(brokerId).setBrokerEpoch(brokerEpoch)
                .setNextProducerId(first + PRODUCER_ID_BLOCK_SIZE)), first);
        });
    }

    @Override
    public void close() throws InterruptedException {
        thread.shutdown();
        thread.awaitTermination(10, TimeUnit.SECONDS);
    }
}
