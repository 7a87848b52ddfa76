package io.strata.server.replica;

import io.strata.metadata.TopicImage;
import io.strata.protocol.ErrorCode;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * AlterReplicaLogDirs on this broker (Kafka's {@code ReplicaManager.alterReplicaLogDirs}): for
 * each partition and target data directory, in Kafka's order of checks:
 * <ol>
 *   <li>a topic name too long for the future log's directory name (over 255 characters,
 *       KAFKA-4893) → INVALID_TOPIC_EXCEPTION;</li>
 *   <li>a path that is not one of {@code log.dirs} (compared as normalised absolute paths; a
 *       relative path never matches) → LOG_DIR_NOT_FOUND;</li>
 *   <li>a directory that cannot be used ({@link LogManager#isLogDirOnline}) → KAFKA_STORAGE_ERROR;</li>
 *   <li>a move of the partition to another directory in progress → aborted, its future log deleted;</li>
 *   <li>the directory is recorded as the partition's preferred one, used when its log is created
 *       here later (a reassignment to this broker);</li>
 *   <li>the partition not hosted here → REPLICA_NOT_AVAILABLE when the cluster has it (Kafka maps
 *       its NOT_LEADER_OR_FOLLOWER to this code for compatibility), UNKNOWN_TOPIC_OR_PARTITION
 *       when it does not;</li>
 *   <li>its log already in that directory, or a future log there → NONE, nothing more;</li>
 *   <li>otherwise a future log is created there, the {@link LogDirMover} copies it and swaps it
 *       in → NONE (the answer does not wait for the move).</li>
 * </ol>
 * An I/O error while creating the future log answers KAFKA_STORAGE_ERROR.
 *
 * <p>Thread-safety: requests are serialised on this object (Kafka's {@code replicaStateChangeLock}).
 */
public final class ReplicaLogDirs {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaLogDirs.class);
    /** Longest file name most filesystems allow: a future log's directory name must fit (KAFKA-4893). */
    static final int MAX_DIR_NAME_LENGTH = 255;
    /** {@code .<32 hex digits>-future} after {@code <topic>-<partition>}. */
    private static final int FUTURE_SUFFIX_LENGTH = 1 + 32 + LogManager.FUTURE_DIR_SUFFIX.length();

    private final ReplicaManager replicaManager;
    private final LogDirMover mover;

    public ReplicaLogDirs(ReplicaManager replicaManager, LogDirMover mover) {
        this.replicaManager = Objects.requireNonNull(replicaManager, "replicaManager");
        this.mover = Objects.requireNonNull(mover, "mover");
    }

    /** The answer for each partition, in the order given. */
    public synchronized Map<TopicPartition, ErrorCode> alterReplicaLogDirs(Map<TopicPartition, String> partitionDirs) {
        Map<TopicPartition, ErrorCode> results = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, String> entry : partitionDirs.entrySet()) {
            TopicPartition topicPartition = entry.getKey();
            ErrorCode error;
            try {
                error = alter(topicPartition, entry.getValue());
            } catch (IOException e) {
                LOG.error("Could not move {} to {}", topicPartition, entry.getValue(), e);
                error = ErrorCode.KAFKA_STORAGE_ERROR;
            }
            if (error != ErrorCode.NONE) {
                LOG.warn("Unable to alter the log dir of {} to {}: {}", topicPartition, entry.getValue(), error);
            }
            results.put(topicPartition, error);
        }
        return results;
    }

    private ErrorCode alter(TopicPartition topicPartition, String path) throws IOException {
        if (topicPartition.toString().length() + FUTURE_SUFFIX_LENGTH > MAX_DIR_NAME_LENGTH) {
            return ErrorCode.INVALID_TOPIC_EXCEPTION;
        }
        LogManager logManager = replicaManager.logManager();
        Path dir;
        try {
            dir = Path.of(path);
        } catch (InvalidPathException e) {
            return ErrorCode.LOG_DIR_NOT_FOUND;
        }
        if (!logManager.isConfiguredLogDir(dir)) {
            return ErrorCode.LOG_DIR_NOT_FOUND;
        }
        if (!logManager.isLogDirOnline(dir)) {
            return ErrorCode.KAFKA_STORAGE_ERROR;
        }
        Path target = dir.normalize();
        Partition partition = replicaManager.partition(topicPartition);
        UnifiedLog future = logManager.getFutureLog(topicPartition);
        if (partition != null && future != null && !sameDir(future, target)) {
            mover.abort(topicPartition); // another target: the copy so far is dropped, as Kafka's removeFutureLocalReplica
        }
        logManager.maybeUpdatePreferredLogDir(topicPartition, target);
        if (partition == null) {
            return inImage(topicPartition) ? ErrorCode.REPLICA_NOT_AVAILABLE : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        }
        UnifiedLog current = partition.log();
        if (sameDir(current, target) || logManager.getFutureLog(topicPartition) != null) {
            return ErrorCode.NONE;
        }
        logManager.getOrCreateFutureLog(topicPartition, target, Optional.ofNullable(partition.topicId()), current.config());
        mover.wakeup();
        return ErrorCode.NONE;
    }

    private static boolean sameDir(UnifiedLog log, Path target) {
        return log.dir().getParent().toAbsolutePath().normalize().equals(target);
    }

    private boolean inImage(TopicPartition topicPartition) {
        TopicImage topic = replicaManager.image().topic(topicPartition.topic());
        return topic != null && topic.partition(topicPartition.partition()) != null;
    }
}
