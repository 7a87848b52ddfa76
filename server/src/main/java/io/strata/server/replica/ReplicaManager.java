package io.strata.server.replica;

import io.strata.common.Time;
import io.strata.metadata.ConfigResource;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.MetadataPublisher;
import io.strata.metadata.PartitionRegistration;
import io.strata.metadata.TopicImage;
import io.strata.metadata.TopicNames;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.MemoryRecords;
import io.strata.server.config.DynamicBrokerConfig;
import io.strata.server.metrics.BrokerTopicMetrics;
import io.strata.server.purgatory.DelayedOperationPurgatory;
import io.strata.storage.ErrorCodeException;
import io.strata.storage.FetchDataInfo;
import io.strata.storage.LogAppendInfo;
import io.strata.storage.LogConfig;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * The partitions this broker hosts and the produce and fetch paths over them. It follows the
 * metadata image: when a partition assigned to this node appears, its log is opened or
 * created; when a topic disappears, its logs are deleted; when a topic's configuration
 * changes, its logs get the new one.
 *
 * <p>Writes that must wait for replication (acks=all) and reads that must wait for data
 * ({@code fetch.min.bytes}) go through the purgatory, keyed by partition; every append that
 * moves a high watermark checks both purgatories for that partition.
 *
 * <p>Thread-safe.
 */
