package io.strata.storage;

import io.strata.common.MockTime;
import io.strata.protocol.records.CompressionType;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The child process of {@link CrashRecoveryTest}: appends {@link SequenceRecords} batches to a
 * partition log as fast as it can until it is killed, and reports progress on stdout, one
 * line per event, flushed at once:
 * <pre>
 *   RECOVERED &lt;log end offset&gt;   once, after opening the log (recovering it if a previous
 *                                  child was killed), followed by FLUSHED of its recovery point
 *   APPENDED &lt;log end offset&gt;    after an append returned (its bytes are in the page cache)
 *   FLUSHED &lt;recovery point&gt;     after a flush returned, or the recovery point moved
 * </pre>
 * Other output (logging) never starts with these words. Appends continue the sequence from
 * the log end, in the latest leader epoch of the log, so a child can take over the directory
 * of a killed one.
 *
 * <p>Arguments: {@code <dir> <seed> <flush.messages> <segment.bytes> <segment.index.bytes>
 * <index.interval.bytes> <compression> <idempotent> <flushEveryBatches> <maxRecordsPerBatch>}.
 * The seed drives batch sizes (1..maxRecordsPerBatch records) and leader epoch bumps. The process stops by itself when its stdout is closed
 * (the test JVM died), after {@link #MAX_RECORDS} records or after {@link #MAX_RUNTIME_MS},
 * so a lost child never fills the disk.
 */
public final class CrashWriterMain {
    static final String RECOVERED = "RECOVERED ";
    static final String APPENDED = "APPENDED ";
    static final String FLUSHED = "FLUSHED ";
    private static final long MAX_RECORDS = 2_000_000L;
    private static final long MAX_RUNTIME_MS = 120_000L;
    /** One leader epoch bump per this many batches on average, so the epoch cache has entries to recover. */
    private static final int EPOCH_BUMP_ONE_IN_BATCHES = 400;

    private CrashWriterMain() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        if (args.length != 10) {
            System.err.println("usage: CrashWriterMain <dir> <seed> <flush.messages> <segment.bytes> <segment.index.bytes> "
                + "<index.interval.bytes> <compression> <idempotent> <flushEveryBatches> <maxRecordsPerBatch>");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        Random random = new Random(Long.parseLong(args[1]));
        LogConfig config = LogConfig.of(Map.of(), Map.of(
            LogConfig.FLUSH_MESSAGES, args[2],
            LogConfig.SEGMENT_BYTES, args[3],
            LogConfig.SEGMENT_INDEX_BYTES, args[4],
            LogConfig.INDEX_INTERVAL_BYTES, args[5]));
        CompressionType compression = CompressionType.valueOf(args[6]);
        boolean idempotent = Boolean.parseBoolean(args[7]);
        int flushEveryBatches = Integer.parseInt(args[8]);
        int maxRecordsPerBatch = Integer.parseInt(args[9]);

        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.US_ASCII);
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "crash-writer-scheduler");
            thread.setDaemon(true);
            return thread;
        });
        MockTime time = new MockTime(SequenceRecords.NOW_MS);
        UnifiedLog log = UnifiedLog.load(dir, new TopicPartition("crash", 0), config, time, scheduler,
            new UnifiedLog.LoadParams(0L, 0L, false, 86_400_000L, false));
        long startedNs = System.nanoTime();
        long reportedRecoveryPoint = log.recoveryPoint();
        out.println(RECOVERED + log.logEndOffset());
        out.println(FLUSHED + reportedRecoveryPoint);
        int leaderEpoch = log.leaderEpochCache().latestEpoch().orElse(0);
        long batches = 0;
        while (log.logEndOffset() < MAX_RECORDS && System.nanoTime() - startedNs < MAX_RUNTIME_MS * 1_000_000L) {
            if (random.nextInt(EPOCH_BUMP_ONE_IN_BATCHES) == 0) {
                leaderEpoch++;
            }
            long next = log.logEndOffset();
            int count = 1 + random.nextInt(maxRecordsPerBatch);
            log.appendAsLeader(SequenceRecords.batch(compression, next, count, idempotent), leaderEpoch, UnifiedLog.AppendOrigin.CLIENT);
            out.println(APPENDED + log.logEndOffset());
            batches++;
            if (batches % flushEveryBatches == 0) {
                log.flush(log.logEndOffset());
            }
            long recoveryPoint = log.recoveryPoint();
            if (recoveryPoint != reportedRecoveryPoint) {
                out.println(FLUSHED + recoveryPoint);
                reportedRecoveryPoint = recoveryPoint;
            }
            if (out.checkError()) {
                break; // the test JVM is gone
            }
        }
        scheduler.shutdownNow();
        scheduler.awaitTermination(10, TimeUnit.SECONDS);
        System.exit(3);
    }
}
