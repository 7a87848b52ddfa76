package io.strata.server.metrics;

import io.strata.common.BackgroundErrors;
import io.strata.coordinator.group.GroupCoordinator;
import io.strata.coordinator.group.GroupStatistics;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.PartitionRegistration;
import io.strata.metadata.TopicImage;
import io.strata.server.network.RequestChannel;
import io.strata.server.network.RequestHandlerPool;
import io.strata.server.network.RequestMemoryPool;
import io.strata.server.network.SocketServer;
import io.strata.server.purgatory.DelayedOperationPurgatory;
import io.strata.server.replica.Partition;
import io.strata.server.replica.ReplicaManager;
import io.strata.server.replica.ReplicationQuotaManager;
import io.strata.server.replica.fetcher.ReplicaFetcherManager;
import io.strata.storage.LogManager;
import io.strata.storage.LogSegment;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import io.strata.storage.cleaner.LogCleaner;
import io.strata.storage.cleaner.LogCleanerManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;
import java.util.function.Supplier;

/**
 * The metrics of one broker that are read at scrape time from its components (partitions,
 * purgatories, the request pipeline's queues and threads, storage, groups, the broker state),
 * plus the flush-latency histogram the logs record into. Components still being created
 * during start-up (the endpoint starts first, so that readiness can be watched) are skipped.
 * The replication states and the replica fetchers are {@link ReplicationMetrics}' (same sources).
 *
 * <p>Thread-safe; scrapes are serialised ({@code synchronized}) because the idle ratios are
 * computed over the time since the previous scrape.
 */
public final class ServerMetrics implements MetricsCollector {
    private static final Logger LOG = LoggerFactory.getLogger(ServerMetrics.class);
    /** How long a scrape waits for the group coordinator's shard threads. */
    static final long GROUP_STATISTICS_TIMEOUT_MS = 2_000;

    private final Sources sources;
    private final Histogram flushTime = Histogram.latency();
    private final ThreadMXBean threadBean = ManagementFactory.getThreadMXBean();
    private final IdleWindow handlerIdle = new IdleWindow();
    /** Network thread id → its CPU time at the previous scrape. */
    private final Map<Long, Long> networkThreadCpu = new java.util.HashMap<>();
    private long networkSampleNanos = -1;
    private double networkIdleRatio = 1.0;

    /** The busy/idle accounting between two scrapes. */
    private static final class IdleWindow {
        long lastWallNanos = -1;
        long lastIdleNanos;
        double lastRatio = 1.0;

        /** The idle fraction since the previous call, given the idle time summed over {@code threads} threads. */
        double update(long nowNanos, long idleNanos, int threads) {
            if (lastWallNanos >= 0 && nowNanos - lastWallNanos >= 1_000_000 && threads > 0) {
                double wall = (double) (nowNanos - lastWallNanos) * threads;
                lastRatio = Math.max(0, Math.min(1, (idleNanos - lastIdleNanos) / wall));
            }
            if (lastWallNanos < 0 || nowNanos - lastWallNanos >= 1_000_000) {
                lastWallNanos = nowNanos;
                lastIdleNanos = idleNanos;
            }
            return lastRatio;
        }
    }

