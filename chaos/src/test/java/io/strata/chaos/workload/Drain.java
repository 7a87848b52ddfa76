package io.strata.chaos.workload;

import io.strata.chaos.history.DrainValue;
import io.strata.chaos.history.Message;
import io.strata.chaos.history.Op;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The tests' final read: every partition of the given topics from offset 0 to the end offset the consumer sees
 * at the start (the last stable offset with read_committed, the high watermark otherwise), recorded as one
 * {@code drain} op of a new process. Throws if the end is not reached within the timeout. (The campaign has
 * its own drainer in {@code io.strata.chaos.campaign}; this one stays in test scope.)
 */
final class Drain {
    private static final Duration POLL = Duration.ofMillis(500);

    private Drain() {
    }

    static void drain(String bootstrapServers, Recorder recorder, List<TopicSpec> topics, boolean readCommitted, Duration timeout) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (TopicSpec topic : topics) {
            for (int p = 0; p < topic.partitions(); p++) {
                partitions.add(new TopicPartition(topic.name(), p));
            }
        }
        int process = recorder.newProcess();
        recorder.invoke(process, Op.Function.DRAIN, new DrainValue(readCommitted, List.of(), Map.of()));
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(ClientConfigs.consumer(bootstrapServers, "chaos-drain", null, null,
                readCommitted, 2_000))) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, timeout);
            Map<TopicPartition, List<Message>> read = new LinkedHashMap<>();
            partitions.forEach(tp -> read.put(tp, new ArrayList<>()));
            long deadlineNanos = System.nanoTime() + timeout.toNanos();
            while (!reachedEnd(consumer, partitions, end)) {
                if (System.nanoTime() - deadlineNanos > 0) {
                    throw new AssertionError("drain (readCommitted=" + readCommitted + ") did not reach " + end + " within " + timeout);
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
                    TopicPartition tp = new TopicPartition(record.topic(), record.partition());
                    if (record.offset() < end.get(tp)) {
                        read.get(tp).add(new Message(RecordValues.partition(record.topic(), record.partition()), record.offset(),
                                RecordValues.decode(record.value())));
                    }
                }
            }
            List<Message> messages = new ArrayList<>();
            Map<String, Long> endOffsets = new LinkedHashMap<>();
            read.forEach((tp, list) -> {
                list.sort(Comparator.comparingLong(Message::offset));
                messages.addAll(list);
                endOffsets.put(RecordValues.partition(tp.topic(), tp.partition()), end.get(tp));
            });
            recorder.ok(process, Op.Function.DRAIN, new DrainValue(readCommitted, messages, endOffsets));
        }
    }

    private static boolean reachedEnd(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> partitions, Map<TopicPartition, Long> end) {
        for (TopicPartition tp : partitions) {
            if (consumer.position(tp) < end.get(tp)) {
                return false;
            }
        }
        return true;
    }
}