public final class ReplicaManager implements MetadataPublisher {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaManager.class);

    private final int nodeId;
    private final LogManager logManager;
    private final Map<String, String> topicDefaults;
    private final Time time;
    private final DelayedOperationPurgatory<DelayedProduce> producePurgatory;
    private final DelayedOperationPurgatory<DelayedFetch> fetchPurgatory;
    private final ConcurrentHashMap<TopicPartition, Partition> partitions = new ConcurrentHashMap<>();
    private volatile BrokerTopicMetrics topicMetrics = BrokerTopicMetrics.DISABLED;
    /** The image last published here: which partitions exist in the cluster, hosted here or not. */
    private volatile MetadataImage image = MetadataImage.EMPTY;
    /** The fsync-on-ack thread; completes the produces and fetches that waited for a partition's fsync. */
    private final LogFlusher flusher = new LogFlusher(this::onFlushed, this::onFlushFailed);
    /**
     * Partitions whose log was in a failed (offline) data directory: hosted here by the image but
     * answered KAFKA_STORAGE_ERROR, never recreated elsewhere, until a restart (Kafka's
     * HostedPartition.Offline). Leave only when the image deletes them or moves them away.
     */
    private final Set<TopicPartition> offlinePartitions = ConcurrentHashMap.newKeySet();
    /** {@code metadata.log.dir}: its failure halts the broker; null when this node keeps no metadata log here (tests). */
    private volatile Path metadataLogDir;
    private volatile Halter halter = Halter.RUNTIME;
    /** Told of each directory taken offline and its replicas (for the heartbeat's OfflineLogDirs and AssignReplicasToDirs). */
    private volatile LogDirOfflineListener onLogDirOffline = (dir, offline) -> { };

    /** Told of a data directory this broker took offline, with the replicas it held. */
    @FunctionalInterface
    public interface LogDirOfflineListener {
        /** @param partitions the offline replicas: topic id → partition indexes */
        void onLogDirOffline(Path dir, Map<UUID, Set<Integer>> partitions);
    }
    /**
     * Creates the logs of a metadata image's new partitions in parallel ({@link #createPartitions});
     * its threads exist only while there is work (they end after a few idle seconds).
     */
    private final java.util.concurrent.ThreadPoolExecutor logCreators = logCreationPool();
    /** What every {@link Partition} of this node sees of the broker around it: settings, the image's brokers, the controller path. */
    private final BrokerReplicaContext context;
    private volatile io.strata.common.BackgroundErrors backgroundErrors = new io.strata.common.BackgroundErrors();
    private volatile java.util.concurrent.ScheduledFuture<?> isrShrinkTask;
    private volatile FollowerFetching followerFetching = FollowerFetching.NONE;
    /** {@code replica.selector.class}: null when consumers are never sent to a follower (Kafka's default). */
    private volatile ReplicaSelector replicaSelector;
    /** Consumer fetch partitions this node read as a follower (KIP-392). */
    private volatile LogDirMover logDirMover;
    private volatile ReplicaLogDirs replicaLogDirs;
    private final LongAdder followerReadsForConsumers = new LongAdder();
    /** The leader side's replication throttle ({@code leader.replication.throttled.*}); none until set. */
    private volatile ReplicaQuota leaderQuota = ReplicaQuota.UNBOUNDED;

    /** ISR shrinks the controller committed for partitions led here (Kafka's IsrShrinksPerSec, as a count). */
    public long isrShrinks() {
        return context.isrShrinks();
    }

    /** ISR expands the controller committed (IsrExpandsPerSec, as a count). */
    public long isrExpands() {
        return context.isrExpands();
    }

    /** ISR changes the controller refused or that could not be sent (FailedIsrUpdatesPerSec, as a count). */
    public long failedIsrUpdates() {
        return context.failedIsrUpdates();
    }

    /** {@code replica.lag.time.max.ms} default (Kafka's). */
    public static final long DEFAULT_REPLICA_LAG_TIME_MAX_MS = BrokerReplicaContext.DEFAULT_REPLICA_LAG_TIME_MAX_MS;
    /** Background task name of the ISR shrink check (metric label). */
    public static final String ISR_SHRINK_TASK = "isr-shrink";

    public ReplicaManager(int nodeId, LogManager logManager, Map<String, String> topicDefaults, Time time,
                          DelayedOperationPurgatory<DelayedProduce> producePurgatory, DelayedOperationPurgatory<DelayedFetch> fetchPurgatory) {
        this.nodeId = nodeId;
        this.logManager = logManager;
        this.topicDefaults = topicDefaults;
        this.time = time;
        this.producePurgatory = producePurgatory;
        this.fetchPurgatory = fetchPurgatory;
        this.context = new BrokerReplicaContext(nodeId, time, () -> image, topicPartition -> {
            fetchPurgatory.checkAndComplete(topicPartition);
            producePurgatory.checkAndComplete(topicPartition);
        });
        context.setLogDirFailureReporter((log, operation, failure) -> logManager.reportLogDirFailure(log, operation + " failed", failure));
    }

    /**
     * How this broker reacts to a failed data directory: {@code metadataLogDir} ({@code
     * metadata.log.dir}, or null if there is none on this node) makes it halt through {@code
     * halter}; {@code onLogDirOffline} is told of every other directory taken offline (the
     * lifecycle manager's heartbeat reports it).
     */
    public void setLogDirFailureHandling(Path metadataLogDir, Halter halter, LogDirOfflineListener onLogDirOffline) {
        this.metadataLogDir = metadataLogDir == null ? null : metadataLogDir.toAbsolutePath().normalize();
        this.halter = Objects.requireNonNull(halter);
        this.onLogDirOffline = Objects.requireNonNull(onLogDirOffline);
    }

    /**
     * Takes an offline data directory out of service, as Kafka's
     * {@code ReplicaManager.handleLogDirFailure}. If it holds the metadata log, or no online log
     * directory is left, the broker halts (a fatal log line naming the directories first): the
     * controller fences it after its session times out and a restart recovers the logs. Otherwise
     * the fetchers of its partitions stop, the partitions become offline here (every request for
     * them answers KAFKA_STORAGE_ERROR, parked produces and fetches at once), their logs are closed
     * without further writes, and the controller is told through the heartbeat.
     */
    public void handleLogDirFailure(Path dir) {
        Path failed = dir.toAbsolutePath().normalize();
        List<Path> online = logManager.onlineLogDirs();
        Path metadata = metadataLogDir;
        if (failed.equals(metadata) || online.isEmpty()) {
            String reason = (failed.equals(metadata) ? "the metadata log directory " + failed + " failed"
                : "every log directory failed: " + logManager.logDirFailureChannel().offlineLogDirs()) + "; halting broker " + nodeId;
            LOG.error("Fatal log directory failure: {}. Free space or replace the disk, then restart the broker", reason);
            halter.halt(Halter.LOG_DIR_FAILURE_STATUS, reason);
            return;
        }
        List<TopicPartition> affected = new ArrayList<>();
        Map<UUID, Set<Integer>> byTopicId = new LinkedHashMap<>();
        for (Partition partition : partitions.values()) {
            if (partition.log().dir().getParent().toAbsolutePath().normalize().equals(failed)) {
                affected.add(partition.topicPartition());
                byTopicId.computeIfAbsent(partition.topicId(), id -> new java.util.TreeSet<>()).add(partition.topicPartition().partition());
            }
        }
        // Fetchers first: once unfollow returns none appends to a log about to be closed.
        followerFetching.unfollow(affected);
        offlinePartitions.addAll(affected);
        for (TopicPartition topicPartition : affected) {
            partitions.remove(topicPartition);
        }
        LogDirMover mover = logDirMover;
        if (mover != null) {
            for (TopicPartition topicPartition : affected) {
                try {
                    mover.abort(topicPartition); // a move out of the failed directory cannot finish
                } catch (IOException | RuntimeException e) {
                    LOG.warn("Could not abort the move of offline partition {}", topicPartition, e);
                }
            }
        }
        List<TopicPartition> closed = logManager.handleLogDirFailure(failed);
        for (TopicPartition topicPartition : affected) {
            producePurgatory.checkAndComplete(topicPartition);
            fetchPurgatory.checkAndComplete(topicPartition);
        }
        LOG.error("Broker {} stopped serving the replicas of offline log directory {}: {} (logs closed: {}); online log directories: {}",
            nodeId, failed, affected, closed, online);
        onLogDirOffline.onLogDirOffline(failed, byTopicId);
    }

    /** Whether the log of {@code topicPartition} was in a failed data directory (answered KAFKA_STORAGE_ERROR). */
    public boolean isOffline(TopicPartition topicPartition) {
        return offlinePartitions.contains(topicPartition);
    }

    /** The partitions offline on this broker (their log directory failed). */
    public Set<TopicPartition> offlinePartitions() {
        return Set.copyOf(offlinePartitions);
    }

    /** The fsync-on-ack flusher (tests slow or fail its fsync). */
    public LogFlusher flusher() {
        return flusher;
    }

    /** Where background failures (the flusher's) are counted. */
    public void setBackgroundErrors(io.strata.common.BackgroundErrors errors) {
        flusher.setBackgroundErrors(errors);
        this.backgroundErrors = errors;
    }

    /** Where the leaders' ISR changes go (the AlterPartitionManager); until set, every change is answered OPERATION_NOT_ATTEMPTED. */
    public void setIsrChangeSubmitter(IsrChangeSubmitter submitter) {
        context.setIsrChangeSubmitter(submitter);
    }

    /** The strict min ISR hook (KIP-966): true while ELR is enabled. */
    public void setStrictMinIsr(java.util.function.BooleanSupplier strict) {
        context.setStrictMinIsr(strict);
    }

    /**
     * The {@code replica.selector.class} this leader consults for consumer fetches v11+ (KIP-392),
     * or null for none; see {@link ReplicaSelectors#create}.
     */
    public void setReplicaSelector(ReplicaSelector selector) {
        this.replicaSelector = selector;
    }

    /** How many consumer fetch partitions this node has read as a follower of the partition (KIP-392); a count since start. */
    public long followerReadsForConsumers() {
        return followerReadsForConsumers.sum();
    }

    /**
     * The leader-side replication throttle: a follower fetch reads nothing for a partition the quota
     * throttles while that follower is outside the ISR and the quota is exceeded (Kafka's
     * {@code shouldLeaderThrottle}); the bytes answered for throttled partitions are recorded in it.
     */
    public void setLeaderReplicationQuota(ReplicaQuota quota) {
        this.leaderQuota = Objects.requireNonNull(quota);
    }

    /** Where the partitions this node follows are handed (the replica fetchers). */
    /**
     * The mover of partitions between data directories: a partition removed from this broker
     * (deleted, reassigned away) has its move aborted first. Set before the first image is published.
     */
    public void setLogDirMover(LogDirMover mover) {
        this.logDirMover = mover;
        this.replicaLogDirs = new ReplicaLogDirs(this, mover);
    }

    /** AlterReplicaLogDirs on this broker, or null before {@link #setLogDirMover}. */
    public ReplicaLogDirs replicaLogDirs() {
        return replicaLogDirs;
    }

    /** The mover of partitions between data directories, or null before {@link #setLogDirMover}. */
    public LogDirMover logDirMover() {
        return logDirMover;
    }

    public void setFollowerFetching(FollowerFetching fetching) {
        this.followerFetching = Objects.requireNonNull(fetching);
    }

    /**
     * Sets {@code replica.lag.time.max.ms} and starts the ISR shrink check on the log manager's
     * scheduler, every half of it (Kafka's period). A failure on one partition is logged with the
     * partition, counted ({@value #ISR_SHRINK_TASK}) and the check goes on.
     */
    public synchronized void startIsrShrinkTask(long lagTimeMaxMs) {
        if (lagTimeMaxMs <= 0) {
            throw new IllegalArgumentException("replica.lag.time.max.ms must be positive: replica.lag.time.max.ms=" + lagTimeMaxMs);
        }
        context.setReplicaLagTimeMaxMs(lagTimeMaxMs);
        if (isrShrinkTask != null) {
            isrShrinkTask.cancel(false);
        }
        long periodMs = Math.max(1, lagTimeMaxMs / 2);
        isrShrinkTask = logManager.scheduler().scheduleAtFixedRate(this::maybeShrinkIsrs, periodMs, periodMs,
            java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** One round of the ISR shrink check over every partition led here; never throws. */
    public void maybeShrinkIsrs() {
        long nowMs = time.milliseconds();
        for (Partition partition : partitions.values()) {
            try {
                if (partition.isLeader()) {
                    partition.maybeShrinkIsr(nowMs);
                }
            } catch (Throwable e) {
                backgroundErrors.record(ISR_SHRINK_TASK);
                LOG.error("The ISR shrink check of {} failed; the check goes on", partition.topicPartition(), e);
            }
        }
    }

    /** The {@link ReplicaContext} of this node's partitions. */
    public ReplicaContext replicaContext() {
        return context;
    }

    /** A follower's high watermark moved (its fetcher applied the leader's): consumer fetches waiting on this replica may answer. */
    public void onFollowerHighWatermark(TopicPartition topicPartition) {
        fetchPurgatory.checkAndComplete(topicPartition);
    }

    private void onFlushFailed(UnifiedLog log, IOException failure) {
        logManager.reportLogDirFailure(log, "the fsync-on-ack of " + log.topicPartition() + " failed", failure);
    }

    private void onFlushed(TopicPartition topicPartition) {
        fetchPurgatory.checkAndComplete(topicPartition);
        producePurgatory.checkAndComplete(topicPartition);
    }

    /**
     * Stops the flusher (writes still waiting for it time out in the purgatory) and waits for log
     * creations under way, so none runs on after the log manager closes.
     */
    public void close() {
        java.util.concurrent.ScheduledFuture<?> shrink = isrShrinkTask;
        if (shrink != null) {
            shrink.cancel(false);
        }
        flusher.close();
        logCreators.shutdown();
        try {
            if (!logCreators.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS)) {
                LOG.warn("Log creations still running 30 s after the replica manager closed");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Logs created at once: the work is mostly waiting on fsyncs, so a few more than the cores help. */
    static final int LOG_CREATION_THREADS = 4;
    /** At most this many creations are queued or running; the loader waits for the oldest before it adds one. */
    private static final int LOG_CREATION_QUEUE = 4 * LOG_CREATION_THREADS;
    private static final long LOG_CREATION_IDLE_MS = 5_000;

    private static java.util.concurrent.ThreadPoolExecutor logCreationPool() {
        java.util.concurrent.atomic.AtomicInteger index = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.ThreadPoolExecutor pool = new java.util.concurrent.ThreadPoolExecutor(LOG_CREATION_THREADS, LOG_CREATION_THREADS,
            LOG_CREATION_IDLE_MS, java.util.concurrent.TimeUnit.MILLISECONDS, new java.util.concurrent.ArrayBlockingQueue<>(LOG_CREATION_QUEUE), task -> {
                Thread thread = new Thread(task, "strata-log-creator-" + index.incrementAndGet());
                thread.setDaemon(true);
                return thread;
            });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    public Partition partition(TopicPartition topicPartition) {
        return partitions.get(topicPartition);
    }

    public int nodeId() {
        return nodeId;
    }

    /** The metadata image last published here (the one leadership is decided by). */
    public MetadataImage image() {
        return image;
    }

    /**
     * The partition if this node hosts and leads it, as Kafka's {@code getPartitionOrError}
     * decides; otherwise throws {@link ErrorCodeException} with NOT_LEADER_OR_FOLLOWER when the
     * cluster has the partition (another broker leads it, it has no leader, or this node is only
     * a follower), or UNKNOWN_TOPIC_OR_PARTITION when it does not.
     */
    public Partition leaderPartitionOrThrow(TopicPartition topicPartition) {
        Partition partition = partitions.get(topicPartition);
        if (partition != null && partition.isLeader()) {
            return partition;
        }
        if (partition == null && offlinePartitions.contains(topicPartition)) {
            throw new ErrorCodeException(ErrorCode.KAFKA_STORAGE_ERROR, "Partition " + topicPartition + " is in an offline log directory");
        }
        if (partition != null || inImage(topicPartition)) {
            int leader = partition != null ? partition.leaderId() : leaderInImage(topicPartition);
            throw new ErrorCodeException(ErrorCode.NOT_LEADER_OR_FOLLOWER, "Broker " + nodeId + " is not the leader of " + topicPartition
                + " (leader " + leader + ")");
        }
        throw new ErrorCodeException(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.");
    }

    /**
     * The partition a fetch reads: {@link #leaderPartitionOrThrow} when {@code fetchOnlyLeader}
     * (a follower's fetch, or a consumer's before v11); otherwise (a consumer's fetch v11+, KIP-392)
     * also a partition this node follows. Throws as {@link #leaderPartitionOrThrow} does when this
     * node has no replica with a role.
     */
    public Partition fetchPartitionOrThrow(TopicPartition topicPartition, boolean fetchOnlyLeader) {
        if (!fetchOnlyLeader) {
            Partition partition = partitions.get(topicPartition);
            if (partition != null && partition.role() != Partition.Role.NONE) {
                return partition;
            }
        }
        return leaderPartitionOrThrow(topicPartition);
    }

    /** The error of {@link #leaderPartitionOrThrow}, or NONE if this node leads the partition (no exception thrown). */
    public ErrorCode leadershipError(TopicPartition topicPartition) {
        Partition partition = partitions.get(topicPartition);
        if (partition != null && partition.isLeader()) {
            return ErrorCode.NONE;
        }
        if (partition == null && offlinePartitions.contains(topicPartition)) {
            return ErrorCode.KAFKA_STORAGE_ERROR;
        }
        return partition != null || inImage(topicPartition) ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    }

    private boolean inImage(TopicPartition topicPartition) {
        TopicImage topic = image.topic(topicPartition.topic());
        return topic != null && topic.partition(topicPartition.partition()) != null;
    }

    private int leaderInImage(TopicPartition topicPartition) {
        TopicImage topic = image.topic(topicPartition.topic());
        PartitionRegistration registration = topic == null ? null : topic.partition(topicPartition.partition());
        return registration == null ? -1 : registration.leader();
    }

    public Map<TopicPartition, Partition> partitions() {
        return partitions;
    }

    public LogManager logManager() {
        return logManager;
    }

    /** Where produce and fetch outcomes are counted per topic (nothing by default). */
    public void setTopicMetrics(BrokerTopicMetrics topicMetrics) {
        this.topicMetrics = topicMetrics;
    }

    /** A topic's effective log configuration: its overrides over the static and dynamic broker defaults. */
    public LogConfig logConfig(MetadataImage image, String topic) {
        return LogConfig.of(DynamicBrokerConfig.topicDefaults(topicDefaults, image, nodeId), image.configs(ConfigResource.topic(topic)));
    }

    // ---------------------------------------------------------------- metadata changes

    /**
     * Applies an image to the partitions of this node ({@link LocalReplicaChanges}), in Kafka's
     * order: partitions of deleted
     * topics are removed first (a topic deleted and created again under its name within one
     * image must keep its new partition); logs whose topic configuration changed get it; new
     * partitions are created with their role; then
     * existing partitions this node leads ({@link Partition#makeLeader}, their fetchers stopped),
     * then those it follows ({@link Partition#makeFollower}; parked produces and fetches answer
     * NOT_LEADER_OR_FOLLOWER, the fetchers are told of a new leader or epoch), then partitions
     * reassigned away are removed. A partition whose transition fails (a bug: an epoch going
     * back) is logged and the others are still applied; the first failure is thrown at the end.
     */
    @Override
    public void publish(MetadataImage previous, MetadataImage current) {
        image = current;
        LocalReplicaChanges changes = LocalReplicaChanges.of(previous, current, nodeId);
        // Fetchers stop before a log goes: once unfollow returns none appends to it.
        if (!changes.deleted().isEmpty()) {
            followerFetching.unfollow(changes.deleted());
        }
        for (TopicPartition topicPartition : changes.deleted()) {
            removePartition(topicPartition);
        }
        // An offline partition's log is on a failed disk: nothing to delete; a new topic of the name may use it again.
        offlinePartitions.removeAll(changes.deleted());
        updateChangedConfigs(previous, current);
        Map<String, LogConfig> configs = new java.util.HashMap<>();
        List<NewPartition> toCreate = new ArrayList<>();
        List<Map.Entry<Partition, PartitionRegistration>> toLead = new ArrayList<>();
        List<Map.Entry<Partition, PartitionRegistration>> toFollow = new ArrayList<>();
        List<LocalReplicaChanges.Change> hosted = new ArrayList<>(changes.leaders());
        hosted.addAll(changes.followers());
        for (LocalReplicaChanges.Change change : hosted) {
            TopicPartition topicPartition = change.topicPartition();
            PartitionRegistration registration = change.registration();
            if (offlinePartitions.contains(topicPartition)) {
                // Kafka's applyDelta: an offline partition takes no role (its log is on a failed disk) until a restart.
                LOG.info("Not applying {} to {}: its log directory is offline", registration, topicPartition);
                continue;
            }
            Partition existing = partitions.get(topicPartition);
            if (existing == null || change.kind() == LocalReplicaChanges.Kind.NEW) {
                LogConfig config = configs.computeIfAbsent(topicPartition.topic(), topic -> logConfig(current, topic));
                toCreate.add(new NewPartition(topicPartition, change.topicId(), registration, config));
            } else if (registration.leaderEpoch() < existing.leaderEpoch()) {
                // Kafka ignores a state change older than what the partition has seen; the partition itself refuses it.
                LOG.warn("Ignoring {} for {}: its leader epoch is older than the partition's {}", registration, topicPartition,
                    existing.leaderEpoch());
            } else {
                (registration.leader() == nodeId ? toLead : toFollow).add(Map.entry(existing, registration));
            }
        }
        List<Partition> createdFollowers = java.util.Collections.synchronizedList(new ArrayList<>());
        RuntimeException failure = null;
        try {
            createPartitions(toCreate, createdFollowers);
        } catch (RuntimeException e) {
            failure = e;
        }
        failure = applyLeaders(toLead, failure);
        failure = applyFollowers(toFollow, createdFollowers, failure);
        if (!changes.reassignedAway().isEmpty()) {
            followerFetching.unfollow(changes.reassignedAway());
        }
        for (TopicPartition topicPartition : changes.reassignedAway()) {
            // Reassigned away: this node is no longer a replica, as Kafka's broker it deletes its copy.
            removePartition(topicPartition);
        }
        offlinePartitions.removeAll(changes.reassignedAway());
        if (failure != null) {
            throw failure;
        }
    }

    /** The logs of topics whose configuration (or the broker's topic defaults) changed get their new configuration. */
    private void updateChangedConfigs(MetadataImage previous, MetadataImage current) {
        boolean brokerConfigChanged = DynamicBrokerConfig.changed(previous, current, nodeId);
        for (TopicImage topic : current.topicsByName().values()) {
            ConfigResource resource = ConfigResource.topic(topic.name());
            if (!brokerConfigChanged && previous.configs(resource).equals(current.configs(resource))) {
                continue;
            }
            LogConfig config = null;
            for (int index : topic.partitions().keySet()) {
                Partition existing = partitions.get(new TopicPartition(topic.name(), index));
                if (existing != null) {
                    if (config == null) {
                        config = logConfig(current, topic.name());
                    }
                    existing.log().updateConfig(config);
                }
            }
        }
    }

    private RuntimeException applyLeaders(List<Map.Entry<Partition, PartitionRegistration>> toLead, RuntimeException failure) {
        List<TopicPartition> newLeaders = new ArrayList<>();
        for (Map.Entry<Partition, PartitionRegistration> entry : toLead) {
            if (!entry.getKey().isLeader()) {
                newLeaders.add(entry.getKey().topicPartition());
            }
        }
        if (!newLeaders.isEmpty()) {
            // Before makeLeader: once unfollow returns no fetcher appends, so the epoch starts at the final log end (Kafka's order).
            followerFetching.unfollow(newLeaders);
        }
        long nowMs = time.milliseconds();
        for (Map.Entry<Partition, PartitionRegistration> entry : toLead) {
            Partition partition = entry.getKey();
            try {
                partition.makeLeader(entry.getValue(), nowMs);
            } catch (RuntimeException e) {
                LOG.error("Could not make broker {} the leader of {} with {}", nodeId, partition.topicPartition(), entry.getValue(), e);
                failure = failure == null ? e : failure;
            }
        }
        return failure;
    }

    private RuntimeException applyFollowers(List<Map.Entry<Partition, PartitionRegistration>> toFollow, List<Partition> createdFollowers,
                                            RuntimeException failure) {
        List<Partition> follow = new ArrayList<>(createdFollowers);
        for (Map.Entry<Partition, PartitionRegistration> entry : toFollow) {
            Partition partition = entry.getKey();
            try {
                boolean wasLeader = partition.isLeader();
                if (partition.makeFollower(entry.getValue())) {
                    follow.add(partition);
                }
                if (wasLeader) {
                    // Leadership moved away: parked acks=all produces and delayed fetches answer NOT_LEADER_OR_FOLLOWER now.
                    producePurgatory.checkAndComplete(partition.topicPartition());
                    fetchPurgatory.checkAndComplete(partition.topicPartition());
                }
            } catch (RuntimeException e) {
                LOG.error("Could not make broker {} a follower of {} with {}", nodeId, partition.topicPartition(), entry.getValue(), e);
                failure = failure == null ? e : failure;
            }
        }
        if (!follow.isEmpty()) {
            followerFetching.follow(follow);
        }
        return failure;
    }

    /** A partition of the image that this node hosts and has no {@link Partition} for yet. */
    private record NewPartition(TopicPartition topicPartition, UUID topicId, PartitionRegistration registration, LogConfig config) {
    }

    /**
     * Opens or creates the logs of {@code created}, up to {@link #LOG_CREATION_THREADS} at a time
     * (each costs a directory, two preallocated indexes and the fsyncs of its partition.metadata,
     * mostly waiting on the disk), and returns once every one was tried: a caller of
     * {@code MetadataLoader.whenApplied} still finds the logs there. Each partition is usable
     * (leadershipError NONE) as soon as its own log exists. The first failure is thrown after
     * the others were created; every failure is logged.
     */
    private void createPartitions(List<NewPartition> created, List<Partition> followers) {
        if (created.size() <= 1) {
            created.forEach(partition -> createPartition(partition, followers));
            return;
        }
        List<java.util.concurrent.Future<?>> tasks = new ArrayList<>(created.size());
        RuntimeException[] first = new RuntimeException[1];
        for (int i = 0; i < created.size(); i++) {
            if (i >= LOG_CREATION_QUEUE) {
                awaitCreation(created.get(i - LOG_CREATION_QUEUE), tasks.get(i - LOG_CREATION_QUEUE), first); // keeps the queue bounded
            }
            NewPartition partition = created.get(i);
            tasks.add(logCreators.submit(() -> createPartition(partition, followers)));
        }
        for (int i = Math.max(0, created.size() - LOG_CREATION_QUEUE); i < created.size(); i++) {
            awaitCreation(created.get(i), tasks.get(i), first);
        }
        if (first[0] != null) {
            throw first[0];
        }
    }

    private static void awaitCreation(NewPartition partition, java.util.concurrent.Future<?> task, RuntimeException[] first) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    task.get();
                    return;
                } catch (InterruptedException e) {
                    interrupted = true; // the loader does not stop halfway through an image
                }
            }
        } catch (java.util.concurrent.ExecutionException e) {
            RuntimeException failure = e.getCause() instanceof RuntimeException runtime ? runtime : new IllegalStateException(e.getCause());
            LOG.error("Could not open the log of {}", partition.topicPartition(), failure);
            if (first[0] == null) {
                first[0] = failure;
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void createPartition(NewPartition partition, List<Partition> followers) {
        Partition created = createPartition(partition.topicPartition(), partition.topicId(), partition.registration(), partition.config());
        if (!created.isLeader()) {
            followers.add(created);
        }
    }

    /** Opens or creates the log and gives the partition its role before any request can see it. */
    private Partition createPartition(TopicPartition topicPartition, UUID topicId, PartitionRegistration registration, LogConfig config) {
        try {
            UnifiedLog log = logManager.getLog(topicPartition);
            if (log != null && log.topicId().isPresent() && !log.topicId().get().equals(topicId)) {
                // A log left over from a deleted topic of the same name: it is not this topic's data.
                LOG.warn("Deleting stale log of {} with topic id {} (the topic's id is now {})", topicPartition, log.topicId().get(), topicId);
                logManager.deleteLog(topicPartition);
                log = null;
            }
            if (log == null) {
                log = logManager.getOrCreateLog(topicPartition, Optional.of(topicId), config);
            } else {
                log.assignTopicId(topicId);
                log.updateConfig(config);
            }
            Partition partition = new Partition(topicPartition, topicId, log, context);
            if (registration.leader() == nodeId) {
                partition.makeLeader(registration, time.milliseconds());
            } else {
                partition.makeFollower(registration);
            }
            Partition replaced = partitions.put(topicPartition, partition);
            if (replaced != null && replaced != partition) {
                // The partition was hosted under the topic's previous image: what waited on the old object answers now.
                producePurgatory.checkAndComplete(topicPartition);
                fetchPurgatory.checkAndComplete(topicPartition);
            }
            return partition;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("could not open the log of " + topicPartition, e);
        }
    }

    private void removePartition(TopicPartition topicPartition) {
        Partition removed = partitions.remove(topicPartition);
        if (removed == null) {
            return;
        }
        LogDirMover mover = logDirMover;
        if (mover != null) {
            try {
                mover.abort(topicPartition); // waits for a copy step in progress before the future log goes
            } catch (IOException e) {
                LOG.error("Could not delete the future log of {}", topicPartition, e);
            }
        }
        try {
            logManager.deleteLog(topicPartition);
        } catch (IOException e) {
            LOG.error("Could not delete the log of {}", topicPartition, e);
        }
        producePurgatory.checkAndComplete(topicPartition);
        fetchPurgatory.checkAndComplete(topicPartition);
    }

    // ---------------------------------------------------------------- transactions

    /**
     * The path to the transaction coordinator of a transactional id (KIP-890): adds partitions to
     * the producer's transaction ({@code verifyOnly} false: transactions v2, as Kafka's leader
     * sends AddPartitionsToTxn v5) or checks that they were added ({@code verifyOnly} true:
     * transactions v1 clients). The future completes with an answer (NONE or an error) for every
     * partition, locally or from the coordinator's node; it may complete on a network thread.
     */
    @FunctionalInterface
    public interface TransactionPartitionAdder {
        CompletableFuture<Map<TopicPartition, ErrorCode>> addPartitions(String transactionalId, long producerId, short producerEpoch,
                                                                        Set<TopicPartition> partitions, boolean verifyOnly);
    }

    private volatile TransactionPartitionAdder transactionPartitionAdder;

    public void setTransactionPartitionAdder(TransactionPartitionAdder adder) {
        this.transactionPartitionAdder = adder;
    }

    /**
     * Adds {@code partitions} to the producer's transaction through the coordinator of
     * {@code transactionalId} (a group coordinator's implicit add of its {@code __consumer_offsets}
     * partition for TxnOffsetCommit v5), retrying CONCURRENT_TRANSACTIONS as a Produce v12 add is
     * retried; completes with NONE or the first error. COORDINATOR_NOT_AVAILABLE when no path to
     * the coordinator was configured.
     */
    public CompletableFuture<ErrorCode> addPartitionsToTransaction(String transactionalId, long producerId, short producerEpoch,
                                                                   Set<TopicPartition> partitions) {
        TransactionPartitionAdder adder = transactionPartitionAdder;
        if (adder == null) {
            return CompletableFuture.completedFuture(ErrorCode.COORDINATOR_NOT_AVAILABLE);
        }
        return addPartitionsRetryingConcurrent(adder, transactionalId, producerId, producerEpoch, partitions);
    }

    /**
     * Checks with the coordinator of {@code transactionalId} that {@code partitions} are in the
     * producer's open transaction (KIP-890 part 1 for a group coordinator's TxnOffsetCommit up to
     * v4); completes with NONE or the first error. COORDINATOR_NOT_AVAILABLE when no path to the
     * coordinator was configured.
     */
    public CompletableFuture<ErrorCode> verifyPartitionsInTransaction(String transactionalId, long producerId, short producerEpoch,
                                                                      Set<TopicPartition> partitions) {
        TransactionPartitionAdder adder = transactionPartitionAdder;
        if (adder == null) {
            return CompletableFuture.completedFuture(ErrorCode.COORDINATOR_NOT_AVAILABLE);
        }
        try {
            return adder.addPartitions(transactionalId, producerId, producerEpoch, partitions, true).thenApply(ReplicaManager::firstError);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private record ProducerIdAndEpoch(long producerId, short producerEpoch) {
    }

    private static io.strata.protocol.records.DefaultRecordBatch firstTransactionalBatch(MemoryRecords records) {
        for (io.strata.protocol.records.RecordBatch entry : records.batches()) {
            if (entry instanceof io.strata.protocol.records.DefaultRecordBatch batch && batch.isTransactional() && !batch.isControlBatch()) {
                return batch;
            }
        }
        return null;
    }

    /**
     * Produce with a transactional id. Partitions on which the producer has no open transaction
     * at its epoch are first sent to the coordinator of {@code transactionalId}: added to the
     * transaction (Produce v12+, transactions v2) or, with {@code verifyOnly} (Produce up to v11,
     * transactions v1 clients, KIP-890 part 1), checked to have been added by the client.
     * Partitions the coordinator refuses are answered with its error as Kafka maps it for Produce,
     * the others are appended as by {@link #appendRecords}. When the coordinator was asked,
     * {@code callback} runs on the thread that completes its answer (the coordinator's thread, or
     * the inter-broker client's when it is another node).
     */
    public void appendTransactionalRecords(long timeoutMs, short requiredAcks, String transactionalId, Map<TopicPartition, MemoryRecords> entries,
                                           boolean verifyOnly, Consumer<Map<TopicPartition, ProducePartitionResult>> callback) {
        TransactionPartitionAdder adder = transactionPartitionAdder;
        Map<ProducerIdAndEpoch, Set<TopicPartition>> toAdd = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, MemoryRecords> entry : entries.entrySet()) {
            Partition partition = partitions.get(entry.getKey());
            // Only partitions led here are added; the others are answered with their leadership error by the append.
            io.strata.protocol.records.DefaultRecordBatch batch = partition == null || !partition.isLeader() ? null
                : firstTransactionalBatch(entry.getValue());
            if (batch != null && !TopicNames.isInternal(entry.getKey().topic())
                && !partition.log().hasOngoingTransaction(batch.producerId(), batch.producerEpoch())) {
                toAdd.computeIfAbsent(new ProducerIdAndEpoch(batch.producerId(), batch.producerEpoch()), key -> new java.util.LinkedHashSet<>())
                    .add(entry.getKey());
            }
        }
        if (adder == null || toAdd.isEmpty()) {
            appendRecords(timeoutMs, requiredAcks, false, UnifiedLog.AppendOrigin.CLIENT, entries, callback);
            return;
        }
        if (verifyOnly) {
            verifyThenAppend(timeoutMs, requiredAcks, transactionalId, entries, toAdd, adder, callback);
            return;
        }
        Map<TopicPartition, ErrorCode> refused = new ConcurrentHashMap<>();
        List<CompletableFuture<Void>> adds = new ArrayList<>();
        for (Map.Entry<ProducerIdAndEpoch, Set<TopicPartition>> producer : toAdd.entrySet()) {
            Set<TopicPartition> added = producer.getValue();
            adds.add(addPartitionsRetryingConcurrent(adder, transactionalId, producer.getKey().producerId(), producer.getKey().producerEpoch(),
                    added)
                .handle((error, failure) -> {
                    if (failure != null) {
                        LOG.warn("Adding {} to transaction {} failed", added, transactionalId, failure);
                    }
                    ErrorCode result = failure != null ? ErrorCode.COORDINATOR_NOT_AVAILABLE : error;
                    if (result != ErrorCode.NONE) {
                        added.forEach(topicPartition -> refused.put(topicPartition, result));
                    }
                    return null;
                }));
        }
        CompletableFuture.allOf(adds.toArray(new CompletableFuture[0])).whenComplete((done, failure) -> {
            LinkedHashMap<TopicPartition, MemoryRecords> accepted = new LinkedHashMap<>();
            entries.forEach((topicPartition, records) -> {
                if (!refused.containsKey(topicPartition)) {
                    accepted.put(topicPartition, records);
                }
            });
            Consumer<Map<TopicPartition, ProducePartitionResult>> merge = appended -> {
                LinkedHashMap<TopicPartition, ProducePartitionResult> results = new LinkedHashMap<>();
                for (TopicPartition topicPartition : entries.keySet()) {
                    ErrorCode error = refused.get(topicPartition);
                    if (error != null) {
                        topicMetrics.recordProduce(topicPartition.topic(), 0, 0, true);
                    }
                    results.put(topicPartition, error == null ? appended.get(topicPartition) : addPartitionsErrorForProduce(error, false));
                }
                callback.accept(results);
            };
            appendAccepted(timeoutMs, requiredAcks, accepted, merge);
        });
    }

    private void appendAccepted(long timeoutMs, short requiredAcks, Map<TopicPartition, MemoryRecords> accepted,
                                Consumer<Map<TopicPartition, ProducePartitionResult>> merge) {
        if (accepted.isEmpty()) {
            merge.accept(Map.of());
        } else {
            appendRecords(timeoutMs, requiredAcks, false, UnifiedLog.AppendOrigin.CLIENT, accepted, merge);
        }
    }

    /**
     * KIP-890 part 1 for a transactions v1 client (Produce up to v11 with a transactional id): the
     * first transactional batch of a producer on a partition is appended only once the
     * coordinator confirmed (VerifyOnly) that the client added the partition; a late write of a
     * finished transaction would otherwise open a stray one. Asynchronous: no handler thread waits
     * for the coordinator.
     */
    private void verifyThenAppend(long timeoutMs, short requiredAcks, String transactionalId, Map<TopicPartition, MemoryRecords> entries,
                                  Map<ProducerIdAndEpoch, Set<TopicPartition>> toVerify, TransactionPartitionAdder adder,
                                  Consumer<Map<TopicPartition, ProducePartitionResult>> callback) {
        Map<TopicPartition, ErrorCode> refused = new ConcurrentHashMap<>();
        List<CompletableFuture<Void>> verifications = new ArrayList<>();
        for (Map.Entry<ProducerIdAndEpoch, Set<TopicPartition>> producer : toVerify.entrySet()) {
            Set<TopicPartition> verified = producer.getValue();
            CompletableFuture<Map<TopicPartition, ErrorCode>> verdicts;
            try {
                verdicts = adder.addPartitions(transactionalId, producer.getKey().producerId(), producer.getKey().producerEpoch(), verified, true);
            } catch (RuntimeException e) {
                verdicts = CompletableFuture.failedFuture(e);
            }
            verifications.add(verdicts.handle((answers, failure) -> {
                if (failure != null) {
                    LOG.warn("Verifying {} in transaction {} failed", verified, transactionalId, failure);
                }
                for (TopicPartition topicPartition : verified) {
                    ErrorCode error = failure != null ? ErrorCode.COORDINATOR_NOT_AVAILABLE
                        : answers.getOrDefault(topicPartition, ErrorCode.NETWORK_EXCEPTION);
                    if (error != ErrorCode.NONE) {
                        refused.put(topicPartition, error);
                    }
                }
                return null;
            }));
        }
        CompletableFuture.allOf(verifications.toArray(new CompletableFuture[0])).whenComplete((done, failure) -> {
            LinkedHashMap<TopicPartition, MemoryRecords> accepted = new LinkedHashMap<>();
            entries.forEach((topicPartition, records) -> {
                if (!refused.containsKey(topicPartition)) {
                    accepted.put(topicPartition, records);
                }
            });
            appendAccepted(timeoutMs, requiredAcks, accepted, appended -> {
                LinkedHashMap<TopicPartition, ProducePartitionResult> results = new LinkedHashMap<>();
                for (TopicPartition topicPartition : entries.keySet()) {
                    ErrorCode error = refused.get(topicPartition);
                    if (error != null) {
                        topicMetrics.recordProduce(topicPartition.topic(), 0, 0, true);
                        LOG.debug("Refused a transactional write to {} of {}: {}", topicPartition, transactionalId, error);
                    }
                    results.put(topicPartition, error == null ? appended.get(topicPartition) : addPartitionsErrorForProduce(error, true));
                }
                callback.accept(results);
            });
        });
    }

    private CompletableFuture<ErrorCode> addPartitionsRetryingConcurrent(TransactionPartitionAdder adder, String transactionalId, long producerId,
                                                                         short producerEpoch, Set<TopicPartition> added) {
        return AddPartitionsRetry.add(() -> {
            try {
                return adder.addPartitions(transactionalId, producerId, producerEpoch, added, false).thenApply(ReplicaManager::firstError);
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }, time, logManager.scheduler(), AddPartitionsRetry.BACKOFF_MS, AddPartitionsRetry.MAX_MS);
    }

    /** NONE if every partition was added, else the first partition's error (the coordinator answers one error for an add). */
    private static ErrorCode firstError(Map<TopicPartition, ErrorCode> errors) {
        for (ErrorCode error : errors.values()) {
            if (error != ErrorCode.NONE) {
                return error;
            }
        }
        return ErrorCode.NONE;
    }

    /**
     * Kafka's translation of the coordinator's answer for a Produce response: a fenced producer
     * sees INVALID_PRODUCER_EPOCH; an unavailable, moved or unreachable coordinator
     * NOT_ENOUGH_REPLICAS, which clients retry without refreshing metadata. CONCURRENT_TRANSACTIONS
     * (the previous transaction is still completing) is kept for a v12 add, as v12 clients retry
     * it, and is NOT_ENOUGH_REPLICAS for a v1 client's verification, which older clients would not retry.
     */
    static ProducePartitionResult addPartitionsErrorForProduce(ErrorCode error, boolean verifyOnly) {
        return switch (error) {
            case PRODUCER_FENCED -> ProducePartitionResult.error(ErrorCode.INVALID_PRODUCER_EPOCH, null);
            case INVALID_TXN_STATE -> ProducePartitionResult.error(error, "Partition was not added to the transaction");
            case CONCURRENT_TRANSACTIONS -> verifyOnly ? unverified(error) : ProducePartitionResult.error(error, null);
            case NETWORK_EXCEPTION, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR -> unverified(error);
            default -> ProducePartitionResult.error(error, null);
        };
    }

    private static ProducePartitionResult unverified(ErrorCode error) {
        return ProducePartitionResult.error(ErrorCode.NOT_ENOUGH_REPLICAS,
            "Unable to verify the partition has been added to the transaction. Underlying error: " + error);
    }

    /** Appends a transaction marker (control batch) as the leader; returns NONE or the error. */
    public ErrorCode appendMarker(TopicPartition topicPartition, MemoryRecords marker) {
        return appendMarker(topicPartition, marker, io.strata.storage.MarkerCheck.NOT_OLDER);
    }

    /** {@link #appendMarker(TopicPartition, MemoryRecords)}, checking the marker's epoch as {@code check} says. */
    public ErrorCode appendMarker(TopicPartition topicPartition, MemoryRecords marker, io.strata.storage.MarkerCheck check) {
        try {
            Partition partition = leaderPartitionOrThrow(topicPartition);
            partition.appendMarkerToLeader(marker, check);
            fetchPurgatory.checkAndComplete(topicPartition);
            producePurgatory.checkAndComplete(topicPartition);
            return ErrorCode.NONE;
        } catch (ErrorCodeException e) {
            return e.error();
        } catch (IOException e) {
            LOG.error("Writing a transaction marker to {} failed", topicPartition, e);
            return ErrorCode.KAFKA_STORAGE_ERROR;
        }
    }

    // ---------------------------------------------------------------- produce

    /**
     * Appends to each partition and calls {@code callback} with one result per partition, in
     * request order: at once for acks 0 and 1, and once the high watermark covers the writes
     * (or the timeout passes) for acks=all.
     */
    public void appendRecords(long timeoutMs, short requiredAcks, boolean internalTopicsAllowed, UnifiedLog.AppendOrigin origin,
                              Map<TopicPartition, MemoryRecords> entries, Consumer<Map<TopicPartition, ProducePartitionResult>> callback) {
        LinkedHashMap<TopicPartition, ProducePartitionResult> results = new LinkedHashMap<>();
        boolean anyAppended = false;
        for (Map.Entry<TopicPartition, MemoryRecords> entry : entries.entrySet()) {
            ProducePartitionResult result = appendToPartition(entry.getKey(), entry.getValue(), internalTopicsAllowed, origin, requiredAcks);
            results.put(entry.getKey(), result);
            anyAppended |= result.error() == ErrorCode.NONE;
        }
        // acks=1 waits only for an fsync-on-ack (a broker-wide setting every partition's log shares); acks=0 is never answered.
        boolean waitsForFsync = requiredAcks == 1 && logManager.fsyncOnAck();
        if (requiredAcks != -1 && !waitsForFsync || !anyAppended) {
            callback.accept(results);
            return;
        }
        DelayedProduce delayed = new DelayedProduce(timeoutMs, requiredAcks, results, this, callback);
        producePurgatory.tryCompleteElseWatch(delayed, new ArrayList<>(results.keySet()));
    }

    private ProducePartitionResult appendToPartition(TopicPartition topicPartition, MemoryRecords records, boolean internalTopicsAllowed,
                                                     UnifiedLog.AppendOrigin origin, short requiredAcks) {
        if (TopicNames.isInternal(topicPartition.topic()) && !internalTopicsAllowed) {
            return ProducePartitionResult.error(ErrorCode.INVALID_TOPIC_EXCEPTION, "Cannot append to internal topic " + topicPartition.topic());
        }
        Partition partition;
        try {
            partition = leaderPartitionOrThrow(topicPartition);
        } catch (ErrorCodeException e) {
            return ProducePartitionResult.error(e.error(), e.getMessage());
        }
        BrokerTopicMetrics metrics = topicMetrics;
        try {
            LogAppendInfo info = partition.appendRecordsToLeader(records, origin, requiredAcks);
            if (!info.duplicate() && partition.log().fsyncOnAck()) {
                flusher.request(partition);
            }
            if (!info.duplicate()) {
                fetchPurgatory.checkAndComplete(topicPartition);
                producePurgatory.checkAndComplete(topicPartition);
            }
            metrics.recordProduce(topicPartition.topic(), records.sizeInBytes(), info.recordCount(), false);
            return new ProducePartitionResult(ErrorCode.NONE, info.firstOffset(), info.logAppendTimeMs(), info.logStartOffset(), null,
                info.lastOffset());
        } catch (ErrorCodeException e) {
            metrics.recordProduce(topicPartition.topic(), 0, 0, true);
            return ProducePartitionResult.error(e.error(), e.getMessage());
        } catch (IOException e) {
            metrics.recordProduce(topicPartition.topic(), 0, 0, true);
            // The log-dir failure channel logged the first failure of the directory at ERROR with its cause.
            LOG.debug("Append to {} failed", topicPartition, e);
            return ProducePartitionResult.error(ErrorCode.KAFKA_STORAGE_ERROR, "Disk error when trying to access log file on the disk.");
        }
    }

    // ---------------------------------------------------------------- fetch

    /**
     * Reads the requested partitions; answers at once if at least {@code minBytes} are
     * available, an error occurred or {@code maxWaitMs} is 0, else when data arrives or the wait
     * times out.
     */
    public void fetchMessages(FetchParams params, LinkedHashMap<TopicPartition, PartitionFetchInfo> fetchInfos,
                              Consumer<LinkedHashMap<TopicPartition, FetchPartitionData>> callback) {
        LinkedHashMap<TopicPartition, FetchPartitionData> results = readFromLog(params, fetchInfos);
        long bytes = 0;
        boolean anyError = false;
        for (FetchPartitionData data : results.values()) {
            bytes += data.records().sizeInBytes();
            // A preferred read replica answers at once too (Kafka's hasPreferredReadReplica): the consumer moves to it.
            anyError |= data.error() != ErrorCode.NONE || data.divergingEpoch() != null || data.hasPreferredReadReplica();
        }
        if (params.maxWaitMs() <= 0 || fetchInfos.isEmpty() || bytes >= params.minBytes() || anyError) {
            recordFetched(params, results);
            callback.accept(results);
            return;
        }
        DelayedFetch delayed = new DelayedFetch(params, fetchInfos, this, callback);
        fetchPurgatory.tryCompleteElseWatch(delayed, new ArrayList<>(fetchInfos.keySet()));
    }

    /** Counts a fetch's answer per topic, for the partitions this broker hosts (a follower's bytes as replication bytes out). */
    void recordFetched(FetchParams params, Map<TopicPartition, FetchPartitionData> results) {
        if (params.isFromFollower()) {
            recordThrottledBytes(results);
        }
        BrokerTopicMetrics metrics = topicMetrics;
        if (!metrics.isEnabled()) {
            return;
        }
        for (Map.Entry<TopicPartition, FetchPartitionData> entry : results.entrySet()) {
            Partition partition = partitions.get(entry.getKey());
            if (partition != null) {
                FetchPartitionData data = entry.getValue();
                boolean toAddingReplica = params.isFromFollower() && partition.isAddingReplica(params.replicaId());
                metrics.recordFetch(entry.getKey().topic(), data.records().sizeInBytes(), data.error() != ErrorCode.NONE, params.isFromFollower(),
                    toAddingReplica);
            }
        }
    }

    /** Kafka's {@code sizeOfThrottledPartitions}: the bytes of a follower's answer for throttled partitions count against the quota. */
    private void recordThrottledBytes(Map<TopicPartition, FetchPartitionData> results) {
        ReplicaQuota quota = leaderQuota;
        long bytes = 0;
        for (Map.Entry<TopicPartition, FetchPartitionData> entry : results.entrySet()) {
            if (quota.isThrottled(entry.getKey())) {
                bytes += entry.getValue().records().sizeInBytes();
            }
        }
        if (bytes > 0) {
            quota.record(bytes);
        }
    }

    /** Kafka's {@code shouldLeaderThrottle}: a throttled partition, a follower outside the ISR, the quota exceeded. */
    private boolean shouldLeaderThrottle(Partition partition, int replicaId) {
        ReplicaQuota quota = leaderQuota;
        return quota.isThrottled(partition.topicPartition()) && !partition.isr().contains(replicaId) && quota.isQuotaExceeded();
    }

    /** Reads every partition within the response budget, recording a follower's fetch positions. */
    LinkedHashMap<TopicPartition, FetchPartitionData> readFromLog(FetchParams params, LinkedHashMap<TopicPartition, PartitionFetchInfo> fetchInfos) {
        return readFromLog(params, fetchInfos, true);
    }

    /**
     * Reads every partition within the response budget; the first partition with data may exceed
     * it (KIP-74). With {@code recordFollowerState} a follower's fetch offsets are recorded on the
     * leader ({@link Partition#updateFollowerFetchState}); a delayed fetch's checks read without.
     */
    LinkedHashMap<TopicPartition, FetchPartitionData> readFromLog(FetchParams params, LinkedHashMap<TopicPartition, PartitionFetchInfo> fetchInfos,
                                                                  boolean recordFollowerState) {
        LinkedHashMap<TopicPartition, FetchPartitionData> results = new LinkedHashMap<>();
        int remaining = params.maxBytes();
        boolean minOneMessage = true;
        for (Map.Entry<TopicPartition, PartitionFetchInfo> entry : fetchInfos.entrySet()) {
            PartitionFetchInfo info = entry.getValue();
            FetchPartitionData data = readPartition(entry.getKey(), info, Math.max(0, Math.min(info.maxBytes(), remaining)), params, minOneMessage,
                recordFollowerState);
            int size = data.records().sizeInBytes();
            if (size > 0) {
                minOneMessage = false;
            }
            remaining = Math.max(0, remaining - size);
            results.put(entry.getKey(), data);
        }
        return results;
    }

    private FetchPartitionData readPartition(TopicPartition topicPartition, PartitionFetchInfo info, int maxBytes, FetchParams params,
                                             boolean minOneMessage, boolean recordFollowerState) {
        Partition partition;
        try {
            partition = fetchPartitionOrThrow(topicPartition, params.fetchOnlyLeader());
        } catch (ErrorCodeException e) {
            return FetchPartitionData.error(e.error(), e.getMessage());
        }
        UnifiedLog log = partition.log();
        try {
            // On a follower this is the follower's view of the leader epoch: a consumer ahead of or behind it is refused (KIP-392).
            partition.checkLeaderEpoch(info.currentLeaderEpoch());
            FetchPartitionData preferred = preferredReadReplica(partition, info, params);
            if (preferred != null) {
                return preferred;
            }
            if (params.isFromFollower() && partition.remoteReplica(params.replicaId()) == null) {
                // Kafka 4's followerReplicaOrThrow: a replica this leader does not know (yet) reads nothing above the high watermark.
                throw new ErrorCodeException(info.currentLeaderEpoch() >= 0 ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.NOT_LEADER_OR_FOLLOWER,
                    "Replica " + params.replicaId() + " is not a replica of " + topicPartition + " on its leader " + nodeId);
            }
            if (info.lastFetchedEpoch() >= 0) {
                FetchPartitionData diverging = FollowerFetch.divergingEpoch(partition, info);
                if (diverging != null) {
                    return diverging; // and no follower state update: the follower truncates first (KAFKA-13141)
                }
            }
            long leaderEndOffset = log.logEndOffset();
            // A consumer's read on a follower stops at the follower's own high watermark (or last stable offset): the isolation does it.
            // A throttled follower reads nothing but its fetch position is still recorded, as on Kafka.
            boolean throttled = params.isFromFollower() && shouldLeaderThrottle(partition, params.replicaId());
            FetchDataInfo read = throttled ? null : partition.read(info.fetchOffset(), maxBytes, params.isolation(), minOneMessage);
            if (params.isFromFollower() && recordFollowerState) {
                FollowerFetch.record(partition, params, info, leaderEndOffset, time.milliseconds());
            }
            if (!partition.isLeader() && recordFollowerState) {
                followerReadsForConsumers.increment();
            }
            return new FetchPartitionData(ErrorCode.NONE, log.highWatermark(), log.lastStableOffset(), log.logStartOffset(),
                throttled ? MemoryRecords.EMPTY : read.records(), throttled ? null : read.abortedTransactions(), null);
        } catch (ErrorCodeException e) {
            return new FetchPartitionData(e.error(), log.highWatermark(), log.lastStableOffset(), log.logStartOffset(),
                MemoryRecords.EMPTY, null, e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("Read from {} failed", topicPartition, e);
            return FetchPartitionData.error(ErrorCode.UNKNOWN_SERVER_ERROR, e.toString());
        }
    }

    /**
     * The leader's PreferredReadReplica answer for a consumer fetch v11+ when the selector names
     * another replica (KIP-392), or null: the fetch is read here.
     */
    private FetchPartitionData preferredReadReplica(Partition partition, PartitionFetchInfo info, FetchParams params) {
        ReplicaSelector selector = replicaSelector;
        if (selector == null || params.clientMetadata() == null || !partition.isLeader()) {
            return null;
        }
        int preferred = PreferredReadReplica.find(selector, partition, params.clientMetadata(), info.fetchOffset(), image, time.milliseconds());
        if (preferred == PreferredReadReplica.NONE) {
            return null;
        }
        UnifiedLog log = partition.log();
        return FetchPartitionData.preferredReadReplica(log.highWatermark(), log.lastStableOffset(), log.logStartOffset(), preferred);
    }

    public Time time() {
        return time;
    }
}