    /**
     * What a scrape reads from the node. A component supplier answers null until start-up
     * creates the component (and always for a role the node does not have); its section is
     * then skipped.
     *
     * @param nodeId                        this node's id (which partitions it leads)
     * @param logDirs                       the data directories whose file systems are reported
     * @param backgroundErrors              the failures of background work, by task
     * @param started                       whether start-up finished
     * @param shuttingDown                  whether the controlled shutdown has begun
     * @param recoveringFromUncleanShutdown whether this start follows an unclean shutdown
     * @param image                         the current metadata image, or null before the loader exists
     * @param replicaFetcherManager         the follower side's fetchers ({@link ReplicationMetrics}), or null before replication starts
     * @param replicationQuotas             the leader and follower replication throttles ({@link ReplicationQuotaMetrics}), or null before start-up
     */
    public record Sources(int nodeId, List<Path> logDirs, BackgroundErrors backgroundErrors, BooleanSupplier started, BooleanSupplier shuttingDown,
                          BooleanSupplier recoveringFromUncleanShutdown, Supplier<MetadataImage> image, Supplier<LogManager> logManager,
                          Supplier<ReplicaManager> replicaManager, Supplier<GroupCoordinator> groupCoordinator,
                          Supplier<RequestChannel> requestChannel, Supplier<RequestHandlerPool> requestHandlerPool,
                          Supplier<SocketServer> socketServer, Supplier<DelayedOperationPurgatory<?>> producePurgatory,
                          Supplier<DelayedOperationPurgatory<?>> fetchPurgatory, Supplier<ReplicaFetcherManager> replicaFetcherManager,
                          Supplier<List<ReplicationQuotaManager>> replicationQuotas) {
        public Sources {
            logDirs = List.copyOf(logDirs);
            Objects.requireNonNull(backgroundErrors, "backgroundErrors");
            Objects.requireNonNull(started, "started");
            Objects.requireNonNull(shuttingDown, "shuttingDown");
            Objects.requireNonNull(recoveringFromUncleanShutdown, "recoveringFromUncleanShutdown");
            Objects.requireNonNull(image, "image");
            Objects.requireNonNull(logManager, "logManager");
            Objects.requireNonNull(replicaManager, "replicaManager");
            Objects.requireNonNull(groupCoordinator, "groupCoordinator");
            Objects.requireNonNull(requestChannel, "requestChannel");
            Objects.requireNonNull(requestHandlerPool, "requestHandlerPool");
            Objects.requireNonNull(socketServer, "socketServer");
            Objects.requireNonNull(producePurgatory, "producePurgatory");
            Objects.requireNonNull(fetchPurgatory, "fetchPurgatory");
            Objects.requireNonNull(replicaFetcherManager, "replicaFetcherManager");
            Objects.requireNonNull(replicationQuotas, "replicationQuotas");
        }

        /** Sources without replication throttles (their metrics are then left out). */
        public Sources(int nodeId, List<Path> logDirs, BackgroundErrors backgroundErrors, BooleanSupplier started, BooleanSupplier shuttingDown,
                       BooleanSupplier recoveringFromUncleanShutdown, Supplier<MetadataImage> image, Supplier<LogManager> logManager,
                       Supplier<ReplicaManager> replicaManager, Supplier<GroupCoordinator> groupCoordinator,
                       Supplier<RequestChannel> requestChannel, Supplier<RequestHandlerPool> requestHandlerPool,
                       Supplier<SocketServer> socketServer, Supplier<DelayedOperationPurgatory<?>> producePurgatory,
                       Supplier<DelayedOperationPurgatory<?>> fetchPurgatory, Supplier<ReplicaFetcherManager> replicaFetcherManager) {
            this(nodeId, logDirs, backgroundErrors, started, shuttingDown, recoveringFromUncleanShutdown, image, logManager, replicaManager,
                groupCoordinator, requestChannel, requestHandlerPool, socketServer, producePurgatory, fetchPurgatory, replicaFetcherManager,
                () -> null);
        }

        /** Sources without replica fetchers (their metrics are then left out). */
        public Sources(int nodeId, List<Path> logDirs, BackgroundErrors backgroundErrors, BooleanSupplier started, BooleanSupplier shuttingDown,
                       BooleanSupplier recoveringFromUncleanShutdown, Supplier<MetadataImage> image, Supplier<LogManager> logManager,
                       Supplier<ReplicaManager> replicaManager, Supplier<GroupCoordinator> groupCoordinator,
                       Supplier<RequestChannel> requestChannel, Supplier<RequestHandlerPool> requestHandlerPool,
                       Supplier<SocketServer> socketServer, Supplier<DelayedOperationPurgatory<?>> producePurgatory,
                       Supplier<DelayedOperationPurgatory<?>> fetchPurgatory) {
            this(nodeId, logDirs, backgroundErrors, started, shuttingDown, recoveringFromUncleanShutdown, image, logManager, replicaManager,
                groupCoordinator, requestChannel, requestHandlerPool, socketServer, producePurgatory, fetchPurgatory, () -> null, () -> null);
        }
    }

    public ServerMetrics(Sources sources) {
        this.sources = Objects.requireNonNull(sources, "sources");
    }

