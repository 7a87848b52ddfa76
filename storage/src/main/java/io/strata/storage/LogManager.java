package io.strata.storage;

import io.strata.common.BackgroundErrors;
import io.strata.common.BackgroundExecutors;
import io.strata.common.Time;
import io.strata.storage.checkpoint.OffsetCheckpointFile;
import io.strata.storage.cleaner.CleanerConfig;
import io.strata.storage.cleaner.LogCleaner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Owns every partition log in the data directories: loads them at start (in parallel,
 * {@code num.recovery.threads.per.data.dir} threads per directory), creates and deletes
 * them, runs retention, time-based flushing and checkpointing in the background, and on a
 * clean shutdown flushes everything, writes the checkpoints and the clean-shutdown marker so
 * the next start skips recovery.
 *
 * <p>Per data directory it keeps Kafka's files: {@code recovery-point-offset-checkpoint},
 * {@code log-start-offset-checkpoint}, {@code replication-offset-checkpoint} (every hosted log's
 * high watermark, written every {@code replica.high.watermark.checkpoint.interval.ms} and at clean
 * shutdown, read back when the logs load), {@code .kafka_cleanshutdown} (see
 * {@link CleanShutdownMarker}) and a {@code .lock} held while the broker runs
 * ({@code cleaner-offset-checkpoint} belongs to the log cleaner).
 *
 * <p>The locks come first ({@link #lockDirectories}), before anything in a directory is read or
 * written, the metadata log included: a second process pointed at the same directories must stop
 * before it can recover (truncate) a log the running broker writes. The lock is an OS file lock
 * on {@code .lock} (released by the OS when the process dies, so a crash leaves no stale lock);
 * the file's contents name the holder ({@code pid=...} and {@code host=...} lines) so that the
 * refused process can say who holds it.
 *
 * <p>The {@link LogCleaner} starts once any log has cleanup.policy=compact (and
 * log.cleaner.enable is set); from then on the retention of compacted logs goes through it
 * (its threads after each pass, and this class's retention task through
 * {@link LogCleaner#runRetentionOfCompactedLogs}), so that retention never deletes a segment the
 * cleaner is rewriting. Every log is told to wake the cleaner when it rolls a segment.
 *
 * <p>Thread-safe.
 */
public final class LogManager implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(LogManager.class);
    public static final String RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint";
    public static final String LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint";
    /** Kafka's high watermark checkpoint; same format as the recovery point checkpoint. */
    public static final String REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint";
    /** Kafka's default {@code replica.high.watermark.checkpoint.interval.ms}. */
    public static final long DEFAULT_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS = 5000L;
    public static final String CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown";
    public static final String LOCK_FILE = ".lock";
    /** Suffix of a future log's directory name: {@code <topic>-<partition>.<uuid without dashes>-future} (Kafka's). */
    public static final String FUTURE_DIR_SUFFIX = "-future";
    /** Background task names (metric labels). */
    public static final String RETENTION_TASK = "log-retention";
    public static final String FLUSH_TASK = "log-flush";
    public static final String CHECKPOINT_TASK = "log-checkpoint";
    public static final String HIGH_WATERMARK_CHECKPOINT_TASK = "log-high-watermark-checkpoint";
    public static final String PRODUCER_EXPIRATION_TASK = "log-producer-expiration";
    public static final String SCHEDULER_TASK = "log-scheduler";
    /** The background task name of the deferred {@code partition.metadata} writes. */
    public static final String TOPIC_ID_WRITER_TASK = "topic-id-writer";
    /** The metadata log lives beside the partition logs but is owned by the metadata layer. */
    public static final String METADATA_TOPIC = "__cluster_metadata";
    /**
     * Bound of the preferred-directory map: an AlterReplicaLogDirs may name partitions that never
     * come to this broker (Kafka's map is unbounded); past the bound new preferences are refused.
     */
    public static final int MAX_PREFERRED_LOG_DIRS = 100_000;
    /** How long a clean shutdown waits for a running background task (e.g. a segment flush) to end. */
    private static final long SCHEDULER_SHUTDOWN_TIMEOUT_MS = 300_000L;

    /** A log being created in data directory {@code parent}; {@code log} completes when it exists. */
    private record Creation(Path parent, CompletableFuture<UnifiedLog> log) {
    }

    /**
     * Settings the log manager needs, taken from the broker configuration.
     *
     * @param highWatermarkCheckpointIntervalMs {@code replica.high.watermark.checkpoint.interval.ms};
     *        0 or less writes {@code replication-offset-checkpoint} only at clean shutdown
     */
    public record Settings(List<Path> logDirs, int recoveryThreadsPerDataDir, long retentionCheckIntervalMs, long flushCheckIntervalMs,
                           long checkpointIntervalMs, long producerIdExpirationMs, long producerIdExpirationCheckIntervalMs,
                           boolean fsyncOnAck, long highWatermarkCheckpointIntervalMs) {
        /** With Kafka's default {@code replica.high.watermark.checkpoint.interval.ms} (5000). */
        public Settings(List<Path> logDirs, int recoveryThreadsPerDataDir, long retentionCheckIntervalMs, long flushCheckIntervalMs,
                        long checkpointIntervalMs, long producerIdExpirationMs, long producerIdExpirationCheckIntervalMs,
                        boolean fsyncOnAck) {
            this(logDirs, recoveryThreadsPerDataDir, retentionCheckIntervalMs, flushCheckIntervalMs, checkpointIntervalMs,
                producerIdExpirationMs, producerIdExpirationCheckIntervalMs, fsyncOnAck, DEFAULT_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS);
        }
    }

    private final Settings settings;
    /** Settings' value until a dynamic num.recovery.threads.per.data.dir replaces it; read when logs load. */
    private volatile int recoveryThreadsPerDataDir;
    /** Settings' value until a dynamic producer.id.expiration.ms replaces it; given to every log created. */
    private volatile long producerIdExpirationMs;
    private final Time time;
    private final ScheduledExecutorService scheduler;
    private final ScheduledExecutorService topicIdWriter;
    private final BackgroundErrors backgroundErrors;
    private final ConcurrentHashMap<TopicPartition, UnifiedLog> logs = new ConcurrentHashMap<>();
    /**
     * Future logs ({@code <topic>-<p>.<uuid>-future}): a copy of a current log being built in
     * another data directory (AlterReplicaLogDirs); at most one per partition. Writes guarded by
     * the lock on {@link #logs}.
     */
    private final ConcurrentHashMap<TopicPartition, UnifiedLog> futureLogs = new ConcurrentHashMap<>();
    /**
     * Where a partition's log goes when this broker creates it (AlterReplicaLogDirs named a data
     * directory before the partition was hosted here, Kafka's {@code preferredLogDirs}); consumed
     * by {@link #getOrCreateLog}. At most {@link #MAX_PREFERRED_LOG_DIRS} entries.
     */
    private final ConcurrentHashMap<TopicPartition, Path> preferredLogDirs = new ConcurrentHashMap<>();
    /** Logs being created, outside the lock on {@link #logs} (which guards this map), by data directory. */
    private final Map<TopicPartition, Creation> creating = new HashMap<>();
    private final Map<Path, FileChannel> lockChannels = new HashMap<>();
    /** The directories that held a clean-shutdown marker when they were locked (normalised paths). */
    private final java.util.Set<Path> cleanAtStart = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** The broker epoch each directory's clean-shutdown marker held when it was locked (normalised paths; -1 = none readable). */
    private final Map<Path, Long> markerBrokerEpochs = new ConcurrentHashMap<>();
    /** The broker epoch {@link #close} writes into the clean-shutdown markers; -1 until the broker sets it. */
    private volatile long cleanShutdownBrokerEpoch = CleanShutdownMarker.NO_BROKER_EPOCH;
    /** Serialises writers of {@code replication-offset-checkpoint} (the periodic task and close). */
    private final Object highWatermarkCheckpointLock = new Object();
    private final Map<Path, FileLock> locks = new HashMap<>();
    private final AtomicInteger nextDirectory = new AtomicInteger();
    private volatile int loadingRemaining;
    private volatile boolean loaded;
    /** Replaced by {@link #reconfigureCleaner}; guarded by {@code this} for writes. */
    private volatile CleanerConfig cleanerConfig;
    /** Created on first need (a compacted log) when the cleaner is enabled; guarded by {@code this} for creation. */
    private volatile LogCleaner cleaner;
    /** Where an I/O failure in a data directory is reported; an offline directory is skipped by everything here. */
    private final LogDirFailureChannel logDirFailures;
    /** Given to every log: told each flush's duration in nanoseconds (the flush-latency metric). */
    private volatile java.util.function.LongConsumer flushObserver = nanos -> { };

    /** A log manager with Kafka's default cleaner settings. */
    public LogManager(Settings settings, Time time) {
        this(settings, CleanerConfig.defaults(), time);
    }

    public LogManager(Settings settings, CleanerConfig cleanerConfig, Time time) {
        this(settings, cleanerConfig, time, new BackgroundErrors());
    }

    /**
     * @param backgroundErrors where failures of the periodic tasks (retention, flush by time,
     *                         checkpoints, producer expiration) and of other scheduler work are counted
     */
    public LogManager(Settings settings, CleanerConfig cleanerConfig, Time time, BackgroundErrors backgroundErrors) {
        this.settings = settings;
        this.recoveryThreadsPerDataDir = settings.recoveryThreadsPerDataDir();
        this.producerIdExpirationMs = settings.producerIdExpirationMs();
        this.cleanerConfig = cleanerConfig;
        this.time = time;
        this.backgroundErrors = backgroundErrors;
        // One more than log.dirs: a metadata.log.dir outside them may fail too.
        this.logDirFailures = new LogDirFailureChannel(settings.logDirs().size() + 1);
        ScheduledThreadPoolExecutor executor = BackgroundExecutors.singleThreadScheduler("strata-log-scheduler", SCHEDULER_TASK,
            backgroundErrors, LOG);
        // At shutdown, delayed tasks are dropped rather than waited for: file deletions they would
        // have done are finished by the next start (.deleted files, -delete directories).
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.scheduler = executor;
        // Deferred partition.metadata writes of new logs (two fsyncs each), apart from the log
        // scheduler's checkpoints and flushes, which thousands of them would hold up.
        this.topicIdWriter = BackgroundExecutors.singleThreadScheduler("strata-topic-id-writer", TOPIC_ID_WRITER_TASK, backgroundErrors, LOG);
    }

    /**
     * A dynamic {@code num.recovery.threads.per.data.dir}: the threads per data directory of the
     * next loading of the logs (Strata loads them at start-up, where the broker sets the value the
     * metadata log holds before {@link #startup}).
     */
    public void setRecoveryThreadsPerDataDir(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("num.recovery.threads.per.data.dir must be at least 1: threads=" + threads);
        }
        this.recoveryThreadsPerDataDir = threads;
    }

    public int recoveryThreadsPerDataDir() {
        return recoveryThreadsPerDataDir;
    }

    /**
     * A dynamic {@code producer.id.expiration.ms}: every open log's producer state uses it from
     * its next expiry check, and logs created later start with it (Kafka's
     * DynamicProducerStateManagerConfig).
     */
    public void setProducerIdExpirationMs(long expirationMs) {
        if (expirationMs < 1) {
            throw new IllegalArgumentException("producer.id.expiration.ms must be at least 1: expirationMs=" + expirationMs);
        }
        this.producerIdExpirationMs = expirationMs;
        for (UnifiedLog log : logs.values()) {
            log.producerStateManager().setProducerIdExpirationMs(expirationMs);
        }
    }

    public long producerIdExpirationMs() {
        return producerIdExpirationMs;
    }

    public ScheduledExecutorService scheduler() {
        return scheduler;
    }

    /**
     * Locks the data directories and loads every partition log in them.
     *
     * @param configs the configuration of each topic (from the metadata image)
     */
    public void startup(Function<String, LogConfig> configs) throws IOException {
        List<Path> dirs = settings.logDirs();
        List<Future<?>> loads = new ArrayList<>();
        List<ExecutorService> pools = new ArrayList<>();
        lockDirectories();
        try {
            for (Path dir : dirs) {
                loads.addAll(loadDirectory(dir, configs, pools));
            }
            for (Future<?> load : loads) {
                try {
                    load.get();
                } catch (ExecutionException e) {
                    throw new IOException("failed to load a partition log: " + e.getCause().getMessage(), e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while loading logs", e);
                }
            }
        } finally {
            pools.forEach(ExecutorService::shutdown);
        }
        promoteOrphanFutureLogs();
        loaded = true;
        maybeStartCleaner();
        scheduleBackgroundTasks();
        LOG.info("Loaded {} partition log(s) from {}", logs.size(), dirs);
    }

    private List<Future<?>> loadDirectory(Path dir, Function<String, LogConfig> configs, List<ExecutorService> pools) throws IOException {
        boolean cleanShutdown = hadCleanShutdown(dir);
        Map<TopicPartition, Long> recoveryPoints = new OffsetCheckpointFile(dir.resolve(RECOVERY_POINT_CHECKPOINT)).read();
        Map<TopicPartition, Long> startOffsets = new OffsetCheckpointFile(dir.resolve(LOG_START_OFFSET_CHECKPOINT)).read();
        // No file at all: a directory of a Strata version that did not keep one; its logs load their
        // high watermark from the recovery point, as that version did, so an upgrade hides nothing.
        Path highWatermarkFile = dir.resolve(REPLICATION_OFFSET_CHECKPOINT);
        Map<TopicPartition, Long> highWatermarks = Files.exists(highWatermarkFile) ? new OffsetCheckpointFile(highWatermarkFile).read() : null;
        List<Path> partitionDirs = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, Files::isDirectory)) {
            for (Path entry : entries) {
                partitionDirs.add(entry);
            }
        }
        ExecutorService pool = Executors.newFixedThreadPool(recoveryThreadsPerDataDir, task -> {
            Thread thread = new Thread(task, "strata-log-loader-" + dir.getFileName());
            thread.setDaemon(true);
            return thread;
        });
        pools.add(pool);
        loadingRemaining += partitionDirs.size();
        List<Future<?>> futures = new ArrayList<>();
        for (Path partitionDir : partitionDirs) {
            String name = partitionDir.getFileName().toString();
            if (name.endsWith(UnifiedLog.DELETE_DIR_SUFFIX)) {
                futures.add(pool.submit(() -> deleteDirectoryQuietly(partitionDir)));
                continue;
            }
            boolean future = name.endsWith(FUTURE_DIR_SUFFIX);
            TopicPartition topicPartition;
            try {
                topicPartition = TopicPartition.parse(future ? futurePartitionName(name) : name);
            } catch (IllegalArgumentException e) {
                LOG.warn("Ignoring directory {}: not a partition directory", partitionDir);
                loadingRemaining--;
                continue;
            }
            if (topicPartition.topic().equals(METADATA_TOPIC)) {
                loadingRemaining--;
                continue;
            }
            // A partition missing from an existing file loads Kafka's 0, which the log bounds to its start.
            java.util.OptionalLong highWatermark = highWatermarks == null ? java.util.OptionalLong.empty()
                : java.util.OptionalLong.of(highWatermarks.getOrDefault(topicPartition, 0L));
            UnifiedLog.LoadParams params = new UnifiedLog.LoadParams(startOffsets.getOrDefault(topicPartition, 0L),
                recoveryPoints.getOrDefault(topicPartition, 0L), cleanShutdown, producerIdExpirationMs, settings.fsyncOnAck(), highWatermark);
            futures.add(pool.submit(() -> {
                try {
                    UnifiedLog log = UnifiedLog.load(partitionDir, topicPartition, configs.apply(topicPartition.topic()), time, scheduler, params);
                    log.setFlushObserver(flushObserver);
                    log.setRollListener(this::onRoll);
                    registerLoaded(topicPartition, log, future);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } finally {
                    loadingRemaining--;
                }
            }));
        }
        return futures;
    }

    /** {@code orders-3} from {@code orders-3.<uuid>-future}; throws IllegalArgumentException when there is no '.'. */
    private static String futurePartitionName(String dirName) {
        int dot = dirName.lastIndexOf('.');
        if (dot <= 0) {
            throw new IllegalArgumentException("future log directory name is not <topic>-<partition>.<uuid>-future: dirName=" + dirName);
        }
        return dirName.substring(0, dot);
    }

    /**
     * Registers a log found at start-up. Two current logs of one partition (in two data
     * directories) are refused, as Kafka does. A leftover future log is kept as the partition's
     * future log, to be filled further (Kafka resumes the move).
     */
    private void registerLoaded(TopicPartition topicPartition, UnifiedLog log, boolean future) {
        UnifiedLog previous = (future ? futureLogs : logs).putIfAbsent(topicPartition, log);
        if (previous != null) {
            throw new IllegalStateException("Duplicate " + (future ? "future " : "") + "log directories for " + topicPartition + ": "
                + previous.dir() + " and " + log.dir());
        }
    }

    /**
     * A future log without a current log is what a crash inside {@link #replaceCurrentWithFutureLog}
     * leaves (the current directory was already renamed for deletion): it had caught up, so it
     * becomes the current log.
     */
    private void promoteOrphanFutureLogs() throws IOException {
        for (Map.Entry<TopicPartition, UnifiedLog> entry : new ArrayList<>(futureLogs.entrySet())) {
            TopicPartition topicPartition = entry.getKey();
            if (logs.containsKey(topicPartition)) {
                continue;
            }
            UnifiedLog future = entry.getValue();
            UnifiedLog promoted = reopenRenamed(future, future.highWatermark());
            futureLogs.remove(topicPartition);
            logs.put(topicPartition, promoted);
            LOG.info("Promoted the future log of {} in {}: its current log was already replaced", topicPartition, future.dir());
        }
    }

    /** Partition directories still loading (for readiness reporting). */
    public int loadingRemaining() {
        return Math.max(0, loadingRemaining);
    }

    public boolean isLoaded() {
        return loaded;
    }

    /** Sets where every log, loaded or created from now on, reports its flush durations (nanoseconds). */
    public void setFlushObserver(java.util.function.LongConsumer observer) {
        this.flushObserver = observer;
        logs.values().forEach(log -> log.setFlushObserver(observer));
    }

    /**
     * Creates every data directory and takes its lock, or throws naming the directory and the
     * process holding it; the locks taken before a refusal are kept (and released by
     * {@link #close}). Call before anything reads the directories; {@link #startup} calls it too
     * and then finds the locks already held.
     */
    public synchronized void lockDirectories() throws IOException {
        for (Path dir : settings.logDirs()) {
            if (!locks.containsKey(dir)) {
                Files.createDirectories(dir);
                lock(dir);
            }
        }
    }

    /**
     * Creates and locks one more directory, outside {@code log.dirs} (the metadata log's
     * {@code metadata.log.dir}), as {@link #lockDirectories} does; held until {@link #close}.
     * Nothing if this manager holds its lock already.
     */
    public synchronized void lockDirectory(Path dir) throws IOException {
        Path normalized = dir.toAbsolutePath().normalize();
        if (locks.keySet().stream().noneMatch(held -> held.toAbsolutePath().normalize().equals(normalized))) {
            Files.createDirectories(dir);
            lock(dir);
        }
    }

    private void lock(Path dir) throws IOException {
        Path lockFile = dir.resolve(LOCK_FILE);
        // Neither TRUNCATE_EXISTING nor a write before the lock: the holder's name must survive a refused open.
        FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (java.nio.channels.OverlappingFileLockException heldHere) {
            lock = null;
        } catch (IOException e) {
            channel.close();
            throw e;
        }
        if (lock == null) {
            channel.close();
            throw new IOException("Data directory " + dir + " is in use by another process: " + holder(lockFile) + " holds " + lockFile
                + ". Stop that process, or give this one other log.dirs.");
        }
        try {
            ProcessHandle self = ProcessHandle.current();
            byte[] contents = ("pid=" + self.pid() + "\nhost=" + hostName() + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8);
            channel.truncate(0);
            channel.write(java.nio.ByteBuffer.wrap(contents), 0);
            channel.force(true);
        } catch (IOException e) {
            lock.release();
            channel.close();
            throw new IOException("Cannot write the lock file " + lockFile + ": " + e.getMessage(), e);
        }
        lockChannels.put(dir, channel);
        locks.put(dir, lock);
        takeCleanShutdownMarker(dir);
    }

    /**
     * Reads and removes the directory's clean-shutdown marker as soon as this process holds the
     * directory: from here on anything in it may be written (the metadata log appends long before
     * the partition logs load), so a crash must find no marker. The deletion is made durable; a
     * marker that came back after a crash would make a torn log load as clean.
     */
    private void takeCleanShutdownMarker(Path dir) throws IOException {
        Path marker = dir.resolve(CLEAN_SHUTDOWN_FILE);
        if (Files.exists(marker)) {
            Path normalized = dir.toAbsolutePath().normalize();
            cleanAtStart.add(normalized);
            markerBrokerEpochs.put(normalized, CleanShutdownMarker.readBrokerEpoch(marker).orElse(CleanShutdownMarker.NO_BROKER_EPOCH));
            Files.delete(marker);
            try (FileChannel directory = FileChannel.open(dir, StandardOpenOption.READ)) {
                directory.force(true);
            }
        }
    }

    /** Whether {@code dir} held a clean-shutdown marker when this process locked it. */
    public boolean hadCleanShutdown(Path dir) {
        return cleanAtStart.contains(dir.toAbsolutePath().normalize());
    }

    /**
     * The broker epoch of the previous run, as its clean shutdown recorded it (KIP-966: sent as
     * {@code PreviousBrokerEpoch} in BrokerRegistration): present only if every directory of
     * {@code log.dirs} held a readable marker with an epoch when it was locked, all the same epoch,
     * as Kafka's LogManager requires. Empty after an unclean shutdown, for markers of older
     * versions (empty files), or before {@link #lockDirectories}.
     */
    public java.util.OptionalLong previousBrokerEpoch() {
        long epoch = CleanShutdownMarker.NO_BROKER_EPOCH;
        for (Path dir : settings.logDirs()) {
            Long found = markerBrokerEpochs.get(dir.toAbsolutePath().normalize());
            if (found == null || found < 0 || (epoch >= 0 && found != epoch)) {
                return java.util.OptionalLong.empty();
            }
            epoch = found;
        }
        return epoch >= 0 ? java.util.OptionalLong.of(epoch) : java.util.OptionalLong.empty();
    }

    /**
     * The broker epoch that {@link #close} and {@link #writeCleanShutdownMarker(Path)} record in
     * the clean-shutdown markers; the broker sets its current epoch before shutting down (-1, the
     * default, records "unknown").
     */
    public void setCleanShutdownBrokerEpoch(long brokerEpoch) {
        this.cleanShutdownBrokerEpoch = brokerEpoch;
    }

    /**
     * Writes the clean-shutdown marker in a directory whose only log someone else closed (the
     * metadata log of a node whose partition logs never loaded, or one outside {@code log.dirs});
     * {@link #close} writes it in {@code log.dirs} when the partition logs were loaded. Records the
     * epoch of {@link #setCleanShutdownBrokerEpoch}.
     */
    public void writeCleanShutdownMarker(Path dir) throws IOException {
        writeCleanShutdownMarker(dir, cleanShutdownBrokerEpoch);
    }

    /** {@link #writeCleanShutdownMarker(Path)} recording {@code brokerEpoch} (-1: unknown). */
    public void writeCleanShutdownMarker(Path dir, long brokerEpoch) throws IOException {
        CleanShutdownMarker.write(dir.resolve(CLEAN_SHUTDOWN_FILE), brokerEpoch);
    }

    /** Who the lock file says holds it: "pid 123 on host h", or a note that it does not say. */
    static String holder(Path lockFile) {
        try {
            String pid = null;
            String host = null;
            for (String line : Files.readAllLines(lockFile, java.nio.charset.StandardCharsets.UTF_8)) {
                if (line.startsWith("pid=")) {
                    pid = line.substring(4).trim();
                } else if (line.startsWith("host=")) {
                    host = line.substring(5).trim();
                }
            }
            if (pid == null) {
                return "a process that did not write its name (an older version, or this process)";
            }
            return "pid " + pid + (host == null ? "" : " on host " + host);
        } catch (IOException e) {
            return "a process that cannot be named (" + e.getMessage() + ")";
        }
    }

    private static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "unknown";
        }
    }

    /**
     * Every periodic task runs guarded: a run that throws is logged, counted under its task name
     * and the task keeps its schedule (a scheduled executor would drop it for good). Failures of
     * one log inside a pass are counted under the same name and do not stop the pass.
     */
    private void scheduleBackgroundTasks() {
        schedulePeriodic(RETENTION_TASK, settings.retentionCheckIntervalMs(), this::runRetention);
        if (settings.flushCheckIntervalMs() < Long.MAX_VALUE / 2) {
            schedulePeriodic(FLUSH_TASK, settings.flushCheckIntervalMs(), this::flushByTime);
        }
        if (settings.checkpointIntervalMs() > 0) {
            schedulePeriodic(CHECKPOINT_TASK, settings.checkpointIntervalMs(), this::checkpointQuietly);
        }
        if (settings.highWatermarkCheckpointIntervalMs() > 0) {
            schedulePeriodic(HIGH_WATERMARK_CHECKPOINT_TASK, settings.highWatermarkCheckpointIntervalMs(),
                this::checkpointHighWatermarksQuietly);
        }
        schedulePeriodic(PRODUCER_EXPIRATION_TASK, settings.producerIdExpirationCheckIntervalMs(), this::expireProducers);
    }

    private void schedulePeriodic(String task, long intervalMs, Runnable body) {
        scheduler.scheduleWithFixedDelay(backgroundErrors.guard(task, LOG, "the logs of " + settings.logDirs(), body), intervalMs, intervalMs,
            TimeUnit.MILLISECONDS);
    }

    /** Failures of this manager's background tasks, by task. */
    public BackgroundErrors backgroundErrors() {
        return backgroundErrors;
    }

    /**
     * Runs one retention pass over every log; returns the segments deleted. While a cleaner
     * exists, compacted logs go through it ({@link LogCleaner#runRetentionOfCompactedLogs}), which
     * skips a log only while a pass is cleaning it, so retention never races a cleaning and never
     * stops because the cleaner gave up on a partition or a cleaner thread is stuck.
     */
    public int runRetention() {
        // A topic may have been switched to compact since the last pass.
        maybeStartCleaner();
        LogCleaner running = cleaner;
        int deleted = 0;
        for (UnifiedLog log : logs.values()) {
            if (running != null && log.config().compact) {
                continue;
            }
            try {
                deleted += log.deleteOldSegments();
            } catch (IOException e) {
                backgroundErrors.record(RETENTION_TASK);
                reportLogDirFailure(log, "retention of " + log.topicPartition() + " failed", e);
            } catch (RuntimeException e) {
                backgroundErrors.record(RETENTION_TASK);
                LOG.warn("Retention failed for {}", log.topicPartition(), e);
            }
        }
        if (running != null) {
            deleted += running.runRetentionOfCompactedLogs();
        }
        return deleted;
    }

    private void flushByTime() {
        for (UnifiedLog log : logs.values()) {
            try {
                log.maybeFlushByTime();
            } catch (IOException e) {
                backgroundErrors.record(FLUSH_TASK);
                reportLogDirFailure(log, "the time-based flush of " + log.topicPartition() + " failed", e);
            } catch (RuntimeException e) {
                backgroundErrors.record(FLUSH_TASK);
                LOG.warn("Flush failed for {}", log.topicPartition(), e);
            }
        }
    }

    private void expireProducers() {
        long now = time.milliseconds();
        for (UnifiedLog log : logs.values()) {
            // One failing log must neither stop the others nor, by escaping, cancel this
            // periodic task for good (a scheduled executor drops a task that throws).
            try {
                synchronized (log.lock()) {
                    log.producerState().removeExpiredProducers(now);
                }
            } catch (RuntimeException e) {
                backgroundErrors.record(PRODUCER_EXPIRATION_TASK);
                LOG.warn("Expiring idle producers of {} failed; retrying at the next check", log.topicPartition(), e);
            }
        }
    }

    private void checkpointQuietly() {
        try {
            checkpoint();
        } catch (IOException | RuntimeException e) {
            backgroundErrors.record(CHECKPOINT_TASK);
            LOG.warn("Writing offset checkpoints of {} failed; retrying at the next interval", settings.logDirs(), e);
        }
    }

    private void checkpointHighWatermarksQuietly() {
        try {
            checkpointHighWatermarks();
        } catch (IOException | RuntimeException e) {
            backgroundErrors.record(HIGH_WATERMARK_CHECKPOINT_TASK);
            LOG.warn("Writing the high watermark checkpoints of {} failed; retrying at the next interval", settings.logDirs(), e);
        }
    }

    /**
     * Writes {@code replication-offset-checkpoint} in every data directory: the high watermark of
     * each log it hosts (a deleted log is gone from the next file). Serialised with itself.
     */
    public void checkpointHighWatermarks() throws IOException {
        synchronized (highWatermarkCheckpointLock) {
            writeCheckpoints(REPLICATION_OFFSET_CHECKPOINT, UnifiedLog::highWatermark);
        }
    }

    /** Writes the recovery point and log start offset checkpoints of every data directory. */
    public void checkpoint() throws IOException {
        writeCheckpoints(RECOVERY_POINT_CHECKPOINT, UnifiedLog::recoveryPoint);
        writeCheckpoints(LOG_START_OFFSET_CHECKPOINT, UnifiedLog::logStartOffset);
    }

    /**
     * Writes checkpoint file {@code name} in every data directory with {@code offset} of each log
     * it hosts (a log deleted since is left out).
     */
    private void writeCheckpoints(String name, java.util.function.ToLongFunction<UnifiedLog> offset) throws IOException {
        Map<Path, Map<TopicPartition, Long>> offsets = new HashMap<>();
        List<Path> online = onlineLogDirs();
        for (Path dir : online) {
            offsets.put(dir, new HashMap<>());
        }
        List<UnifiedLog> all = new ArrayList<>(logs.values());
        all.addAll(futureLogs.values());
        for (UnifiedLog log : all) {
            Map<TopicPartition, Long> dirOffsets = offsets.get(log.dir().getParent());
            if (dirOffsets == null || log.isClosed() && !Files.exists(log.dir())) {
                continue;
            }
            dirOffsets.put(log.topicPartition(), offset.applyAsLong(log));
        }
        // A directory whose checkpoint cannot be written goes offline; the others' are still written (Kafka's rule).
        for (Path dir : online) {
            try {
                new OffsetCheckpointFile(dir.resolve(name)).write(offsets.get(dir));
            } catch (IOException e) {
                backgroundErrors.record(name.equals(REPLICATION_OFFSET_CHECKPOINT) ? HIGH_WATERMARK_CHECKPOINT_TASK : CHECKPOINT_TASK);
                logDirFailures.maybeAddOfflineLogDir(dir, "writing " + name + " failed", e);
            }
        }
    }

    /** Starts the log cleaner if it is enabled, not yet started, and some log is compacted. */
    public void maybeStartCleaner() {
        if (!cleanerConfig.enabled() || cleaner != null || !loaded) {
            return;
        }
        boolean anyCompacted = logs.values().stream().anyMatch(log -> log.config().compact);
        if (!anyCompacted) {
            return;
        }
        synchronized (this) {
            if (cleaner == null) {
                LogCleaner created = new LogCleaner(cleanerConfig, settings.logDirs(), logs::values, time);
                created.startup();
                cleaner = created;
            }
        }
    }

    /**
     * Applies a dynamic change of the log.cleaner.* settings: kept for a cleaner not yet
     * started, applied by {@link LogCleaner#reconfigure} to a running one (which replaces its
     * threads). log.cleaner.enable is not dynamic: its value here is ignored.
     */
    public synchronized void reconfigureCleaner(CleanerConfig newConfig) {
        CleanerConfig current = cleanerConfig;
        CleanerConfig kept = new CleanerConfig(current.enabled(), newConfig.numThreads(), newConfig.dedupeBufferBytes(),
            newConfig.dedupeBufferLoadFactor(), newConfig.ioBufferBytes(), newConfig.backoffMs(), newConfig.maxIoBytesPerSecond());
        if (kept.equals(current)) {
            return;
        }
        cleanerConfig = kept;
        LogCleaner running = cleaner;
        if (running != null) {
            running.reconfigure(kept);
        }
    }

    /** The cleaner settings in force (the static ones until a dynamic change). */
    public CleanerConfig cleanerConfig() {
        return cleanerConfig;
    }

    /** Wakes the cleaner when a compacted log rolled a segment: its dirty section may now be cleanable. */
    private void onRoll(UnifiedLog log) {
        LogCleaner running = cleaner;
        if (running != null && log.config().compact) {
            running.wakeUp();
        }
    }

    /** The log cleaner, or null while none runs. */
    public LogCleaner cleaner() {
        return cleaner;
    }

    public UnifiedLog getLog(TopicPartition topicPartition) {
        return logs.get(topicPartition);
    }

    public Collection<UnifiedLog> allLogs() {
        return logs.values();
    }

    /** The configured data directories ({@code log.dirs}), in configuration order. */
    public List<Path> logDirs() {
        return settings.logDirs();
    }

    /** The configured data directories that are not offline, in configuration order. */
    public List<Path> onlineLogDirs() {
        List<Path> online = new ArrayList<>();
        for (Path dir : settings.logDirs()) {
            if (!logDirFailures.hasOfflineLogDir(dir)) {
                online.add(dir);
            }
        }
        return online;
    }

    /** Where I/O failures in the data directories are reported (and which directories are offline). */
    public LogDirFailureChannel logDirFailureChannel() {
        return logDirFailures;
    }

    /** Reports an I/O failure of an operation on {@code log}: its data directory goes offline. */
    public void reportLogDirFailure(UnifiedLog log, String message, Throwable cause) {
        logDirFailures.maybeAddOfflineLogDir(log.dir().getParent(), message, cause);
    }

    /**
     * Takes the logs of an offline data directory out of service (Kafka's
     * {@code LogManager.handleLogDirFailure}): every current and future log whose directory is in
     * {@code dir} is removed from this manager and closed without writing anything (no flush, no
     * snapshot, no checkpoint), its cleaning aborted; preferences for the directory are dropped.
     * Nothing is deleted or truncated: what the disk holds is recovered at the next start. Its
     * checkpoints are no longer written and {@link #close} leaves no clean-shutdown marker in it.
     *
     * @return the partitions whose current log lived in {@code dir}
     * @throws IllegalStateException if {@code dir} was not reported offline first
     */
    public List<TopicPartition> handleLogDirFailure(Path dir) {
        if (!logDirFailures.hasOfflineLogDir(dir)) {
            throw new IllegalStateException("Log directory " + dir + " is not offline: offline=" + logDirFailures.offlineLogDirs());
        }
        Path failed = LogDirFailureChannel.normalize(dir);
        List<UnifiedLog> closing = new ArrayList<>();
        List<TopicPartition> removed = new ArrayList<>();
        synchronized (logs) {
            for (UnifiedLog log : new ArrayList<>(logs.values())) {
                if (LogDirFailureChannel.normalize(log.dir().getParent()).equals(failed) && logs.remove(log.topicPartition(), log)) {
                    closing.add(log);
                    removed.add(log.topicPartition());
                }
            }
            for (UnifiedLog log : new ArrayList<>(futureLogs.values())) {
                if (LogDirFailureChannel.normalize(log.dir().getParent()).equals(failed) && futureLogs.remove(log.topicPartition(), log)) {
                    closing.add(log);
                }
            }
            preferredLogDirs.values().removeIf(preferred -> LogDirFailureChannel.normalize(preferred).equals(failed));
        }
        LogCleaner running = cleaner;
        for (UnifiedLog log : closing) {
            if (running != null) {
                running.abortCleaning(log.topicPartition(), log.dir().getParent());
            }
            log.closeHandlers();
        }
        LOG.error("Log directory {} is offline: closed {} log(s) in it without writing; partitions {} are offline on this broker. "
            + "Free space or replace the disk, then restart the broker", failed, closing.size(), removed);
        return removed;
    }

    /** The future log of a partition (a move between data directories in progress), or null. */
    public UnifiedLog getFutureLog(TopicPartition topicPartition) {
        return futureLogs.get(topicPartition);
    }

    /** Every future log. */
    public Collection<UnifiedLog> allFutureLogs() {
        return futureLogs.values();
    }

    /**
     * The future log of a partition in data directory {@code targetDir}, created empty there
     * (named {@code <topic>-<p>.<uuid>-future}, starting at the current log's start offset) if it
     * does not exist. The partition must have a current log in another directory.
     *
     * @throws IllegalArgumentException if {@code targetDir} is not one of {@link #logDirs()}
     * @throws IllegalStateException    if there is no current log, it already lives in
     *                                  {@code targetDir}, or a future log exists in another directory
     */
    public UnifiedLog getOrCreateFutureLog(TopicPartition topicPartition, Path targetDir, Optional<UUID> topicId, LogConfig config)
        throws IOException {
        Path target = configuredDir(targetDir);
        synchronized (logs) {
            UnifiedLog current = logs.get(topicPartition);
            if (current == null) {
                throw new IllegalStateException("No current log for " + topicPartition + " to copy into " + target);
            }
            if (current.dir().getParent().equals(target)) {
                throw new IllegalStateException("The log of " + topicPartition + " already lives in " + target);
            }
            UnifiedLog existing = futureLogs.get(topicPartition);
            if (existing != null) {
                if (!existing.dir().getParent().equals(target)) {
                    throw new IllegalStateException("The future log of " + topicPartition + " is in " + existing.dir().getParent()
                        + ", not " + target);
                }
                return existing;
            }
            String name = topicPartition + "." + UUID.randomUUID().toString().replace("-", "") + FUTURE_DIR_SUFFIX;
            UnifiedLog future = createLog(target.resolve(name), topicPartition, topicId, config);
            try {
                future.truncateFullyAndStartAt(current.logStartOffset());
            } catch (IOException | RuntimeException e) {
                future.close();
                deleteDirectoryQuietly(future.dir());
                throw e;
            }
            futureLogs.put(topicPartition, future);
            LOG.info("Created future log for {} in {}", topicPartition, future.dir());
            return future;
        }
    }

    /**
     * Records that the log of {@code topicPartition} is to be created in {@code dir} when this
     * broker creates it, unless its current or future log already lives there (Kafka's
     * {@code maybeUpdatePreferredLogDir}). A later call replaces an earlier preference.
     *
     * @return whether the preference is recorded (false: already there, or the map is full)
     * @throws IllegalArgumentException if {@code dir} is not one of {@link #logDirs()}
     */
    public boolean maybeUpdatePreferredLogDir(TopicPartition topicPartition, Path dir) {
        Path target = configuredDir(dir);
        synchronized (logs) {
            UnifiedLog current = logs.get(topicPartition);
            UnifiedLog future = futureLogs.get(topicPartition);
            if (current != null && current.dir().getParent().equals(target) || future != null && future.dir().getParent().equals(target)) {
                return false;
            }
            if (!preferredLogDirs.containsKey(topicPartition) && preferredLogDirs.size() >= MAX_PREFERRED_LOG_DIRS) {
                LOG.warn("Not recording {} as the preferred log directory of {}: {} preferences are pending already", target, topicPartition,
                    MAX_PREFERRED_LOG_DIRS);
                return false;
            }
            preferredLogDirs.put(topicPartition, target);
            return true;
        }
    }

    /** The data directory recorded for the log of {@code topicPartition} before it exists here, or null. */
    public Path preferredLogDir(TopicPartition topicPartition) {
        return preferredLogDirs.get(topicPartition);
    }

    /**
     * Whether {@code dir} is one of {@link #logDirs()} (compared as normalised absolute paths;
     * a relative path never matches, as Kafka wants the absolute path of a configured directory).
     */
    public boolean isConfiguredLogDir(Path dir) {
        if (!dir.isAbsolute()) {
            return false;
        }
        Path wanted = dir.normalize();
        for (Path configured : settings.logDirs()) {
            if (configured.toAbsolutePath().normalize().equals(wanted)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a configured data directory can be used: it is not offline ({@link
     * #logDirFailureChannel}), exists, is a writable directory and its volume can be read.
     *
     * @throws IllegalArgumentException if {@code dir} is not one of {@link #logDirs()}
     */
    public boolean isLogDirOnline(Path dir) {
        Path target = configuredDir(dir);
        if (logDirFailures.hasOfflineLogDir(target)) {
            return false;
        }
        if (!Files.isDirectory(target) || !Files.isWritable(target)) {
            return false;
        }
        try {
            Files.getFileStore(target);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** {@code dir} as spelled in {@link #logDirs()}, matched by normalised absolute path. */
    private Path configuredDir(Path dir) {
        Path wanted = dir.toAbsolutePath().normalize();
        for (Path configured : settings.logDirs()) {
            if (configured.toAbsolutePath().normalize().equals(wanted)) {
                return configured;
            }
        }
        throw new IllegalArgumentException("not a configured log directory: dir=" + dir + ", logDirs=" + settings.logDirs());
    }

    /**
     * Makes the future log of a partition its current log: the old directory is renamed to
     * {@code <name>.<uuid>-delete} (deleted in the background, or at the next start), then the
     * future directory to {@code <topic>-<p>}, and the future log takes the current one's high
     * watermark. The caller holds the partition's lock so that nothing is appended meanwhile; the
     * future log must have caught up (same log end offset), so no acknowledged record is lost. A
     * crash between the two renames leaves only the future directory, which the next start loads
     * as the partition's future log with no current log; {@link #promoteOrphanFutureLogs} makes it current.
     *
     * @return the new current log (a new instance: callers holding the old or the future log re-fetch it)
     * @throws IllegalStateException if there is no current or future log, or the future one lags
     */
    public UnifiedLog replaceCurrentWithFutureLog(TopicPartition topicPartition) throws IOException {
        UnifiedLog current;
        UnifiedLog future;
        synchronized (logs) {
            current = logs.get(topicPartition);
            future = futureLogs.get(topicPartition);
            if (current == null || future == null) {
                throw new IllegalStateException("Cannot swap the logs of " + topicPartition + ": current=" + current + ", future=" + future);
            }
            if (future.logEndOffset() != current.logEndOffset()) {
                throw new IllegalStateException("The future log of " + topicPartition + " lags: futureLogEndOffset=" + future.logEndOffset()
                    + ", currentLogEndOffset=" + current.logEndOffset());
            }
            LogCleaner running = cleaner;
            if (running != null) {
                running.abortCleaning(topicPartition, current.dir().getParent());
            }
            inheritState(current, future);
            List<EpochEntry> history = current.leaderEpochCache().epochEntries();
            current.flush(current.logEndOffset());
            future.flush(future.logEndOffset());
            current.close();
            current.renameDir(topicPartition + "." + UUID.randomUUID().toString().replace("-", "") + UnifiedLog.DELETE_DIR_SUFFIX);
            UnifiedLog moved = reopenRenamed(future, current.highWatermark());
            // Loading drops entries starting at the log end (a restart's rule); the running partition keeps its epoch.
            for (EpochEntry entry : history) {
                if (entry.startOffset() >= moved.logEndOffset()) {
                    moved.leaderEpochCache().assign(entry.epoch(), entry.startOffset());
                }
            }
            futureLogs.remove(topicPartition);
            logs.put(topicPartition, moved);
            future = moved;
        }
        Path renamed = current.dir();
        scheduler.schedule(() -> deleteDirectoryQuietly(renamed), current.config().fileDeleteDelayMs, TimeUnit.MILLISECONDS);
        LOG.info("Replaced the log of {} with its future log in {}", topicPartition, future.dir());
        return future;
    }

    /**
     * What the future log cannot learn from the copied batches, taken from the current log just
     * before the swap (both end at the same offset): the leader-epoch history (an epoch a leader
     * assigned with no record behind it yet exists only in the current log's cache, KAFKA-15608 /
     * KAFKA-20961), and a log start offset moved by DeleteRecords or retention after the copy.
     */
    private static void inheritState(UnifiedLog current, UnifiedLog future) throws IOException {
        List<EpochEntry> history = current.leaderEpochCache().epochEntries();
        if (!history.equals(future.leaderEpochCache().epochEntries())) {
            future.leaderEpochCache().clearAndFlush();
            for (EpochEntry entry : history) {
                future.leaderEpochCache().assign(entry.epoch(), entry.startOffset());
            }
        }
        future.updateHighWatermark(current.highWatermark());
        if (current.logStartOffset() > future.logStartOffset()) {
            future.maybeIncrementLogStartOffset(current.logStartOffset());
        }
    }

    /**
     * Closes a (flushed) future log, renames its directory to {@code <topic>-<p>} in the same data
     * directory and opens it again there (an open log's segment files keep their old paths).
     */
    private UnifiedLog reopenRenamed(UnifiedLog future, long highWatermark) throws IOException {
        TopicPartition topicPartition = future.topicPartition();
        future.flush(future.logEndOffset());
        long startOffset = future.logStartOffset();
        long endOffset = future.logEndOffset();
        future.close();
        Path target = future.dir().resolveSibling(topicPartition.toString());
        Files.move(future.dir(), target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        UnifiedLog reopened = UnifiedLog.load(target, topicPartition, future.config(), time, scheduler, new UnifiedLog.LoadParams(startOffset,
            endOffset, true, producerIdExpirationMs, settings.fsyncOnAck(), java.util.OptionalLong.of(highWatermark)));
        reopened.setFlushObserver(flushObserver);
        reopened.setRollListener(this::onRoll);
        return reopened;
    }

    /**
     * Drops the future log of a partition (a cancelled move): closes it and deletes its directory.
     * Does nothing when there is none.
     */
    public void abortAndDeleteFutureLog(TopicPartition topicPartition) throws IOException {
        UnifiedLog future;
        synchronized (logs) {
            future = futureLogs.remove(topicPartition);
        }
        if (future == null) {
            return;
        }
        future.close();
        future.renameDir(topicPartition + "." + UUID.randomUUID().toString().replace("-", "") + UnifiedLog.DELETE_DIR_SUFFIX);
        Path renamed = future.dir();
        scheduler.schedule(() -> deleteDirectoryQuietly(renamed), future.config().fileDeleteDelayMs, TimeUnit.MILLISECONDS);
        LOG.info("Deleted the future log of {}", topicPartition);
    }

    /**
     * The log of a partition, created in the least loaded data directory if it does not exist.
     * Thread-safe: logs of different partitions are created in parallel (the directory, segment
     * files and fsyncs of one are not held up by another's); a caller that asks for a partition
     * whose log another thread is creating waits for that one.
     */
    public UnifiedLog getOrCreateLog(TopicPartition topicPartition, Optional<UUID> topicId, LogConfig config) throws IOException {
        CompletableFuture<UnifiedLog> creation;
        Path parent;
        synchronized (logs) {
            UnifiedLog existing = logs.get(topicPartition);
            if (existing != null) {
                return existing;
            }
            Creation running = creating.get(topicPartition);
            if (running != null) {
                creation = running.log();
                parent = null;
            } else {
                Path preferred = preferredLogDirs.remove(topicPartition);
                parent = preferred != null ? preferred : chooseDirectory();
                creation = new CompletableFuture<>();
                creating.put(topicPartition, new Creation(parent, creation));
            }
        }
        if (parent == null) {
            return awaitCreation(topicPartition, creation);
        }
        UnifiedLog log;
        try {
            log = createLog(parent.resolve(topicPartition.toString()), topicPartition, topicId, config);
        } catch (IOException | RuntimeException e) {
            synchronized (logs) {
                creating.remove(topicPartition);
            }
            creation.completeExceptionally(e);
            throw e;
        }
        synchronized (logs) {
            creating.remove(topicPartition);
            logs.put(topicPartition, log);
        }
        creation.complete(log);
        LOG.info("Created log for {} in {}", topicPartition, log.dir());
        if (config.compact) {
            maybeStartCleaner();
        }
        return log;
    }

    private UnifiedLog createLog(Path dir, TopicPartition topicPartition, Optional<UUID> topicId, LogConfig config) throws IOException {
        UnifiedLog log = UnifiedLog.load(dir, topicPartition, config, time, scheduler,
            new UnifiedLog.LoadParams(0L, 0L, true, producerIdExpirationMs, settings.fsyncOnAck(), java.util.OptionalLong.of(0L)));
        try {
            if (topicId.isPresent()) {
                // A background write that fails takes the directory offline, as any log I/O failure does.
                log.assignTopicIdDeferred(topicId.get(), write -> topicIdWriter.execute(() -> {
                    try {
                        write.run();
                    } catch (java.io.UncheckedIOException e) {
                        reportLogDirFailure(log, "writing " + io.strata.storage.checkpoint.PartitionMetadataFile.FILE_NAME + " of "
                            + topicPartition + " failed", e.getCause());
                    }
                }));
            }
        } catch (IOException | RuntimeException e) {
            log.close();
            throw e;
        }
        log.setFlushObserver(flushObserver);
        log.setRollListener(this::onRoll);
        return log;
    }

    private static UnifiedLog awaitCreation(TopicPartition topicPartition, CompletableFuture<UnifiedLog> creation) throws IOException {
        try {
            return creation.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while another thread created the log of " + topicPartition);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException("creating the log of " + topicPartition + " failed", e.getCause());
        }
    }

    private Path chooseDirectory() throws IOException {
        List<Path> dirs = onlineLogDirs();
        if (dirs.isEmpty()) {
            throw new IOException("No online log directory to create a log in: offline=" + logDirFailures.offlineLogDirs());
        }
        if (dirs.size() == 1) {
            return dirs.get(0);
        }
        Map<Path, Integer> counts = new HashMap<>();
        dirs.forEach(dir -> counts.put(dir, 0));
        for (UnifiedLog log : logs.values()) {
            counts.computeIfPresent(log.dir().getParent(), (dir, count) -> count + 1);
        }
        for (Creation creation : creating.values()) {
            counts.computeIfPresent(creation.parent(), (dir, count) -> count + 1);
        }
        int start = nextDirectory.getAndIncrement();
        Path best = dirs.get(Math.floorMod(start, dirs.size()));
        for (Path dir : dirs) {
            if (counts.get(dir) < counts.get(best)) {
                best = dir;
            }
        }
        return best;
    }

    /**
     * Removes a partition's log: the directory is renamed to {@code <name>.<id>-delete} at once
     * (so a restart finishes the job) and deleted in the background.
     */
    public void deleteLog(TopicPartition topicPartition) throws IOException {
        UnifiedLog log;
        synchronized (logs) {
            log = logs.remove(topicPartition);
        }
        if (log == null) {
            return;
        }
        LogCleaner running = cleaner;
        if (running != null) {
            running.abortCleaning(topicPartition, log.dir().getParent());
        }
        abortAndDeleteFutureLog(topicPartition);
        log.close();
        String deletedName = topicPartition + "." + UUID.randomUUID().toString().replace("-", "") + UnifiedLog.DELETE_DIR_SUFFIX;
        log.renameDir(deletedName);
        Path renamed = log.dir();
        scheduler.schedule(() -> deleteDirectoryQuietly(renamed), log.config().fileDeleteDelayMs, TimeUnit.MILLISECONDS);
        LOG.info("Deleted log of {}", topicPartition);
    }

    private static void deleteDirectoryQuietly(Path dir) {
        try (var files = Files.walk(dir)) {
            for (Path path : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            LOG.warn("Could not delete {}", dir, e);
        }
    }

    private void awaitSchedulerTermination() {
        try {
            if (!scheduler.awaitTermination(SCHEDULER_SHUTDOWN_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                LOG.warn("A background log task still runs {} ms after shutdown began; closing the logs anyway",
                    SCHEDULER_SHUTDOWN_TIMEOUT_MS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Clean shutdown: flush and close every log, write checkpoints and the clean-shutdown
     * marker, release the directory locks.
     */
    @Override
    public void close() throws IOException {
        LogCleaner running = cleaner;
        if (running != null) {
            running.close();
        }
        // Never interrupt the scheduler: a thread interrupted inside FileChannel I/O (a background
        // segment flush) closes that channel for good, and the flush below would fail on it.
        // Pending tasks are dropped; a running one is waited for.
        scheduler.shutdown();
        topicIdWriter.shutdown(); // what it has not written yet, each log's close writes
        awaitSchedulerTermination();
        IOException failure = null;
        List<UnifiedLog> all = new ArrayList<>(logs.values());
        all.addAll(futureLogs.values());
        for (UnifiedLog log : all) {
            if (logDirFailures.hasOfflineLogDir(log.dir().getParent())) {
                log.closeHandlers(); // offline but not yet handled: its disk is not written again
                continue;
            }
            try {
                log.flush(log.logEndOffset());
                log.close();
            } catch (IOException e) {
                failure = e;
                LOG.error("Failed to close {}", log.topicPartition(), e);
            }
        }
        if (loaded) {
            checkpoint();
            checkpointHighWatermarks();
            if (failure == null) {
                // An offline directory gets no marker: its logs were closed unflushed, the next start recovers them.
                for (Path dir : onlineLogDirs()) {
                    writeCleanShutdownMarker(dir, cleanShutdownBrokerEpoch);
                }
            }
        }
        for (Map.Entry<Path, FileLock> lock : locks.entrySet()) {
            lock.getValue().release();
            lockChannels.get(lock.getKey()).close();
        }
        locks.clear();
        lockChannels.clear();
        if (failure != null) {
            throw failure;
        }
    }

    /** Whether every log this manager opens fsyncs before acknowledging ({@code strata.fsync=on-ack}). */
    public boolean fsyncOnAck() {
        return settings.fsyncOnAck();
    }
}
