package io.strata.tools;

import io.strata.common.Time;
import io.strata.tools.client.ClientLimits;
import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.ConsumedRecord;
import io.strata.tools.client.IsolationLevel;
import io.strata.tools.client.TopicConsumer;
import io.strata.tools.client.TopicInfo;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.BufferedOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code strata consume TOPIC}: prints records to stdout (UTF-8), one line each, from all
 * partitions of the topic or one. Without {@code --group}, positions start where the options
 * say (default: the end, like Kafka's console consumer) and are not committed. With
 * {@code --group NAME} the command is a member of that consumer group (consumer protocol): it
 * reads the partitions the coordinator assigns, starts each at the group's committed offset
 * (else at the beginning with {@code --from-beginning}, or the end), and commits what it printed
 * (see {@link GroupConsumption}); Ctrl-C commits and leaves the group before exiting.
 *
 * <p>Stops after {@code --max-messages} records, after {@code --timeout-ms} without a new
 * record, when stdout is closed (piped into {@code head}), or on Ctrl-C; otherwise it waits
 * for new records forever. Output is flushed after every fetch.
 */
@Command(name = "consume", description = "Print records of a topic to stdout, one per line.")
final class ConsumeCommand implements Callable<Integer> {
    /** How long Ctrl-C waits for the poll loop (at most one fetch wait) to commit and leave the group. */
    static final long SHUTDOWN_WAIT_MS = 10_000;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic to read.")
    String topic;

    @Option(names = "--from-beginning", description = "Start at the earliest offset (default: only records that arrive from now on).")
    boolean fromBeginning;

    @Option(names = "--offset", paramLabel = "N", description = "Start at offset N of the partition given with --partition.")
    Long offset;

    @Option(names = "--partition", paramLabel = "N", description = "Read only partition N (default: every partition).")
    Integer partition;

    @Option(names = "--from-timestamp", paramLabel = "MS",
        description = "Start at the first record with a timestamp at or after MS (epoch milliseconds).")
    Long fromTimestamp;

    @Option(names = {"-n", "--max-messages"}, paramLabel = "N", description = "Exit after N records.")
    Long maxMessages;

    @Option(names = "--timeout-ms", paramLabel = "MS", description = "Exit when no new record has arrived for MS milliseconds.")
    Long timeoutMs;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "value", converter = RecordFormat.Converter.class,
        completionCandidates = RecordFormat.Candidates.class,
        description = "value, key-value (key TAB value) or json (default: ${DEFAULT-VALUE}).")
    RecordFormat format;

    @Option(names = {"-g", "--group"}, paramLabel = "NAME",
        description = "Consume as a member of consumer group NAME, committing offsets (consumer protocol).")
    String group;

    @Option(names = "--isolation", paramLabel = "LEVEL", defaultValue = "read_uncommitted", converter = IsolationConverter.class,
        description = "read_uncommitted, or read_committed to skip aborted transactions and wait for open ones (default: ${DEFAULT-VALUE}).")
    IsolationLevel isolation;

    private long consumedCount;
    /** Set by the shutdown hook (Ctrl-C, SIGTERM) when consuming in a group: stop, commit, leave. */
    private volatile boolean stopping;

    /** Where records come from: a fixed set of partitions, or a group member's assignment. */
    interface RecordSource extends AutoCloseable {
        /** The next records, waiting up to {@code maxWaitMs} for some. */
        List<ConsumedRecord> poll(int maxWaitMs);

        /** {@code record}, returned by the last poll, was printed (called in the order poll returned them). */
        void printed(ConsumedRecord record);

        @Override
        void close();
    }

    @Override
    public Integer call() {
        checkOptions();
        Time time = Time.SYSTEM;
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out, 64 * 1024), false, StandardCharsets.UTF_8);
        try (ClusterClient cluster = connection.connect()) {
            RecordSource source = group != null ? startGroupConsumer(cluster) : startConsumer(cluster);
            CountDownLatch done = new CountDownLatch(1);
            Thread hook = group == null ? null : new Thread(() -> stopAndWait(done), "strata-consume-shutdown");
            if (hook != null) {
                Runtime.getRuntime().addShutdownHook(hook);
            }
            try {
                printRecords(source, out, time);
            } finally {
                out.flush();
                try {
                    source.close();
                } finally {
                    done.countDown();
                    System.err.println("strata: consumed " + consumedCount + (consumedCount == 1 ? " record" : " records"));
                    removeHook(hook);
                }
            }
        }
        return 0;
    }

    /** The shutdown hook: asks the poll loop to stop and gives it time to commit and leave the group. */
    private void stopAndWait(CountDownLatch done) {
        stopping = true;
        try {
            done.await(SHUTDOWN_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void removeHook(Thread hook) {
        if (hook == null) {
            return;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // The JVM is already shutting down: the hook is running and will find the loop done.
        }
    }

    /** Polls and prints until -n records, the idle timeout, a closed stdout or a shutdown; counts into {@link #consumedCount}. */
    private void printRecords(RecordSource consumer, PrintStream out, Time time) {
        long lastRecordMs = time.hiResClockMs();
        while ((maxMessages == null || consumedCount < maxMessages) && !stopping) {
            long idleMs = time.hiResClockMs() - lastRecordMs;
            if (timeoutMs != null && idleMs >= timeoutMs) {
                return;
            }
            int waitMs = timeoutMs == null ? ClientLimits.FETCH_MAX_WAIT_MS
                : (int) Math.max(0, Math.min(ClientLimits.FETCH_MAX_WAIT_MS, timeoutMs - idleMs));
            List<ConsumedRecord> records = consumer.poll(waitMs);
            for (ConsumedRecord record : records) {
                if (maxMessages != null && consumedCount >= maxMessages) {
                    break;
                }
                out.print(format.format(record));
                out.print('\n');
                consumer.printed(record);
                consumedCount++;
            }
            // System.out is itself a PrintStream that swallows write errors; ask it too.
            if (out.checkError() || System.out.checkError()) {
                return; // stdout is gone (e.g. piped into head): nobody reads what follows
            }
            if (!records.isEmpty()) {
                lastRecordMs = time.hiResClockMs();
            }
        }
    }

    private void checkOptions() {
        int starts = (fromBeginning ? 1 : 0) + (offset != null ? 1 : 0) + (fromTimestamp != null ? 1 : 0);
        if (starts > 1) {
            throw usage("choose one of --from-beginning, --offset and --from-timestamp");
        }
        if (group != null && (partition != null || offset != null || fromTimestamp != null)) {
            throw usage("--group reads the partitions the group assigns: it cannot be combined with --partition, --offset or --from-timestamp");
        }
        if (group != null && group.isBlank()) {
            throw usage("--group must not be empty");
        }
        if (offset != null && partition == null) {
            throw usage("--offset needs --partition");
        }
        if (offset != null && offset < 0) {
            throw usage("--offset must not be negative, got " + offset);
        }
        if (partition != null && partition < 0) {
            throw usage("--partition must not be negative, got " + partition);
        }
        if (fromTimestamp != null && fromTimestamp < 0) {
            throw usage("--from-timestamp must not be negative, got " + fromTimestamp);
        }
        if (maxMessages != null && maxMessages <= 0) {
            throw usage("--max-messages must be positive, got " + maxMessages);
        }
        if (timeoutMs != null && timeoutMs <= 0) {
            throw usage("--timeout-ms must be positive, got " + timeoutMs);
        }
    }

    private CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    private RecordSource startGroupConsumer(ClusterClient cluster) {
        TopicInfo info = cluster.topic(topic, false);
        return new GroupConsumption(cluster, group, info, newMemberId(), isolation,
            fromBeginning ? TopicConsumer.OffsetReset.EARLIEST : TopicConsumer.OffsetReset.LATEST,
            notice -> System.err.println("strata: " + notice));
    }

    /** A random member id in the form Kafka's consumer uses (a UUID in URL-safe base64 without padding). */
    static String newMemberId() {
        byte[] bytes = new byte[16];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private RecordSource startConsumer(ClusterClient cluster) {
        TopicInfo info = cluster.topic(topic, false);
        List<Integer> partitions = new ArrayList<>();
        if (partition != null) {
            partitions.add(info.partition(partition).partition());
        } else {
            for (int i = 0; i < info.partitionCount(); i++) {
                partitions.add(i);
            }
        }
        TopicConsumer consumer = new TopicConsumer(cluster, info, partitions, isolation,
            fromBeginning ? TopicConsumer.OffsetReset.EARLIEST : TopicConsumer.OffsetReset.LATEST,
            notice -> System.err.println("strata: " + notice));
        if (offset != null) {
            consumer.seek(partition, offset);
        } else if (fromBeginning) {
            consumer.seekToBeginning();
        } else if (fromTimestamp != null) {
            consumer.seekToTimestamp(fromTimestamp);
        } else {
            consumer.seekToEnd();
        }
        return new RecordSource() {
            @Override
            public List<ConsumedRecord> poll(int maxWaitMs) {
                return consumer.poll(maxWaitMs);
            }

            @Override
            public void printed(ConsumedRecord record) {
                // Nothing is committed without a group.
            }

            @Override
            public void close() {
            }
        };
    }

    /** read_committed or read_uncommitted, as Kafka's isolation.level spells them. */
    static final class IsolationConverter implements CommandLine.ITypeConverter<IsolationLevel> {
        @Override
        public IsolationLevel convert(String value) {
            return switch (value.toLowerCase(Locale.ROOT)) {
                case "read_committed" -> IsolationLevel.READ_COMMITTED;
                case "read_uncommitted" -> IsolationLevel.READ_UNCOMMITTED;
                default -> throw new CommandLine.TypeConversionException("expected read_committed or read_uncommitted, got '" + value + "'");
            };
        }
    }
}