    /** Where the logs report flush durations (nanoseconds). */
    public LongConsumer flushObserver() {
        return flushTime::record;
    }

    @Override
    public synchronized void collect(List<MetricFamily> out) {
        out.add(MetricFamily.gauge("kafka_server_kafkaserver_brokerstate",
            "Broker state as Kafka numbers it: 1 starting, 2 recovering from an unclean shutdown, 3 running, 7 shutting down.")
            .add(brokerState()));
        section("partitions", this::collectPartitions, out);
        section("controller", this::collectController, out);
        section("request pipeline", this::collectRequestPipeline, out);
        section("purgatories", this::collectPurgatories, out);
        section("storage", this::collectStorage, out);
        section("groups", this::collectGroups, out);
        section("background work", this::collectBackgroundErrors, out);
    }

    /** Failures of background tasks, by task: each was logged, and the task went on. */
    private void collectBackgroundErrors(List<MetricFamily> out) {
        MetricFamily errors = MetricFamily.counter("strata_server_background_errors_total",
            "Failures of background tasks (periodic passes, scheduler and coordinator thread work), by task; the task keeps running.", "task");
        sources.backgroundErrors().counts().forEach((task, count) -> errors.add(count, task));
        out.add(errors);
    }

    /** Runs one section; a failing section loses its own families, not the others'. */
    private static void section(String name, MetricsCollector collector, List<MetricFamily> out) {
        List<MetricFamily> families = new ArrayList<>();
        try {
            collector.collect(families);
        } catch (RuntimeException e) {
            LOG.warn("Collecting the {} metrics failed; they are missing from this scrape", name, e);
            return;
        }
        out.addAll(families);
    }

    private int brokerState() {
        if (sources.shuttingDown().getAsBoolean()) {
            return 7;
        }
        if (sources.started().getAsBoolean()) {
            return 3;
        }
        LogManager logs = sources.logManager().get();
        return logs != null && !logs.isLoaded() && sources.recoveringFromUncleanShutdown().getAsBoolean() ? 2 : 1;
    }

    // ---------------------------------------------------------------- partitions

    /** The hosted partitions by topic, then partition: a stable exposition order. */
    static List<Partition> sortedPartitions(ReplicaManager replicaManager) {
        List<Partition> partitions = new ArrayList<>(replicaManager.partitions().values());
        partitions.sort(Comparator.comparing((Partition p) -> p.topicPartition().topic()).thenComparingInt(p -> p.topicPartition().partition()));
        return partitions;
    }

    private void collectPartitions(List<MetricFamily> out) {
        MetricFamily logEnd = partitionGauge("kafka_log_log_logendoffset", "Log end offset of a partition.");
        MetricFamily logStart = partitionGauge("kafka_log_log_logstartoffset", "Log start offset of a partition.");
        MetricFamily highWatermark = partitionGauge("kafka_log_log_highwatermark", "High watermark of a partition (what consumers can read).");
        MetricFamily size = partitionGauge("kafka_log_log_size", "Bytes of a partition's log segments on disk.");
        MetricFamily segments = partitionGauge("kafka_log_log_numlogsegments", "Segments of a partition's log.");
        MetricFamily stableLag = partitionGauge("kafka_cluster_partition_laststableoffsetlag",
            "High watermark minus last stable offset (open transactions hold consumers back by this much).");
        ReplicaManager replicaManager = sources.replicaManager().get();
        if (replicaManager != null) {
            for (Partition partition : sortedPartitions(replicaManager)) {
                String topic = partition.topicPartition().topic();
                String index = Integer.toString(partition.topicPartition().partition());
                UnifiedLog log = partition.log();
                try {
                    logEnd.add(log.logEndOffset(), topic, index);
                    logStart.add(log.logStartOffset(), topic, index);
                    highWatermark.add(log.highWatermark(), topic, index);
                    size.add(log.size(), topic, index);
                    segments.add(log.numberOfSegments(), topic, index);
                    stableLag.add(Math.max(0, log.highWatermark() - log.lastStableOffset()), topic, index);
                } catch (RuntimeException e) {
                    LOG.debug("Skipping metrics of {}: {}", partition.topicPartition(), e.toString());
                }
            }
        }
        out.addAll(List.of(logEnd, logStart, highWatermark, size, segments, stableLag));
    }

