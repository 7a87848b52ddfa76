package io.strata.chaos.campaign;

import io.strata.chaos.history.Message;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.PollValue;
import io.strata.chaos.history.SendValue;
import io.strata.chaos.workload.Recorder;
import io.strata.chaos.workload.TopicSpec;
import io.strata.chaos.workload.Workload;
import io.strata.chaos.workload.WorkloadContext;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A small workload for the campaign's own tests: one idempotent acks=all producer sending one record at a time
 * (value = a decimal string) to a random partition of {@link #TOPIC}, and one read_uncommitted consumer assigned
 * every partition from its start (no offset reset: an out-of-range fetch is an info, then a seek to the start), each recording its operations. A send is ok with its offset, or info on any error (a timeout
 * or a lost connection may still have written it); a poll is ok with its messages, or info on an error. After
 * an info the thread goes on as a new process.
 */
final class SyncProducerTestWorkload implements Workload {
    static final String TOPIC = "sync-test";
    static final int PARTITIONS = 3;
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(500);
    private static final long SEND_TIMEOUT_MS = 15_000;

    private final long seed;
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicReference<Throwable> crashed = new AtomicReference<>();
    private final List<Thread> threads = new ArrayList<>();

    SyncProducerTestWorkload(long seed) {
        this.seed = seed;
    }

    @Override
    public String name() {
        return "sync-producer";
    }

    @Override
    public List<TopicSpec> topics() {
        return List.of(new TopicSpec(TOPIC, PARTITIONS, (short) 3, Map.of("min.insync.replicas", "2")));
    }

    @Override
    public void start(WorkloadContext context) {
        if (!running.compareAndSet(false, true)) {
            throw new IllegalStateException("already started");
        }
        threads.add(thread("sync-producer", () -> produce(context)));
        threads.add(thread("sync-consumer", () -> consume(context)));
        threads.forEach(Thread::start);
    }

    @Override
    public void stop(Duration timeout) throws InterruptedException {
        running.set(false);
        long deadlineNanos = System.nanoTime() + timeout.toNanos();
        for (Thread thread : threads) {
            thread.join(Math.max(1, (deadlineNanos - System.nanoTime()) / 1_000_000));
        }
        for (Thread thread : threads) {
            if (thread.isAlive()) {
                thread.interrupt();
                thread.join(5_000);
            }
        }
    }

    /** The error that killed a thread of this workload, if any (the campaign test asserts there is none). */
    Throwable crashed() {
        return crashed.get();
    }

    private Thread thread(String name, Runnable body) {
        Thread thread = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable t) {
                crashed.compareAndSet(null, t);
                throw t;
            }
        }, name);
        thread.setDaemon(true);
        return thread;
    }

    private void produce(WorkloadContext context) {
        Recorder recorder = context.recorder();
        Random random = new Random(seed);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties(context.bootstrapServers()))) {
            int process = recorder.newProcess();
            while (running.get()) {
                int partition = random.nextInt(PARTITIONS);
                String name = TOPIC + "-" + partition;
                long value = recorder.nextValue();
                recorder.invoke(process, Op.Function.SEND, new SendValue(name, value, -1));
                try {
                    RecordMetadata metadata = producer.send(new ProducerRecord<>(TOPIC, partition, null, Long.toString(value)))
                        .get(SEND_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                    recorder.ok(process, Op.Function.SEND, new SendValue(name, value, metadata.offset()));
                } catch (InterruptedException e) {
                    recorder.info(process, Op.Function.SEND, new SendValue(name, value, -1));
                    return;
                } catch (Exception e) {
                    recorder.info(process, Op.Function.SEND, new SendValue(name, value, -1));
                    process = recorder.newProcess();
                }
            }
        }
    }

    private void consume(WorkloadContext context) {
        Recorder recorder = context.recorder();
        List<TopicPartition> partitions = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new TopicPartition(TOPIC, p));
        }
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProperties(context.bootstrapServers()))) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            int process = recorder.newProcess();
            while (running.get()) {
                recorder.invoke(process, Op.Function.POLL, new PollValue(false, List.of()));
                try {
                    List<Message> messages = new ArrayList<>();
                    for (ConsumerRecord<String, String> record : consumer.poll(POLL_TIMEOUT)) {
                        messages.add(new Message(record.topic() + "-" + record.partition(), record.offset(), Long.parseLong(record.value())));
                    }
                    recorder.ok(process, Op.Function.POLL, new PollValue(false, messages));
                } catch (OffsetOutOfRangeException e) {
                    // An info ends the consumer's run of polls, so reading again from the start is no anomaly.
                    recorder.info(process, Op.Function.POLL, new PollValue(false, List.of()));
                    process = recorder.newProcess();
                    consumer.seekToBeginning(e.partitions());
                } catch (RuntimeException e) {
                    recorder.info(process, Op.Function.POLL, new PollValue(false, List.of()));
                    process = recorder.newProcess();
                }
            }
        }
    }

    private static Properties producerProperties(String bootstrap) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ProducerConfig.CLIENT_ID_CONFIG, "sync-producer");
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        properties.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        properties.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
        properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "6000");
        properties.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "5000");
        properties.put(ProducerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "2000");
        properties.put(ProducerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "2000");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return properties;
    }

    private static Properties consumerProperties(String bootstrap) {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ConsumerConfig.CLIENT_ID_CONFIG, "sync-consumer");
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        properties.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "4000");
        properties.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "5000");
        properties.put(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "2000");
        properties.put(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "2000");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return properties;
    }
}
