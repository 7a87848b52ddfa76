package io.strata.storage;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * Opens a partition directory into a {@link UnifiedLog}:
 * <ol>
 *   <li>finishes or rolls back interrupted operations: {@code .deleted} files are removed (the
 *       delete had been decided), {@code .cleaned} files are removed (the compaction had not been
 *       committed), {@code .swap} log files are renamed into place (the compaction had been
 *       committed), the segments the swap replaced but had not been renamed {@code .deleted} yet
 *       are deleted, and the swapped segment's indexes are dropped, to be rebuilt from it;
 *       {@code .tmp} files are removed;</li>
 *   <li>opens every segment; an index that is missing or fails its sanity check is rebuilt;</li>
 *   <li>after an unclean shutdown, recovers every segment from the one holding the recovery
 *       point: validates batch by batch, truncates at the first invalid byte and deletes every
 *       later segment;</li>
 *   <li>restores the leader epoch cache and the producer state (from the newest snapshot plus
 *       the batches after it).</li>
 * </ol>
 */
final class LogLoader {
    private static final Logger LOG = LoggerFactory.getLogger(LogLoader.class);

    private final UnifiedLog log;
    private final UnifiedLog.LoadParams params;

    LogLoader(UnifiedLog log, UnifiedLog.LoadParams params) {
        this.log = log;
        this.params = params;
    }

    void load() throws IOException {
        Path dir = log.dir();
        cleanLeftovers(dir);
        ConcurrentSkipListMap<Long, LogSegment> segments = log.segmentMap();
        TreeSet<Long> needsRecovery = new TreeSet<>();
        for (long baseOffset : segmentBaseOffsets(dir)) {
            boolean indexesExisted = Files.exists(LogSegment.offsetIndexFile(dir, baseOffset, ""))
                && Files.exists(LogSegment.timeIndexFile(dir, baseOffset, ""));
            LogSegment segment = LogSegment.open(dir, baseOffset, log.config(), log.time(), log.newRollJitterMs(), "");
            segments.put(baseOffset, segment);
            if (!indexesExisted && segment.size() > 0) {
                needsRecovery.add(baseOffset);
            } else {
                try {
                    segment.offsetIndex().sanityCheck();
                    segment.timeIndex().sanityCheck();
                    segment.txnIndex().sanityCheck();
                } catch (CorruptIndexException e) {
                    if (segment.size() == 0) {
                        // An empty segment's preallocated index after an unclean stop: zeros, nothing to lose, rebuilt at no cost.
                        LOG.debug("Resetting the indexes of empty {}: {}", segment, e.getMessage());
                    } else {
                        LOG.warn("Rebuilding the indexes of {}: {}", segment, e.getMessage());
                    }
                    needsRecovery.add(baseOffset);
                }
            }
        }
        if (segments.isEmpty()) {
            long start = Math.max(0, params.checkpointedLogStartOffset());
            segments.put(start, LogSegment.open(dir, start, log.config(), log.time(), log.newRollJitterMs(), ""));
        }
        long recoveryPoint = params.checkpointedRecoveryPoint();
        if (!params.hadCleanShutdown()) {
            Map.Entry<Long, LogSegment> floor = segments.floorEntry(Math.max(recoveryPoint, 0));
            long firstUnflushed = floor == null ? segments.firstKey() : floor.getKey();
            needsRecovery.addAll(segments.tailMap(firstUnflushed, true).keySet());
        }
        recover(segments, needsRecovery);

        LogSegment active = segments.lastEntry().getValue();
        // Opening re-extends every index to its preallocated size. Only the active segment's may
        // stay so (as in Kafka): if the process dies, an inactive segment's index must still be
        // exactly its entries, or it fails its sanity check and the next start rebuilds every
        // index of the log instead of recovering from the recovery point.
        for (LogSegment inactive : segments.headMap(active.baseOffset(), false).values()) {
            inactive.offsetIndex().trimToValidSize();
            inactive.timeIndex().trimToValidSize();
        }
        active.resizeIndexes(log.config().segmentIndexBytes);
        long logEndOffset = active.readNextOffset();
        long logStartOffset = Math.max(params.checkpointedLogStartOffset(), segments.firstKey());
        if (logStartOffset > logEndOffset) {
            logStartOffset = logEndOffset;
        }
        LogOffsetMetadata logEnd = new LogOffsetMetadata(logEndOffset, active.baseOffset(), active.size());
        // A recovered log was validated but not fsynced by recovery: flush it before trusting it.
        if (!needsRecovery.isEmpty()) {
            for (long baseOffset : needsRecovery) {
                LogSegment segment = segments.get(baseOffset);
                if (segment != null) {
                    segment.flush();
                }
            }
            recoveryPoint = logEndOffset;
        }
        log.initialize(logStartOffset, Math.min(Math.max(recoveryPoint, logStartOffset), logEndOffset), logEnd,
            params.checkpointedHighWatermark());
        log.epochCache().truncateFromEnd(logEndOffset);
        log.epochCache().truncateFromStart(logStartOffset);
        log.rebuildProducerState();
        LOG.debug("Loaded {}", log);
    }