    private static MetricFamily partitionGauge(String name, String help) {
        return MetricFamily.gauge(name, help, "topic", "partition");
    }

    private MetadataImage image() {
        return sources.image().get();
    }

    private void collectController(List<MetricFamily> out) {
        MetadataImage image = image();
        if (image == null) {
            return;
        }
        int partitions = 0;
        int offline = 0;
        for (TopicImage topic : image.topicsByName().values()) {
            for (PartitionRegistration registration : topic.partitions().values()) {
                partitions++;
                if (!registration.hasLeader()) {
                    offline++;
                }
            }
        }
        out.add(MetricFamily.gauge("kafka_controller_kafkacontroller_activecontrollercount", "1 on the active controller.").add(1));
        out.add(MetricFamily.gauge("kafka_controller_kafkacontroller_offlinepartitionscount", "Partitions without a leader.").add(offline));
        out.add(MetricFamily.gauge("kafka_controller_kafkacontroller_preferredreplicaimbalancecount",
            "Partitions whose leader is not their first replica (leaderless ones included).").add(preferredReplicaImbalance(image)));
        out.add(MetricFamily.gauge("kafka_controller_kafkacontroller_globaltopiccount", "Topics in the cluster.").add(image.topicsByName().size()));
        out.add(MetricFamily.gauge("kafka_controller_kafkacontroller_globalpartitioncount", "Partitions in the cluster.").add(partitions));
    }

    /**
     * PreferredReplicaImbalanceCount: partitions without Kafka's hasPreferredLeader (a leader that
     * is the first replica), so leaderless partitions count too.
     */
    static int preferredReplicaImbalance(MetadataImage image) {
        int imbalanced = 0;
        for (TopicImage topic : image.topicsByName().values()) {
            for (PartitionRegistration registration : topic.partitions().values()) {
                boolean preferred = registration.hasLeader() && registration.replicas().length > 0
                    && registration.leader() == registration.replicas()[0];
                if (!preferred) {
                    imbalanced++;
                }
            }
        }
        return imbalanced;
    }

    // ---------------------------------------------------------------- request pipeline

    private void collectRequestPipeline(List<MetricFamily> out) {
        long now = System.nanoTime();
        RequestChannel channel = sources.requestChannel().get();
        if (channel != null) {
            out.add(MetricFamily.gauge("kafka_network_requestchannel_requestqueuesize", "Requests waiting in the request channel.")
                .add(channel.size()));
        }
        RequestHandlerPool pool = sources.requestHandlerPool().get();
        if (pool != null) {
            out.add(MetricFamily.gauge("kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent",
                "Fraction (0-1) of time the request handler threads were idle since the previous scrape.")
                .add(handlerIdle.update(now, pool.idleNanos(), pool.threadCount())));
        }
        SocketServer socketServer = sources.socketServer().get();
        if (socketServer != null) {
            RequestMemoryPool memoryPool = socketServer.memoryPool();
            out.add(MetricFamily.gauge("kafka_network_socketserver_memorypoolavailable",
                "Bytes of queued.max.request.bytes not reserved by buffered or in-flight requests (about 9.2e18, Long.MAX_VALUE, when unbounded, as in Kafka).")
                .add(memoryPool.availableBytes()));
            out.add(MetricFamily.gauge("kafka_network_socketserver_memorypoolused", "Bytes reserved by requests buffered or in flight.")
                .add(memoryPool.usedBytes()));
            out.add(MetricFamily.gauge("strata_network_memorypool_waiting_connections",
                "Connections not reading because their next request waits for request memory.").add(memoryPool.waitingCount()));
        }
        if (socketServer != null && threadBean.isThreadCpuTimeSupported()) {
            out.add(MetricFamily.gauge("kafka_network_socketserver_networkprocessoravgidlepercent",
                "Fraction (0-1) of time the network threads were off the CPU since the previous scrape.")
                .add(networkIdleRatio(now, socketServer.networkThreads())));
        }
    }

