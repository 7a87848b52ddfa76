package io.strata.bench;

import io.strata.common.Time;
import io.strata.protocol.records.MemoryRecords;
import io.strata.storage.FetchDataInfo;
import io.strata.storage.FetchIsolation;
import io.strata.storage.FileRecords;
import io.strata.storage.LogConfig;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Random reads by offset over one large partition log (10 GiB by default, 1 GiB segments of
 * 64 KiB batches of 1 KiB records), single-threaded:
 * <ol>
 *   <li><b>lookups/s</b>: {@link UnifiedLog#read} of a random offset (maxBytes 1,
 *       minOneMessage), which finds the segment, looks the offset up in the sparse index,
 *       scans batch headers from the indexed position and returns the batch as a file slice
 *       (what a Fetch sends with zero copy);</li>
 *   <li><b>latency</b> of each such read, and of the read plus copying the returned batch
 *       into the heap (the bytes actually come from the page cache or the disk);</li>
 *   <li><b>cold</b>: the same after evicting the log's files from the page cache
 *       ({@code dd iflag=nocache count=0}, which drops only those files' clean pages), so
 *       each read goes to the disk.</li>
 * </ol>
 * The log is created once in {@code --dir} and reused by later runs (a COMPLETE marker
 * records its size); {@code --delete true} removes it at the end.
 *
 * <p>Options: {@code --dir} (./storage-bench-read), {@code --log-gib} (10), {@code --lookups}
 * (2000000), {@code --reads} (200000), {@code --cold-reads} (2000), {@code --delete} (false).
 */
public final class StorageRandomReadBench {
    private static final TopicPartition TOPIC_PARTITION = new TopicPartition("read", 0);
    private static final String MARKER = "COMPLETE";
    private static final long SEED = 20_261_129L;

    private StorageRandomReadBench() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = StorageBenchSupport.options(args);
        Path dir = StorageBenchSupport.dirOption(options, "dir", "storage-bench-read");
        long logBytes = StorageBenchSupport.longOption(options, "log-gib", 10) * StorageBenchSupport.GIB;
        int lookups = (int) StorageBenchSupport.longOption(options, "lookups", 2_000_000);
        int reads = (int) StorageBenchSupport.longOption(options, "reads", 200_000);
        int coldReads = (int) StorageBenchSupport.longOption(options, "cold-reads", 2_000);
        boolean delete = Boolean.parseBoolean(options.getOrDefault("delete", "false"));

        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        try {
            ensureLog(dir, logBytes, scheduler);
            Random random = new Random(SEED);
            try (UnifiedLog log = open(dir, scheduler)) {
                System.out.printf("read: log of %.2f GiB, %d segments, offsets [0, %d), dir %s%n",
                    log.size() / (double) StorageBenchSupport.GIB, log.numberOfSegments(), log.logEndOffset(), dir);
                measureLookups(log, random, lookups / 4, false); // warm-up: JIT and page cache
                measureLookups(log, random, lookups, true);
                measureLatency(log, random, reads, "warm");
            }
            if (coldReads > 0) {
                evictFromPageCache(dir.resolve(TOPIC_PARTITION.toString()));
                try (UnifiedLog log = open(dir, scheduler)) {
                    measureLatency(log, random, coldReads, "cold");
                }
            }
        } finally {
            scheduler.shutdownNow();
            scheduler.awaitTermination(30, TimeUnit.SECONDS);
            if (delete) {
                StorageBenchSupport.deleteRecursively(dir);
                System.out.println("deleted " + dir);
            }
        }
    }

    private static LogConfig config() {
        return LogConfig.of(Map.of(), Map.of(LogConfig.SEGMENT_BYTES, Long.toString(StorageBenchSupport.GIB),
            LogConfig.RETENTION_MS, "-1"));
    }

    private static UnifiedLog open(Path dir, ScheduledExecutorService scheduler) throws IOException {
        return UnifiedLog.load(dir.resolve(TOPIC_PARTITION.toString()), TOPIC_PARTITION, config(), Time.SYSTEM, scheduler,
            new UnifiedLog.LoadParams(0L, 0L, true, 86_400_000L, false));
    }

    /** Creates the log unless a complete one of the requested size is already there. */
    private static void ensureLog(Path dir, long logBytes, ScheduledExecutorService scheduler) throws IOException {
        Path marker = dir.resolve(MARKER);
        String expected = "logBytes=" + logBytes;
        if (Files.exists(marker) && Files.readString(marker, StandardCharsets.UTF_8).equals(expected)) {
            System.out.println("read: reusing the log in " + dir);
            return;
        }
        StorageBenchSupport.deleteRecursively(dir);
        Files.createDirectories(dir);
        long startNs = System.nanoTime();
        MemoryRecords batch = StorageBenchSupport.batch(Time.SYSTEM.milliseconds(), new Random(SEED));
        try (UnifiedLog log = open(dir, scheduler)) {
            while (log.size() < logBytes) {
                log.appendAsLeader(batch, 0, UnifiedLog.AppendOrigin.CLIENT);
            }
            log.flush(log.logEndOffset());
        }
        Files.writeString(marker, expected, StandardCharsets.UTF_8);
        System.out.printf("read: created a %.2f GiB log in %.1f s%n", logBytes / (double) StorageBenchSupport.GIB,
            (System.nanoTime() - startNs) / 1e9);
    }

    private static void measureLookups(UnifiedLog log, Random random, int count, boolean report) {
        long end = log.logEndOffset();
        long sink = 0;
        long startNs = System.nanoTime();
        for (int i = 0; i < count; i++) {
            FetchDataInfo info = log.read(nextOffset(random, end), 1, FetchIsolation.LOG_END, true);
            sink += info.fetchOffsetMetadata().relativePositionInSegment();
        }
        long elapsedNs = System.nanoTime() - startNs;
        if (report) {
            System.out.printf("RESULT read lookups: %.0f UnifiedLog.read lookups/s (%d random offsets, single thread, warm page cache; "
                + "checksum %d)%n", count * 1e9 / elapsedNs, count, sink);
        }
    }

    private static void measureLatency(UnifiedLog log, Random random, int count, String label) {
        long end = log.logEndOffset();
        long[] readNs = new long[count];
        long[] readAndCopyNs = new long[count];
        long sink = 0;
        for (int i = 0; i < count; i++) {
            long offset = nextOffset(random, end);
            long startNs = System.nanoTime();
            FetchDataInfo info = log.read(offset, 1, FetchIsolation.LOG_END, true);
            long readDoneNs = System.nanoTime();
            ByteBuffer bytes = ((FileRecords) info.records()).readAll();
            long copiedNs = System.nanoTime();
            sink += bytes.remaining();
            readNs[i] = readDoneNs - startNs;
            readAndCopyNs[i] = copiedNs - startNs;
        }
        Arrays.sort(readNs);
        Arrays.sort(readAndCopyNs);
        System.out.printf("RESULT read latency (%s, %d reads): UnifiedLog.read p50 %s p99 %s p99.9 %s max %s | read + copy of the "
                + "%d-byte batch p50 %s p99 %s p99.9 %s max %s (checksum %d)%n", label, count,
            StorageBenchSupport.micros(StorageBenchSupport.percentile(readNs, 50)),
            StorageBenchSupport.micros(StorageBenchSupport.percentile(readNs, 99)),
            StorageBenchSupport.micros(StorageBenchSupport.percentile(readNs, 99.9)),
            StorageBenchSupport.micros(readNs[count - 1]),
            StorageBenchSupport.batch(0, new Random(0)).sizeInBytes(),
            StorageBenchSupport.micros(StorageBenchSupport.percentile(readAndCopyNs, 50)),
            StorageBenchSupport.micros(StorageBenchSupport.percentile(readAndCopyNs, 99)),
            StorageBenchSupport.micros(StorageBenchSupport.percentile(readAndCopyNs, 99.9)),
            StorageBenchSupport.micros(readAndCopyNs[count - 1]), sink);
    }

    private static long nextOffset(Random random, long end) {
        return (long) (random.nextDouble() * end);
    }

    /**
     * Drops the partition's files from the page cache: {@code dd iflag=nocache count=0} asks the
     * kernel (posix_fadvise DONTNEED) to drop the clean cached pages of that one file. Nothing
     * else on the machine is affected. Reports what {@code fincore} says is still cached.
     */
    private static void evictFromPageCache(Path partitionDir) throws IOException, InterruptedException {
        List<Path> files;
        try (Stream<Path> list = Files.list(partitionDir)) {
            files = list.filter(Files::isRegularFile).toList();
        }
        for (Path file : files) {
            run(List.of("dd", "if=" + file, "iflag=nocache", "count=0", "status=none"));
        }
        long cachedBytes = 0;
        for (Path file : files) {
            String out = run(List.of("fincore", "--bytes", "--noheadings", "--output", "RES", file.toString())).trim();
            cachedBytes += out.isEmpty() ? 0 : Long.parseLong(out.split("\\s+")[0]);
        }
        System.out.printf("read: evicted %d files from the page cache; %.1f MiB of them still cached%n", files.size(),
            cachedBytes / (double) StorageBenchSupport.MIB);
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (process.waitFor() != 0) {
            throw new IOException(command + " failed: " + output);
        }
        return output;
    }
}