    /**
     * Recovers segments in offset order. Producer state is brought up to the first recovered
     * segment (newest snapshot at or before it, plus the batches in between) and then carried
     * through the recovery, so aborted transactions are written back to the rebuilt txn indexes.
     */
    private void recover(ConcurrentSkipListMap<Long, LogSegment> segments, TreeSet<Long> needsRecovery) throws IOException {
        if (needsRecovery.isEmpty()) {
            return;
        }
        ProducerStateManager producerState = log.producerStateManager();
        long firstRecovered = needsRecovery.first();
        long replayFrom = producerState.truncateAndReload(Math.max(params.checkpointedLogStartOffset(), segments.firstKey()), firstRecovered);
        for (LogSegment segment : segments.headMap(firstRecovered, false).values()) {
            if (segment.baseOffset() + Integer.MAX_VALUE < replayFrom) {
                continue;
            }
            for (FileRecords.FileBatch header : segment.log().batchesFrom(segment.offsetIndex().lookup(replayFrom).position())) {
                if (header.lastOffset() >= replayFrom) {
                    segment.applyToProducerStateWithoutIndex(header.load(), producerState);
                }
            }
        }
        for (long baseOffset : new ArrayList<>(segments.tailMap(firstRecovered, true).keySet())) {
            LogSegment segment = segments.get(baseOffset);
            if (segment == null) {
                continue; // deleted because an earlier segment was truncated
            }
            if (!needsRecovery.contains(baseOffset)) {
                // A healthy segment between recovered ones: carry producer state through it.
                for (FileRecords.FileBatch header : segment.log().batchesFrom(0)) {
                    segment.applyToProducerStateWithoutIndex(header.load(), producerState);
                }
                continue;
            }
            int truncated = segment.recover(producerState, log.epochCache());
            if (truncated > 0) {
                // Nothing after a torn or corrupt batch can be trusted: drop every later segment.
                List<LogSegment> later = new ArrayList<>(segments.tailMap(baseOffset, false).values());
                for (LogSegment next : later) {
                    LOG.warn("Deleting {} after corruption in the segment at {}", next, baseOffset);
                    segments.remove(next.baseOffset());
                    next.deleteIfExists();
                }
            }
        }
    }