    /**
     * Idle = wall time a network thread did not spend on the CPU (an event loop waiting in epoll
     * uses none), averaged over the threads that existed at both scrapes (Netty starts them lazily).
     */
    private double networkIdleRatio(long now, List<Thread> threads) {
        if (networkSampleNanos >= 0 && now - networkSampleNanos < 1_000_000) {
            return networkIdleRatio;
        }
        Map<Long, Long> current = new java.util.HashMap<>();
        for (Thread thread : threads) {
            long cpu = threadBean.getThreadCpuTime(thread.getId());
            if (cpu >= 0) {
                current.put(thread.getId(), cpu);
            }
        }
        long busy = 0;
        int measured = 0;
        for (Map.Entry<Long, Long> entry : current.entrySet()) {
            Long previous = networkThreadCpu.get(entry.getKey());
            if (previous != null) {
                busy += entry.getValue() - previous;
                measured++;
            }
        }
        if (measured > 0 && networkSampleNanos >= 0) {
            networkIdleRatio = Math.max(0, Math.min(1, 1 - busy / ((double) (now - networkSampleNanos) * measured)));
        }
        networkThreadCpu.clear();
        networkThreadCpu.putAll(current);
        networkSampleNanos = now;
        return networkIdleRatio;
    }

    private void collectPurgatories(List<MetricFamily> out) {
        MetricFamily size = MetricFamily.gauge("kafka_server_delayedoperationpurgatory_purgatorysize",
            "Entries on the purgatory's watch lists (an operation counts once per key).", "delayed_operation");
        MetricFamily delayed = MetricFamily.gauge("kafka_server_delayedoperationpurgatory_numdelayedoperations",
            "Operations waiting in the purgatory.", "delayed_operation");
        MetricFamily expired = MetricFamily.counter("kafka_server_delayedoperationpurgatory_expires_total",
            "Operations completed by the timing wheel because their delay ran out.", "delayed_operation");
        for (DelayedOperationPurgatory<?> purgatory : new DelayedOperationPurgatory<?>[] {sources.producePurgatory().get(), sources.fetchPurgatory().get()}) {
            if (purgatory != null) {
                size.add(purgatory.watched(), purgatory.purgatoryName());
                delayed.add(purgatory.numDelayed(), purgatory.purgatoryName());
                expired.add(purgatory.numExpired(), purgatory.purgatoryName());
            }
        }
        out.addAll(List.of(size, delayed, expired));
    }

    // ---------------------------------------------------------------- storage

    private void collectStorage(List<MetricFamily> out) {
        out.add(MetricFamily.histogram("kafka_log_logflushstats_logflushrateandtimems", "Time to fsync a log's segments, ms.")
            .addHistogram(flushTime.snapshot(), Histogram.NANOS_PER_MS));
        LogManager logManager = sources.logManager().get();
        if (logManager == null) {
            return;
        }
        out.add(MetricFamily.gauge("kafka_log_logmanager_remaininglogstorecover", "Partition logs still loading or recovering at start-up.")
            .add(logManager.loadingRemaining()));
        collectOfflineLogDirs(logManager, out);
        MetricFamily usable = MetricFamily.gauge("strata_logdir_usable_bytes", "Bytes available to the broker on a data directory's file system.",
            "dir");
        MetricFamily total = MetricFamily.gauge("strata_logdir_total_bytes", "Size of a data directory's file system.", "dir");
        for (Path dir : sources.logDirs()) {
            try {
                FileStore store = Files.getFileStore(dir);
                usable.add(store.getUsableSpace(), dir.toString());
                total.add(store.getTotalSpace(), dir.toString());
            } catch (IOException e) {
                LOG.debug("Cannot read the file system of {}: {}", dir, e.toString());
            }
        }
        out.addAll(List.of(usable, total));
        collectCleaner(logManager, out);
    }

