package io.strata.chaos.workload;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * {@code producers} idempotent acks=all producers ({@link ProducerLoop}), each sending unique values to random
 * partitions of one topic (RF 3, {@code min.insync.replicas=2}) with up to {@link #MAX_IN_FLIGHT} sends in
 * flight, one process id per outstanding send. What it finds: lost acknowledged writes, duplicates (a retried
 * batch written twice), inconsistent offsets, gaps.
 *
 * <p>Thread-safe: {@link #start} and {@link #stop} are synchronized.
 */
public final class IdempotentProducerWorkload implements Workload {
    /** Sends in flight per producer: as many as the producer pipelines batches (5), less one for some idle time. */
    static final int MAX_IN_FLIGHT = 4;
    /** Up to this pause between two sends of one producer; about 200 sends/s per producer on average. */
    static final long PAUSE_MS_MAX = 8;

    private final String topic;
    private final int partitions;
    private final int producers;
    private final int deliveryTimeoutMs;
    private final int requestTimeoutMs;
    private final List<ProducerLoop> loops = new ArrayList<>();
    private boolean started;
    private boolean stopped;

    public IdempotentProducerWorkload(String topic, int partitions, int producers) {
        this(topic, partitions, producers, ClientConfigs.DELIVERY_TIMEOUT_MS, ClientConfigs.REQUEST_TIMEOUT_MS);
    }

    /**
     * @param deliveryTimeoutMs the producers' {@code delivery.timeout.ms}, at least {@code requestTimeoutMs} +
     *     {@code linger.ms}; shorter than a leader failover means info outcomes when a leader dies
     * @param requestTimeoutMs the producers' {@code request.timeout.ms}
     */
    public IdempotentProducerWorkload(String topic, int partitions, int producers, int deliveryTimeoutMs, int requestTimeoutMs) {
        if (requestTimeoutMs < 1 || deliveryTimeoutMs < requestTimeoutMs + ClientConfigs.LINGER_MS) {
            throw new IllegalArgumentException("deliveryTimeoutMs must be >= requestTimeoutMs + linger.ms (" + ClientConfigs.LINGER_MS
                    + "): deliveryTimeoutMs=" + deliveryTimeoutMs + " requestTimeoutMs=" + requestTimeoutMs);
        }
        this.deliveryTimeoutMs = deliveryTimeoutMs;
        this.requestTimeoutMs = requestTimeoutMs;
        if (partitions < 1 || producers < 1) {
            throw new IllegalArgumentException("partitions and producers must be >= 1: partitions=" + partitions + " producers=" + producers);
        }
        this.topic = topic;
        this.partitions = partitions;
        this.producers = producers;
    }

    @Override
    public String name() {
        return "idempotent-producer";
    }

    @Override
    public List<TopicSpec> topics() {
        return List.of(new TopicSpec(topic, partitions, (short) 3, Map.of("min.insync.replicas", "2")));
    }

    @Override
    public synchronized void start(WorkloadContext context) {
        if (started) {
            throw new IllegalStateException("workload " + name() + " already started");
        }
        started = true;
        Random seeds = new Random(context.seed());
        for (int i = 0; i < producers; i++) {
            String clientId = "chaos-idempotent-" + i;
            java.util.Properties properties = ClientConfigs.idempotentProducer(context.bootstrapServers(), clientId);
            properties.put(org.apache.kafka.clients.producer.ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Integer.toString(deliveryTimeoutMs));
            properties.put(org.apache.kafka.clients.producer.ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Integer.toString(requestTimeoutMs));
            loops.add(new ProducerLoop(clientId, properties, topic,
                    partitions, MAX_IN_FLIGHT, context.recorder(), new Random(seeds.nextLong()), PAUSE_MS_MAX));
        }
        loops.forEach(ProducerLoop::start);
    }

    @Override
    public synchronized void stop(Duration timeout) throws InterruptedException {
        if (stopped || !started) {
            stopped = true;
            return;
        }
        stopped = true;
        long deadlineNanos = System.nanoTime() + timeout.toNanos();
        loops.forEach(ProducerLoop::requestStop);
        for (ProducerLoop loop : loops) {
            loop.stop(Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime())));
        }
    }
}
