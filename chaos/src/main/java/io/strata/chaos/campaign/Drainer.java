package io.strata.chaos.campaign;

import io.strata.chaos.history.DrainValue;
import io.strata.chaos.history.Message;
import io.strata.chaos.history.Op;
import io.strata.chaos.workload.Recorder;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The final read of a run: after the workloads stopped and the cluster healed, every partition from its log start
 * to its end, once with {@code read_uncommitted} (to the high watermark) and once with {@code read_committed}
 * (to the last stable offset, after waiting — bounded — for open transactions to end, i.e. for the LSO to reach
 * the high watermark). Each drain is one {@code drain} op of a fresh process: ok with every message and the end
 * offsets it reached when it reached every end within its time, else {@code info} (the checkers count only ok
 * drains, so a drain cut short never makes writes look lost). Values are decoded by {@link ValueCodec}.
 *
 * <p>Not thread-safe; one drain at a time.
 */
public final class Drainer {
    private static final Logger log = LoggerFactory.getLogger(Drainer.class);
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(500);
    private static final long LSO_POLL_MS = 500;

    private final String bootstrapServers;
    private final Recorder recorder;
    private final Duration timeout;

    /** Each drain (and the read_committed one's wait for the LSO) gives up after {@code timeout}. */
    public Drainer(String bootstrapServers, Recorder recorder, Duration timeout) {
        this.bootstrapServers = bootstrapServers;
        this.recorder = recorder;
        this.timeout = timeout;
    }

    /**
     * What one drain read.
     *
     * @param readCommitted its isolation
     * @param complete whether it reached every partition's end (recorded ok) or not (recorded info)
     * @param messages how many messages it read
     * @param endOffsets per partition, the end offset it aimed at
     * @param undecodable records whose value {@link ValueCodec} could not read (left out of the history)
     */
    public record Result(boolean readCommitted, boolean complete, long messages, Map<String, Long> endOffsets, long undecodable) {
    }

    /** Drains {@code partitions} with read_uncommitted, then with read_committed. */
    public List<Result> drainBoth(List<TopicPartition> partitions) throws InterruptedException {
        return List.of(drain(partitions, false), drain(partitions, true));
    }

    /** One drain of every partition with the given isolation, recorded in the history. */
    public Result drain(List<TopicPartition> partitions, boolean readCommitted) throws InterruptedException {
        int process = recorder.newProcess();
        recorder.invoke(process, Op.Function.DRAIN, new DrainValue(readCommitted, List.of(), Map.of()));
        long deadlineNanos = System.nanoTime() + timeout.toNanos();
        List<Message> messages = new ArrayList<>();
        Map<String, Long> ends = new TreeMap<>();
        long undecodable = 0;
        boolean complete = false;
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(readCommitted)) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> endOffsets = readCommitted
                ? awaitStableEnds(consumer, partitions, deadlineNanos) : consumer.endOffsets(partitions, remaining(deadlineNanos));
            endOffsets.forEach((tp, end) -> ends.put(tp.toString(), end));
            while (!reachedEnds(consumer, endOffsets) && System.nanoTime() - deadlineNanos < 0) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL_TIMEOUT)) {
                    OptionalLong value = ValueCodec.decode(record.value());
                    if (value.isEmpty()) {
                        undecodable++;
                        continue;
                    }
                    messages.add(new Message(record.topic() + "-" + record.partition(), record.offset(), value.getAsLong()));
                }
            }
            complete = reachedEnds(consumer, endOffsets);
        } catch (RuntimeException e) {
            log.warn("drain (readCommitted={}) failed after {} messages", readCommitted, messages.size(), e);
        }
        DrainValue value = new DrainValue(readCommitted, messages, complete ? ends : Map.of());
        if (complete) {
            recorder.ok(process, Op.Function.DRAIN, value);
        } else {
            recorder.info(process, Op.Function.DRAIN, value);
        }
        if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedException("interrupted while draining");
        }
        return new Result(readCommitted, complete, messages.size(), ends, undecodable);
    }

    /**
     * The read_committed end offsets once they equal the read_uncommitted ones (no transaction left open), or the
     * last ones seen at the deadline's half (the drain itself needs the rest).
     */
    private Map<TopicPartition, Long> awaitStableEnds(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> partitions,
                                                      long deadlineNanos) throws InterruptedException {
        long waitUntilNanos = System.nanoTime() + (deadlineNanos - System.nanoTime()) / 2;
        try (KafkaConsumer<byte[], byte[]> uncommitted = consumer(false)) {
            while (true) {
                Map<TopicPartition, Long> stable = consumer.endOffsets(partitions, remaining(deadlineNanos));
                Map<TopicPartition, Long> high = uncommitted.endOffsets(partitions, remaining(deadlineNanos));
                if (stable.equals(high) || System.nanoTime() - waitUntilNanos > 0) {
                    if (!stable.equals(high)) {
                        log.warn("read_committed drain: last stable offsets {} still below high watermarks {}", stable, high);
                    }
                    return stable;
                }
                Thread.sleep(LSO_POLL_MS);
            }
        }
    }

    private static boolean reachedEnds(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> endOffsets) {
        for (Map.Entry<TopicPartition, Long> end : endOffsets.entrySet()) {
            if (consumer.position(end.getKey(), Duration.ofSeconds(5)) < end.getValue()) {
                return false;
            }
        }
        return true;
    }

    private static Duration remaining(long deadlineNanos) {
        return Duration.ofNanos(Math.max(1_000_000, deadlineNanos - System.nanoTime()));
    }

    private KafkaConsumer<byte[], byte[]> consumer(boolean readCommitted) {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        properties.put(ConsumerConfig.CLIENT_ID_CONFIG, "chaos-drain-" + (readCommitted ? "committed" : "uncommitted"));
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, readCommitted ? "read_committed" : "read_uncommitted");
        properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        properties.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        properties.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return new KafkaConsumer<>(properties);
    }
}