    /** Kafka's LogManager OfflineLogDirectoryCount and, per configured directory, LogDirectoryOffline (1 = offline). */
    private static void collectOfflineLogDirs(LogManager logManager, List<MetricFamily> out) {
        io.strata.storage.LogDirFailureChannel failures = logManager.logDirFailureChannel();
        MetricFamily offline = MetricFamily.gauge("kafka_log_logmanager_logdirectoryoffline",
            "1 while the data directory is offline after an I/O failure, 0 while online (Kafka's LogDirectoryOffline).", "log_directory");
        int count = 0;
        for (Path dir : logManager.logDirs()) {
            boolean failed = failures.hasOfflineLogDir(dir);
            count += failed ? 1 : 0;
            offline.add(failed ? 1 : 0, dir.toAbsolutePath().normalize().toString());
        }
        out.add(MetricFamily.gauge("kafka_log_logmanager_offlinelogdirectorycount",
            "Data directories offline after an I/O failure (Kafka's OfflineLogDirectoryCount).").add(count));
        out.add(offline);
    }

    private static void collectCleaner(LogManager logManager, List<MetricFamily> out) {
        LogCleaner cleaner = logManager.cleaner();
        if (cleaner == null) {
            return;
        }
        Map<TopicPartition, Long> checkpoints = cleaner.manager().allCleanerCheckpoints();
        int uncleanable = 0;
        double maxDirtyPercent = 0;
        for (UnifiedLog log : logManager.allLogs()) {
            if (!log.config().compact) {
                continue;
            }
            if (cleaner.manager().isUncleanable(log.topicPartition())) {
                uncleanable++;
            }
            // Kafka's cleanable ratio: bytes between the clean point and the first uncleanable offset (never
            // the active segment), over those plus the bytes already cleaned.
            LogCleanerManager.OffsetsToClean offsets = LogCleanerManager.cleanableOffsets(log, checkpoints.get(log.topicPartition()),
                System.currentTimeMillis());
            long cleanBytes = segmentBytes(log.logSegments(Math.min(log.logStartOffset(), offsets.firstDirtyOffset()), offsets.firstDirtyOffset()));
            long cleanableBytes = segmentBytes(log.logSegments(offsets.firstDirtyOffset(), offsets.firstUncleanableDirtyOffset()));
            if (cleanBytes + cleanableBytes > 0) {
                maxDirtyPercent = Math.max(maxDirtyPercent, 100.0 * cleanableBytes / (cleanBytes + cleanableBytes));
            }
        }
        boolean allAlive = cleaner.isRunning() && cleaner.aliveThreadCount() == cleaner.config().numThreads();
        out.add(MetricFamily.gauge("kafka_log_logcleaner_cleanerrunning", "1 while every configured log cleaner thread runs.")
            .add(allAlive ? 1 : 0));
        out.add(MetricFamily.gauge("kafka_log_logcleaner_deadthreadcount", "Log cleaner threads that ended by a failure (Kafka's DeadThreadCount).")
            .add(cleaner.deadThreadCount()));
        out.add(MetricFamily.gauge("strata_log_cleaner_threads", "Log cleaner threads alive (log.cleaner.threads once started).")
            .add(cleaner.aliveThreadCount()));
        out.add(MetricFamily.counter("strata_log_cleaner_failures_total",
            "Failures of a cleaning pass, of retention of a compacted log, or of a cleaner thread's loop (each logged; the thread goes on).")
            .add(cleaner.failureCount()));
        MetricFamily uncleanableCount = MetricFamily.gauge("kafka_log_logcleanermanager_uncleanablepartitionscount",
            "Partitions of a data directory the cleaner gave up on (Kafka's uncleanable-partitions-count).", "log_directory");
        MetricFamily uncleanableBytes = MetricFamily.gauge("kafka_log_logcleanermanager_uncleanablebytes",
            "Cleanable bytes of the uncleanable partitions of a data directory (Kafka's uncleanable-bytes).", "log_directory");
        long nowMs = System.currentTimeMillis();
        for (Path dir : cleaner.manager().logDirs()) {
            uncleanableCount.add(cleaner.manager().uncleanablePartitions(dir).size(), dir.toString());
            uncleanableBytes.add(cleaner.manager().uncleanableBytes(dir, nowMs), dir.toString());
        }
        out.add(uncleanableCount);
        out.add(uncleanableBytes);
        out.add(MetricFamily.gauge("kafka_log_logcleanermanager_uncleanablepartitions", "Compacted partitions the cleaner gave up on.")
            .add(uncleanable));
        out.add(MetricFamily.gauge("kafka_log_logcleanermanager_maxdirtypercent",
            "Largest cleanable share (percent) of a compacted log, by segment bytes (Kafka's max-dirty-percent).").add(maxDirtyPercent));
    }

