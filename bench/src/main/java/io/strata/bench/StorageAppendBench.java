package io.strata.bench;

import io.strata.common.Time;
import io.strata.protocol.records.MemoryRecords;
import io.strata.storage.LogConfig;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Append throughput: {@link UnifiedLog#appendAsLeader} of 64 KiB batches of 1 KiB records
 * against the ceiling, a raw {@link FileChannel#write} of the same batch bytes to a file in the
 * same directory, in the same run. Runs alternate (Strata, raw, raw, Strata, ...) after warm-up
 * runs, each into fresh files that are deleted afterwards, so page-cache and disk state drift
 * hits both sides alike. The result is the ratio of the medians.
 *
 * <p>Both sides write through the page cache without fsync, as Kafka does by default
 * ({@code flush.messages} unset). With {@code --fsync true} each run ends with an fsync of
 * everything it wrote (UnifiedLog.flush / FileChannel.force), inside the timed section, so
 * the figure includes getting the bytes onto the disk.
 *
 * <p>The Strata side does what a leader does per batch: validates the batch (size, CRC32C,
 * record count, timestamps), assigns offsets and the leader epoch in place, writes it, adds
 * offset and time index entries (one per batch: index.interval.bytes=4096), updates the log
 * end. Segments are 1 GiB and a run (1000 MiB by default) stays within one, so no roll falls in a
 * timed run: a roll fsyncs the finished segment in the background (as Kafka does), which
 * would make the run measure the disk rather than the append path; {@code --fsync} measures
 * the disk explicitly.
 *
 * <p>Options: {@code --dir} (default ./storage-bench-append), {@code --run-mib} (1000),
 * {@code --warmup-runs} (3), {@code --runs} (10), {@code --fsync} (false).
 */
public final class StorageAppendBench {
    private static final long SEGMENT_BYTES = StorageBenchSupport.GIB;

    private StorageAppendBench() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = StorageBenchSupport.options(args);
        Path dir = StorageBenchSupport.dirOption(options, "dir", "storage-bench-append");
        long runBytes = StorageBenchSupport.longOption(options, "run-mib", 1000) * StorageBenchSupport.MIB;
        int warmupRuns = (int) StorageBenchSupport.longOption(options, "warmup-runs", 3);
        int runs = (int) StorageBenchSupport.longOption(options, "runs", 10);
        boolean fsync = Boolean.parseBoolean(options.getOrDefault("fsync", "false"));

        MemoryRecords batch = StorageBenchSupport.batch(Time.SYSTEM.milliseconds(), new Random(1));
        System.out.printf("append: batch of %d x %d-byte records = %d bytes; %d MiB per run, %d warm-up + %d measured runs per side, "
                + "fsync at end of run: %s, dir %s%n", StorageBenchSupport.RECORDS_PER_BATCH, StorageBenchSupport.RECORD_VALUE_BYTES,
            batch.sizeInBytes(), runBytes / StorageBenchSupport.MIB, warmupRuns, runs, fsync, dir);
        StorageBenchSupport.deleteRecursively(dir);
        Files.createDirectories(dir);
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        try {
            for (int i = 0; i < warmupRuns; i++) {
                runStrata(dir, batch, runBytes, fsync, scheduler);
                runRaw(dir, batch, runBytes, fsync);
            }
            List<Run> strata = new ArrayList<>();
            List<Run> raw = new ArrayList<>();
            for (int i = 0; i < runs; i++) {
                // Alternate which side goes first, so neither always follows the other's writeback.
                if (i % 2 == 0) {
                    strata.add(runStrata(dir, batch, runBytes, fsync, scheduler).report("strata", i));
                    raw.add(runRaw(dir, batch, runBytes, fsync).report("raw   ", i));
                } else {
                    raw.add(runRaw(dir, batch, runBytes, fsync).report("raw   ", i));
                    strata.add(runStrata(dir, batch, runBytes, fsync, scheduler).report("strata", i));
                }
            }
            double strataWall = StorageBenchSupport.median(strata.stream().mapToDouble(Run::wallMegabytesPerSecond).toArray());
            double rawWall = StorageBenchSupport.median(raw.stream().mapToDouble(Run::wallMegabytesPerSecond).toArray());
            double strataCpu = StorageBenchSupport.median(strata.stream().mapToDouble(Run::cpuMegabytesPerSecond).toArray());
            double rawCpu = StorageBenchSupport.median(raw.stream().mapToDouble(Run::cpuMegabytesPerSecond).toArray());
            System.out.printf("RESULT append%s: UnifiedLog.appendAsLeader %.0f MB/s, raw FileChannel.write %.0f MB/s, ratio %.3f "
                    + "(medians of %d runs, wall clock); per CPU-second of the writing thread: %.0f vs %.0f MB/s, ratio %.3f%n",
                fsync ? " (fsync at end of run)" : "", strataWall, rawWall, strataWall / rawWall, runs, strataCpu, rawCpu,
                strataCpu / rawCpu);
        } finally {
            scheduler.shutdownNow();
            StorageBenchSupport.deleteRecursively(dir);
        }
    }

    /**
     * One run's throughput in MB/s (10^6 bytes per second): by wall clock, and per second of
     * CPU time (user + system) of the writing thread, which a busy machine disturbs less.
     */
    private record Run(double wallMegabytesPerSecond, double cpuMegabytesPerSecond) {
        static Run of(long bytes, long wallNs, long cpuNs) {
            return new Run(bytes * 1_000.0 / wallNs, bytes * 1_000.0 / cpuNs);
        }

        Run report(String side, int run) {
            System.out.printf("  run %d %s %8.0f MB/s (%8.0f MB/s per CPU-second)%n", run, side, wallMegabytesPerSecond,
                cpuMegabytesPerSecond);
            return this;
        }
    }

    private static long threadCpuNs() {
        return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
    }

    /** Appends batches until {@code runBytes} are written. */
    private static Run runStrata(Path base, MemoryRecords batch, long runBytes, boolean fsync, ScheduledExecutorService scheduler)
        throws IOException {
        Path dir = base.resolve("strata-0");
        LogConfig config = LogConfig.of(Map.of(), Map.of(LogConfig.SEGMENT_BYTES, Long.toString(SEGMENT_BYTES),
            LogConfig.RETENTION_MS, "-1"));
        UnifiedLog log = UnifiedLog.load(dir, new TopicPartition("strata", 0), config, Time.SYSTEM, scheduler,
            new UnifiedLog.LoadParams(0L, 0L, true, 86_400_000L, false));
        long written = 0;
        long startCpuNs = threadCpuNs();
        long startNs = System.nanoTime();
        while (written < runBytes) {
            // The batch's header is rewritten in place (offsets, epoch); its CRC-covered bytes never change.
            log.appendAsLeader(batch, 0, UnifiedLog.AppendOrigin.CLIENT);
            written += batch.sizeInBytes();
        }
        if (fsync) {
            log.flush(log.logEndOffset());
        }
        long elapsedNs = System.nanoTime() - startNs;
        long cpuNs = threadCpuNs() - startCpuNs;
        // A roll flushes the finished segment in the background (as Kafka does); let that
        // finish before the next run, whose writes it would otherwise slow down.
        awaitIdle(scheduler);
        log.close();
        StorageBenchSupport.deleteRecursively(dir);
        return Run.of(written, elapsedNs, cpuNs);
    }

    private static void awaitIdle(ScheduledExecutorService scheduler) {
        try {
            scheduler.submit(() -> { }).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes the same batch bytes with FileChannel.write, rolling files at the same size. */
    private static Run runRaw(Path base, MemoryRecords batch, long runBytes, boolean fsync) throws IOException {
        Path dir = Files.createDirectories(base.resolve("raw-0"));
        ByteBuffer bytes = batch.buffer();
        long written = 0;
        int fileNumber = 0;
        List<FileChannel> channels = new ArrayList<>();
        long startCpuNs = threadCpuNs();
        long startNs = System.nanoTime();
        FileChannel channel = open(dir, fileNumber, channels);
        long inFile = 0;
        while (written < runBytes) {
            if (inFile > SEGMENT_BYTES - bytes.capacity()) {
                channel = open(dir, ++fileNumber, channels);
                inFile = 0;
            }
            ByteBuffer source = bytes.duplicate();
            while (source.hasRemaining()) {
                inFile += channel.write(source);
            }
            written += bytes.capacity();
        }
        if (fsync) {
            for (FileChannel open : channels) {
                open.force(true);
            }
        }
        long elapsedNs = System.nanoTime() - startNs;
        long cpuNs = threadCpuNs() - startCpuNs;
        for (FileChannel open : channels) {
            open.close();
        }
        StorageBenchSupport.deleteRecursively(dir);
        return Run.of(written, elapsedNs, cpuNs);
    }

    private static FileChannel open(Path dir, int fileNumber, List<FileChannel> channels) throws IOException {
        FileChannel channel = FileChannel.open(dir.resolve(String.format("%020d.raw", fileNumber)), StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE);
        channels.add(channel);
        return channel;
    }
}
