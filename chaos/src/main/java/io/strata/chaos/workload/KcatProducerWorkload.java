package io.strata.chaos.workload;

import io.strata.chaos.history.Op;
import io.strata.chaos.history.SendValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The librdkafka workload: batches of unique values produced by {@code kcat -P} (idempotent, acks=all), one kcat
 * process per batch, to one partition chosen at random per batch. Each value is a {@code send} op of its own
 * process (a batch of {@code n} values uses {@code n} process ids of the thread's pool, one op in flight each).
 *
 * <p>Offsets: kcat prints a delivery report per message at verbosity 3 ({@code -v -v}):
 * {@code % Message delivered to partition P (offset O) on broker B} or {@code % Delivery failed for message: E}.
 * librdkafka reports deliveries of one partition in produce order, and every message of a batch goes to one
 * partition, so the i-th report is the i-th value: ok with its offset (when the report's partition is the
 * batch's), info for a failed delivery (with idempotence a message timeout may still have been written). kcat
 * serves delivery reports only between reads of its input, so the batch is written whole and stdin closed;
 * kcat then waits for every report and exits. Values without a report (kcat killed at the deadline, exited on
 * an error) are info. A "Failed to produce" line (the message never entered librdkafka) does not say which
 * message it was, so a batch with one is recorded info throughout, never ok at a guessed offset. A kcat that
 * cannot even be started sends nothing: fail.
 *
 * <p>Thread-safe: {@link #start} and {@link #stop} are synchronized; each thread owns its batches.
 */
public final class KcatProducerWorkload implements Workload {
    private static final Logger log = LoggerFactory.getLogger(KcatProducerWorkload.class);
    static final Pattern DELIVERED = Pattern.compile("Message delivered to partition (-?\\d+) \\(offset (-?\\d+)\\)");
    static final Pattern DELIVERY_FAILED = Pattern.compile("Delivery failed for message: (.*)");
    static final Pattern PRODUCE_FAILED = Pattern.compile("Failed to produce message");
    /** Values per kcat batch: 1..BATCH_MAX. */
    static final int BATCH_MAX = 8;
    /** librdkafka's message.timeout.ms: every report arrives within this (the idempotent producer's delivery timeout). */
    static final int MESSAGE_TIMEOUT_MS = 10_000;
    /** A kcat still running this long after its stdin closed is killed; its unreported values are info. */
    static final Duration BATCH_DEADLINE = Duration.ofMillis(MESSAGE_TIMEOUT_MS + 8_000);

    private final String topic;
    private final int partitions;
    private final int threads;
    private final List<Thread> running = new ArrayList<>();
    private volatile boolean stopping;
    private static final String KCAT = "kcat";
    /** The kcat processes running now, killed by {@link #stop} when their threads overrun the stop timeout. */
    private final java.util.Set<Process> live = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private boolean started;
    private boolean stopped;

    public KcatProducerWorkload(String topic, int partitions, int threads) {
        if (partitions < 1 || threads < 1) {
            throw new IllegalArgumentException("partitions and threads must be >= 1: partitions=" + partitions + " threads=" + threads);
        }
        this.topic = topic;
        this.partitions = partitions;
        this.threads = threads;
    }

    /** Whether {@code kcat} can be run here ({@code apt-get install kcat}). */
    public static boolean available() {
        try {
            Process process = new ProcessBuilder("kcat", "-V").redirectErrorStream(true).start();
            process.getInputStream().readAllBytes();
            return process.waitFor(10, TimeUnit.SECONDS) && process.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public String name() {
        return "kcat-producer";
    }

    @Override
    public List<TopicSpec> topics() {
        return List.of(new TopicSpec(topic, partitions, (short) 3, Map.of("min.insync.replicas", "2")));
    }

    @Override
    public synchronized void start(WorkloadContext context) throws IOException {
        if (started) {
            throw new IllegalStateException("workload " + name() + " already started");
        }
        if (!available()) {
            throw new IllegalStateException("kcat is not installed (apt-get install kcat): the " + name() + " workload runs it");
        }
        started = true;
        Files.createDirectories(context.workDir());
        Random seeds = new Random(context.seed());
        for (int i = 0; i < threads; i++) {
            Random random = new Random(seeds.nextLong());
            int[] pool = new int[BATCH_MAX];
            for (int p = 0; p < pool.length; p++) {
                pool[p] = context.recorder().newProcess();
            }
            Path log = context.workDir().resolve("kcat-" + i + ".log");
            Thread thread = new Thread(() -> runSafely(context, random, pool, log), "chaos-kcat-" + i);
            thread.setDaemon(true);
            running.add(thread);
            thread.start();
        }
    }

    @Override
    public synchronized void stop(Duration timeout) throws InterruptedException {
        if (stopped || !started) {
            stopped = true;
            return;
        }
        stopped = true;
        stopping = true;
        long deadlineNanos = System.nanoTime() + timeout.toNanos();
        for (Thread thread : running) {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime())));
        }
        // A batch still running records its unreported values info once its kcat is killed.
        live.forEach(Process::destroyForcibly);
        for (Thread thread : running) {
            thread.join(2_000);
        }
    }

    private void runSafely(WorkloadContext context, Random random, int[] pool, Path logFile) {
        try {
            while (!stopping) {
                batch(context, random, pool, logFile);
            }
        } catch (RuntimeException | Error e) {
            log.error("kcat workload thread died", e);
            throw e;
        }
    }

    private void batch(WorkloadContext context, Random random, int[] pool, Path logFile) {
        Recorder recorder = context.recorder();
        int partition = random.nextInt(partitions);
        String partitionName = RecordValues.partition(topic, partition);
        int size = 1 + random.nextInt(BATCH_MAX);
        long[] values = new long[size];
        for (int i = 0; i < size; i++) {
            values[i] = recorder.nextValue();
            recorder.invoke(pool[i], Op.Function.SEND, new SendValue(partitionName, values[i], -1));
        }
        Op.Type[] outcomes = new Op.Type[size];
        long[] offsets = new long[size];
        java.util.Arrays.fill(outcomes, Op.Type.INFO);
        java.util.Arrays.fill(offsets, -1);
        List<String> command = List.of(KCAT, "-P", "-E", "-b", context.bootstrapServers(), "-t", topic, "-p", Integer.toString(partition),
                "-v", "-v", "-m", "5",
                "-X", "enable.idempotence=true", "-X", "acks=all", "-X", "message.timeout.ms=" + MESSAGE_TIMEOUT_MS,
                "-X", "socket.connection.setup.timeout.ms=2000", "-X", "log_level=3");
        Process process;
        try {
            process = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            log.warn("cannot start kcat: {}", e.toString());
            java.util.Arrays.fill(outcomes, Op.Type.FAIL);
            complete(recorder, pool, partitionName, values, outcomes, offsets);
            return;
        }
        live.add(process);
        try {
            readReports(process, values, partition, outcomes, offsets, logFile);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            log.info("kcat batch to {}: {}", partitionName, e.toString());
        } finally {
            live.remove(process);
            if (process.isAlive()) {
                process.destroyForcibly();
            }
        }
        complete(recorder, pool, partitionName, values, outcomes, offsets);
    }

    private static void readReports(Process process, long[] values, int partition, Op.Type[] outcomes, long[] offsets, Path logFile)
            throws IOException, InterruptedException {
        try (OutputStream stdin = process.getOutputStream()) {
            StringBuilder input = new StringBuilder();
            for (long value : values) {
                input.append(value).append('\n');
            }
            stdin.write(input.toString().getBytes(StandardCharsets.US_ASCII));
        }
        long deadlineNanos = System.nanoTime() + BATCH_DEADLINE.toNanos();
        Thread killer = new Thread(() -> {
            try {
                if (!process.waitFor(BATCH_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                // the batch ended first
            }
        }, "chaos-kcat-deadline");
        killer.setDaemon(true);
        killer.start();
        List<String> lines = new ArrayList<>();
        boolean produceFailed = false;
        int report = 0;
        try (BufferedReader stderr = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
            for (String line = stderr.readLine(); line != null; line = stderr.readLine()) {
                lines.add(line);
                if (PRODUCE_FAILED.matcher(line).find()) {
                    produceFailed = true;
                    continue;
                }
                Matcher delivered = DELIVERED.matcher(line);
                if (delivered.find() && report < values.length) {
                    boolean samePartition = Integer.parseInt(delivered.group(1)) == partition;
                    outcomes[report] = samePartition ? Op.Type.OK : Op.Type.INFO;
                    offsets[report] = samePartition ? Long.parseLong(delivered.group(2)) : -1;
                    report++;
                } else if (DELIVERY_FAILED.matcher(line).find() && report < values.length) {
                    outcomes[report] = Op.Type.INFO;
                    report++;
                }
            }
        } finally {
            killer.interrupt();
            appendLog(logFile, lines);
        }
        process.waitFor(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime())), TimeUnit.MILLISECONDS);
        if (produceFailed) {
            java.util.Arrays.fill(outcomes, Op.Type.INFO);
            java.util.Arrays.fill(offsets, -1);
        }
    }

    private static void complete(Recorder recorder, int[] pool, String partition, long[] values, Op.Type[] outcomes, long[] offsets) {
        for (int i = 0; i < values.length; i++) {
            SendValue value = new SendValue(partition, values[i], offsets[i]);
            switch (outcomes[i]) {
                case OK -> recorder.ok(pool[i], Op.Function.SEND, value);
                case FAIL -> recorder.fail(pool[i], Op.Function.SEND, value);
                default -> {
                    recorder.info(pool[i], Op.Function.SEND, value);
                    pool[i] = recorder.newProcess();
                }
            }
        }
    }

    private static void appendLog(Path logFile, List<String> lines) {
        try {
            Files.write(logFile, lines, StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        } catch (IOException e) {
            log.debug("cannot append to {}: {}", logFile, e.toString());
        }
    }
}