    private static long segmentBytes(List<LogSegment> segments) {
        long bytes = 0;
        for (LogSegment segment : segments) {
            bytes += segment.size();
        }
        return bytes;
    }

    // ---------------------------------------------------------------- groups

    private void collectGroups(List<MetricFamily> out) {
        GroupCoordinator coordinator = sources.groupCoordinator().get();
        ReplicaManager replicaManager = sources.replicaManager().get();
        if (coordinator == null || replicaManager == null) {
            return;
        }
        List<GroupStatistics> groups;
        try {
            groups = coordinator.groupStatistics((topic, partition) -> {
                Partition hosted = replicaManager.partition(new TopicPartition(topic, partition));
                return hosted == null ? -1 : hosted.log().highWatermark();
            }).get(GROUP_STATISTICS_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            LOG.warn("Group statistics took over {} ms; group metrics are missing from this scrape", GROUP_STATISTICS_TIMEOUT_MS);
            return;
        } catch (ExecutionException e) {
            LOG.warn("Group statistics failed; group metrics are missing from this scrape", e.getCause());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        GroupFamilies families = new GroupFamilies();
        int offsets = 0;
        for (GroupStatistics group : groups) {
            families.add(group);
            offsets += group.partitions().size();
        }
        out.add(MetricFamily.gauge("kafka_coordinator_group_groupmetadatamanager_numgroups", "Groups this broker coordinates.").add(groups.size()));
        out.add(MetricFamily.gauge("kafka_coordinator_group_groupmetadatamanager_numoffsets", "Committed offsets this broker holds.").add(offsets));
        out.addAll(families.all());
    }

    /** The per-group families, named as kafka_exporter names them where it has them. */
    private static final class GroupFamilies {
        final MetricFamily members = MetricFamily.gauge("kafka_consumergroup_members", "Members of a group.", "consumergroup");
        final MetricFamily state = MetricFamily.gauge("kafka_consumergroup_state", "1 for the group's current state and protocol.",
            "consumergroup", "protocol", "state");
        final MetricFamily rebalances = MetricFamily.counter("kafka_consumergroup_rebalances_total",
            "Completed rebalances (classic: joins that reached Stable; consumer protocol: group epoch).", "consumergroup");
        final MetricFamily rebalanceTime = MetricFamily.counter("kafka_consumergroup_rebalance_seconds_total",
            "Summed duration of completed classic rebalances (PreparingRebalance to Stable).", "consumergroup");
        final MetricFamily lastRebalance = MetricFamily.gauge("kafka_consumergroup_last_rebalance_seconds",
            "Duration of the last completed classic rebalance.", "consumergroup");
        final MetricFamily currentOffset = MetricFamily.gauge("kafka_consumergroup_current_offset", "Committed offset of a group on a partition.",
            "consumergroup", "topic", "partition");
        final MetricFamily lag = MetricFamily.gauge("kafka_consumergroup_lag",
            "Records between a group's committed offset and the partition's high watermark.", "consumergroup", "topic", "partition");

        void add(GroupStatistics group) {
            String id = group.groupId();
            members.add(group.members(), id);
            state.add(1, id, group.protocol(), group.state());
            rebalances.add(group.rebalances(), id);
            rebalanceTime.add(group.totalRebalanceMs() / 1000.0, id);
            if (group.lastRebalanceMs() >= 0) {
                lastRebalance.add(group.lastRebalanceMs() / 1000.0, id);
            }
            for (GroupStatistics.PartitionLag partition : group.partitions()) {
                String index = Integer.toString(partition.partition());
                currentOffset.add(partition.committedOffset(), id, partition.topic(), index);
                if (partition.lag() >= 0) {
                    lag.add(partition.lag(), id, partition.topic(), index);
                }
            }
        }

        List<MetricFamily> all() {
            return List.of(members, state, rebalances, rebalanceTime, lastRebalance, currentOffset, lag);
        }
    }
}
