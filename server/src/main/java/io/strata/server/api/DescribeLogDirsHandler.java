package io.strata.server.api;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.DescribeLogDirsRequestData;
import io.strata.protocol.message.DescribeLogDirsResponseData;
import io.strata.server.network.Request;
import io.strata.server.replica.Partition;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * DescribeLogDirs: every configured data directory (absolute path) with the partition logs in
 * it: size in bytes, offset lag and isFutureKey. For a current log the lag is the high watermark
 * minus the log end, never negative (0 on a leader; -1 for a log no hosted partition owns); a
 * future log (a move between directories, AlterReplicaLogDirs) is listed with isFutureKey true
 * and lag = current log end minus future log end, never negative, as Kafka's
 * ReplicaManager.describeLogDirs. v4+ adds the volume's total and usable bytes, v5 whether the directory is
 * cordoned (never, here). A directory that is offline (an I/O failure took it out of service) or
 * cannot be read is answered KAFKA_STORAGE_ERROR with no partitions.
 *
 * <p>As in Kafka, with a topic filter every topic of a directory is listed but only the
 * requested partitions appear under it; the metadata log ({@code __cluster_metadata}) is not
 * a partition log and is not listed.
 */
final class DescribeLogDirsHandler implements ApiHandler {
    private static final Logger LOG = LoggerFactory.getLogger(DescribeLogDirsHandler.class);
    private final BrokerContext context;

    DescribeLogDirsHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        DescribeLogDirsRequestData body = request.body(DescribeLogDirsRequestData.class);
        Set<TopicPartition> requested = null;
        if (body.topics() != null) {
            requested = new HashSet<>();
            for (DescribeLogDirsRequestData.DescribableLogDirTopic topic : body.topics()) {
                for (int partition : topic.partitions()) {
                    requested.add(new TopicPartition(topic.topic(), partition));
                }
            }
        }
        Map<Path, List<UnifiedLog>> logsByDir = new LinkedHashMap<>();
        LogManager logManager = context.replicaManager().logManager();
        for (UnifiedLog log : logManager.allLogs()) {
            logsByDir.computeIfAbsent(normalize(log.dir().getParent()), dir -> new ArrayList<>()).add(log);
        }
        for (UnifiedLog log : logManager.allFutureLogs()) {
            logsByDir.computeIfAbsent(normalize(log.dir().getParent()), dir -> new ArrayList<>()).add(log);
        }
        DescribeLogDirsResponseData response = new DescribeLogDirsResponseData().setErrorCode(ErrorCode.NONE.code());
        for (Path configured : context.config().logDirs()) {
            Path dir = normalize(configured);
            response.results().add(describe(dir, logsByDir.getOrDefault(dir, List.of()), requested));
        }
        request.respond(response);
    }

    private static Path normalize(Path dir) {
        return dir.toAbsolutePath().normalize();
    }

    private DescribeLogDirsResponseData.DescribeLogDirsResult describe(Path dir, List<UnifiedLog> logs, Set<TopicPartition> requested) {
        DescribeLogDirsResponseData.DescribeLogDirsResult result = new DescribeLogDirsResponseData.DescribeLogDirsResult()
            .setLogDir(dir.toString()).setIsCordoned(false);
        if (context.replicaManager().logManager().logDirFailureChannel().hasOfflineLogDir(dir)) {
            // Kafka's describeLogDirs: an offline directory is answered KAFKA_STORAGE_ERROR with no partitions.
            return result.setErrorCode(ErrorCode.KAFKA_STORAGE_ERROR.code());
        }
        try {
            FileStore store = Files.getFileStore(dir);
            result.setTotalBytes(nonNegative(store.getTotalSpace())).setUsableBytes(nonNegative(store.getUsableSpace()));
        } catch (IOException e) {
            LOG.warn("Could not read the volume of log directory {}", dir, e);
            return result.setErrorCode(ErrorCode.KAFKA_STORAGE_ERROR.code());
        }
        Map<String, DescribeLogDirsResponseData.DescribeLogDirsTopic> topics = new TreeMap<>();
        for (UnifiedLog log : logs) {
            TopicPartition topicPartition = log.topicPartition();
            DescribeLogDirsResponseData.DescribeLogDirsTopic topic = topics.computeIfAbsent(topicPartition.topic(),
                name -> new DescribeLogDirsResponseData.DescribeLogDirsTopic().setName(name));
            if (requested != null && !requested.contains(topicPartition)) {
                continue;
            }
            boolean future = context.replicaManager().logManager().getFutureLog(topicPartition) == log;
            topic.partitions().add(new DescribeLogDirsResponseData.DescribeLogDirsPartition().setPartitionIndex(topicPartition.partition())
                .setPartitionSize(log.size()).setOffsetLag(future ? futureOffsetLag(topicPartition, log) : offsetLag(topicPartition, log))
                .setIsFutureKey(future));
        }
        result.setTopics(new ArrayList<>(topics.values()));
        return result.setErrorCode(ErrorCode.NONE.code());
    }

    private long offsetLag(TopicPartition topicPartition, UnifiedLog log) {
        Partition partition = context.replicaManager().partition(topicPartition);
        if (partition == null || partition.log() != log) {
            return -1L;
        }
        return Math.max(log.highWatermark() - log.logEndOffset(), 0L);
    }

    /** Current log end minus future log end, never negative (Kafka's lag of a future replica). */
    private long futureOffsetLag(TopicPartition topicPartition, UnifiedLog future) {
        UnifiedLog current = context.replicaManager().logManager().getLog(topicPartition);
        if (current == null) {
            return 0L;
        }
        return Math.max(current.logEndOffset() - future.logEndOffset(), 0L);
    }

    /** Filesystems larger than 8 EiB report a negative size; Kafka reports Long.MAX_VALUE. */
    private static long nonNegative(long bytes) {
        return bytes < 0 ? Long.MAX_VALUE : bytes;
    }
}
