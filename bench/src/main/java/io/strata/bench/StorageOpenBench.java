package io.strata.bench;

import io.strata.common.Time;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.storage.LogConfig;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;

/**
 * Start-up time of a data directory after a clean shutdown: {@link LogManager#startup} over
 * 1,000 partition logs of a few segments each (so every log opens its segments, maps and
 * sanity-checks their indexes, and loads its producer snapshot and leader epoch checkpoint,
 * without recovery). Each run is followed by a clean {@link LogManager#close}, so the next
 * run also starts clean. The directory is created once and reused ({@code --delete true}
 * removes it at the end).
 *
 * <p>Options: {@code --dir} (./storage-bench-open), {@code --partitions} (1000),
 * {@code --segments} (3 per partition), {@code --recovery-threads} (2, Kafka's default
 * num.recovery.threads.per.data.dir), {@code --warmup-runs} (2), {@code --runs} (7),
 * {@code --delete} (false).
 */
public final class StorageOpenBench {
    private static final int SEGMENT_BYTES = 64 * 1024;
    private static final int PARTITIONS_PER_TOPIC = 100;
    private static final String MARKER = "COMPLETE";

    private StorageOpenBench() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = StorageBenchSupport.options(args);
        Path dir = StorageBenchSupport.dirOption(options, "dir", "storage-bench-open");
        int partitions = (int) StorageBenchSupport.longOption(options, "partitions", 1_000);
        int segments = (int) StorageBenchSupport.longOption(options, "segments", 3);
        int recoveryThreads = (int) StorageBenchSupport.longOption(options, "recovery-threads", 2);
        int warmupRuns = (int) StorageBenchSupport.longOption(options, "warmup-runs", 2);
        int runs = (int) StorageBenchSupport.longOption(options, "runs", 7);
        boolean delete = Boolean.parseBoolean(options.getOrDefault("delete", "false"));

        Path dataDir = dir.resolve("data");
        try {
            ensureDataDir(dir, dataDir, partitions, segments);
            System.out.printf("open: %d partitions x %d segments (%.1f MiB on disk), %d recovery thread(s), dir %s%n", partitions,
                segments, StorageBenchSupport.directoryBytes(dataDir) / (double) StorageBenchSupport.MIB, recoveryThreads, dataDir);
            for (int i = 0; i < warmupRuns; i++) {
                openAndClose(dataDir, recoveryThreads, partitions);
            }
            double[] millis = new double[runs];
            for (int i = 0; i < runs; i++) {
                millis[i] = openAndClose(dataDir, recoveryThreads, partitions);
                System.out.printf("  run %d: startup %.0f ms%n", i, millis[i]);
            }
            double[] sorted = millis.clone();
            Arrays.sort(sorted);
            double median = StorageBenchSupport.median(millis);
            System.out.printf("RESULT open: LogManager.startup of %d partitions (%d segments each) after a clean shutdown: median %.0f ms "
                    + "(min %.0f, max %.0f; %.0f us per partition), %d recovery thread(s), warm page cache%n", partitions, segments, median,
                sorted[0], sorted[sorted.length - 1], median * 1_000 / partitions, recoveryThreads);
        } finally {
            if (delete) {
                StorageBenchSupport.deleteRecursively(dir);
                System.out.println("deleted " + dir);
            }
        }
    }

    private static LogConfig config() {
        return LogConfig.of(Map.of(), Map.of(LogConfig.SEGMENT_BYTES, Integer.toString(SEGMENT_BYTES), LogConfig.RETENTION_MS, "-1"));
    }

    private static LogManager newLogManager(Path dataDir, int recoveryThreads) {
        // Background tasks far in the future: only loading is measured.
        return new LogManager(new LogManager.Settings(List.of(dataDir), recoveryThreads, 86_400_000L, Long.MAX_VALUE, 0L, 86_400_000L,
            86_400_000L, false), Time.SYSTEM);
    }

    /** Returns the startup time in milliseconds; the close that follows is not timed. */
    private static double openAndClose(Path dataDir, int recoveryThreads, int partitions) throws Exception {
        LogManager manager = newLogManager(dataDir, recoveryThreads);
        long startNs = System.nanoTime();
        manager.startup(topic -> config());
        long elapsedNs = System.nanoTime() - startNs;
        if (manager.allLogs().size() != partitions) {
            throw new IllegalStateException("loaded " + manager.allLogs().size() + " logs, expected " + partitions);
        }
        manager.close();
        if (!Files.exists(dataDir.resolve(LogManager.CLEAN_SHUTDOWN_FILE))) {
            throw new IllegalStateException("no clean shutdown marker after close in " + dataDir);
        }
        return elapsedNs / 1e6;
    }

    /** Creates {@code partitions} logs of {@code segments} segments each, idempotent producers included, unless already there. */
    private static void ensureDataDir(Path dir, Path dataDir, int partitions, int segments) throws Exception {
        Path marker = dir.resolve(MARKER);
        String expected = "partitions=" + partitions + ",segments=" + segments;
        if (Files.exists(marker) && Files.readString(marker, StandardCharsets.UTF_8).equals(expected)) {
            System.out.println("open: reusing the data directory in " + dataDir);
            return;
        }
        StorageBenchSupport.deleteRecursively(dir);
        Files.createDirectories(dataDir);
        long startNs = System.nanoTime();
        LogManager manager = newLogManager(dataDir, 2);
        manager.startup(topic -> config());
        Random random = new Random(5);
        byte[] value = new byte[StorageBenchSupport.RECORD_VALUE_BYTES];
        for (int p = 0; p < partitions; p++) {
            TopicPartition topicPartition = new TopicPartition("open-bench-" + p / PARTITIONS_PER_TOPIC, p % PARTITIONS_PER_TOPIC);
            UnifiedLog log = manager.getOrCreateLog(topicPartition, Optional.of(UUID.nameUUIDFromBytes(
                topicPartition.topic().getBytes(StandardCharsets.UTF_8))), config());
            int sequence = 0;
            while (log.numberOfSegments() < segments || log.activeSegment().size() < SEGMENT_BYTES / 2) {
                // 16 KiB batches of an idempotent producer, so every log has producer state to load.
                RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L)
                    .producerState(1_000L + p, (short) 0, sequence, false);
                for (int i = 0; i < 16; i++) {
                    random.nextBytes(value);
                    builder.append(Time.SYSTEM.milliseconds(), null, value);
                }
                MemoryRecords batch = builder.build();
                log.appendAsLeader(batch, 0, UnifiedLog.AppendOrigin.CLIENT);
                sequence += 16;
            }
        }
        manager.close();
        Files.writeString(marker, expected, StandardCharsets.UTF_8);
        System.out.printf("open: created %d partitions in %.1f s%n", partitions, (System.nanoTime() - startNs) / 1e9);
    }
}