    private static List<Long> segmentBaseOffsets(Path dir) throws IOException {
        List<Long> offsets = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + LogSegment.LOG_SUFFIX)) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                String prefix = name.substring(0, name.length() - LogSegment.LOG_SUFFIX.length());
                try {
                    offsets.add(Long.parseLong(prefix));
                } catch (NumberFormatException e) {
                    LOG.warn("Ignoring unexpected file {}", file);
                }
            }
        }
        offsets.sort(null);
        return offsets;
    }

    /** Deletes the offset, time and transaction indexes of the segment that {@code segmentFileName} belongs to. */
    private static void deleteIndexes(Path dir, String segmentFileName) throws IOException {
        String prefix = segmentFileName.substring(0, segmentFileName.indexOf('.'));
        for (String suffix : new String[] {LogSegment.INDEX_SUFFIX, LogSegment.TIME_INDEX_SUFFIX, LogSegment.TXN_INDEX_SUFFIX}) {
            Files.deleteIfExists(dir.resolve(prefix + suffix));
        }
    }

    /**
     * A committed compaction replaced a run of segments starting at the swap segment's base
     * offset; the process may have died before every replaced segment was renamed
     * {@code .deleted}. As in Kafka, every segment whose base offset lies after the swap's base and
     * before the swap's next offset was one of them: its files go, so that no offset is stored
     * twice. A replaced segment the swap does not reach (everything in it was compacted away)
     * holds only offsets past the swap's and may stay: its records are valid, merely uncompacted.
     */
    private static void deleteSegmentsReplacedBy(Path dir, Path swapLog) throws IOException {
        String name = swapLog.getFileName().toString();
        long swapBase = Long.parseLong(name.substring(0, name.indexOf('.')));
        long swapNext = swapBase;
        try (FileRecords records = FileRecords.open(swapLog)) {
            for (FileRecords.FileBatch batch : records.batchesFrom(0)) {
                swapNext = batch.nextOffset();
            }
        } catch (io.strata.protocol.ProtocolException e) {
            LOG.warn("Swap file {} is unreadable after offset {}: {}", swapLog, swapNext, e.getMessage());
        }
        for (long base : segmentBaseOffsets(dir)) {
            if (base > swapBase && base < swapNext) {
                LOG.info("Deleting segment {} of {}: the compaction swapped in at {} replaced it", base, dir, swapBase);
                Files.deleteIfExists(LogSegment.logFile(dir, base, ""));
                deleteIndexes(dir, LogSegment.logFile(dir, base, "").getFileName().toString());
            }
        }
    }

    private static void cleanLeftovers(Path dir) throws IOException {
        List<Path> swaps = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                if (name.endsWith(LogSegment.DELETED_SUFFIX) || name.endsWith(LogSegment.CLEANED_SUFFIX) || name.endsWith(".tmp")) {
                    Files.deleteIfExists(file);
                } else if (name.endsWith(LogSegment.SWAP_SUFFIX)) {
                    swaps.add(file);
                }
            }
        }
        for (Path swap : swaps) {
            String name = swap.getFileName().toString();
            if (name.endsWith(LogSegment.LOG_SUFFIX + LogSegment.SWAP_SUFFIX)) {
                deleteSegmentsReplacedBy(dir, swap);
            }
        }
        for (Path swap : swaps) {
            String name = swap.getFileName().toString();
            String targetName = name.substring(0, name.length() - LogSegment.SWAP_SUFFIX.length());
            // As Kafka does: whichever files of the swapped segment had been renamed when the
            // process died, its indexes may still describe the old log file. Drop them (swapped
            // or not) so that they are rebuilt from the swapped log.
            deleteIndexes(dir, targetName);
            if (targetName.endsWith(LogSegment.LOG_SUFFIX)) {
                Files.move(swap, swap.resolveSibling(targetName), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } else {
                Files.deleteIfExists(swap);
            }
        }
        // Index files whose log file is gone are strays from an interrupted delete.
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                for (String suffix : new String[] {LogSegment.INDEX_SUFFIX, LogSegment.TIME_INDEX_SUFFIX, LogSegment.TXN_INDEX_SUFFIX}) {
                    if (name.endsWith(suffix)) {
                        String prefix = name.substring(0, name.length() - suffix.length());
                        if (!Files.exists(dir.resolve(prefix + LogSegment.LOG_SUFFIX))) {
                            Files.deleteIfExists(file);
                        }
                    }
                }
            }
        }
    }
}
