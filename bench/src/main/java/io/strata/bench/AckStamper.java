package io.strata.bench;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * A producer writing continuously to one topic at a fixed rate and stamping every
 * acknowledgement: the failover phase's "next acknowledged write".
 *
 * <p>The producer is idempotent with acks=all and Kafka's default client timeouts
 * (request.timeout.ms 30 s, delivery.timeout.ms 120 s, retries unbounded), bootstrapped from every
 * node. After {@link #mark} (the kill or the pause), {@link #firstAckAfterMarkNanos} is when the
 * first record <em>sent after the mark</em> was acknowledged: such a record cannot have been
 * acknowledged by the stopped leader, whose answers may still sit in the client's socket buffer.
 *
 * <p>Threads: one sender thread (started by the constructor, ended by {@link #close}) and the
 * producer's I/O thread, which runs the callbacks; the getters may be called from any thread. A
 * send that throws ends the sender and is rethrown by {@link #close}.
 */
final class AckStamper implements AutoCloseable {
    private static final int VALUE_BYTES = 100;

    private final String topic;
    private final long intervalNanos;
    private final KafkaProducer<byte[], byte[]> producer;
    private final Thread sender;
    private final AtomicLong acks = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong firstAckAfterMarkNanos = new AtomicLong(-1);
    private final AtomicReference<String> firstError = new AtomicReference<>();
    private volatile long markNanos = Long.MAX_VALUE;
    private volatile boolean stopped;
    private volatile Throwable failure;

    AckStamper(String bootstrap, String topic, int recordsPerSecond) {
        if (recordsPerSecond <= 0) {
            throw new IllegalArgumentException("recordsPerSecond must be positive: recordsPerSecond=" + recordsPerSecond);
        }
        this.topic = topic;
        this.intervalNanos = TimeUnit.SECONDS.toNanos(1) / recordsPerSecond;
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        properties.put(ProducerConfig.CLIENT_ID_CONFIG, "replication-bench-failover");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        this.producer = new KafkaProducer<>(properties);
        this.sender = new Thread(this::sendLoop, "ack-stamper");
        this.sender.setDaemon(true);
        this.sender.start();
    }

    /** From now on, acknowledgements of records sent from {@code nanos} on count as "after the mark". */
    void mark(long nanos) {
        markNanos = nanos;
    }

    long acks() {
        return acks.get();
    }

    long errors() {
        return errors.get();
    }

    String firstError() {
        return firstError.get();
    }

    /** When the first record sent at or after the mark was acknowledged, or -1 (not yet). */
    long firstAckAfterMarkNanos() {
        return firstAckAfterMarkNanos.get();
    }

    private void sendLoop() {
        try {
            long startNanos = System.nanoTime();
            for (long index = 0; !stopped; index++) {
                long waitNanos = startNanos + index * intervalNanos - System.nanoTime();
                if (waitNanos > 0) {
                    LockSupport.parkNanos(waitNanos);
                }
                long sentNanos = System.nanoTime();
                producer.send(new ProducerRecord<>(topic, new byte[VALUE_BYTES]), (metadata, exception) -> {
                    if (exception != null) {
                        errors.incrementAndGet();
                        firstError.compareAndSet(null, exception.toString());
                        return;
                    }
                    acks.incrementAndGet();
                    if (sentNanos >= markNanos) {
                        firstAckAfterMarkNanos.compareAndSet(-1, System.nanoTime());
                    }
                });
            }
        } catch (Throwable t) {
            if (!stopped) {
                failure = t;
            }
        }
    }

    /** Stops sending and closes the producer (records still unacknowledged after 10 s are dropped). */
    @Override
    public void close() throws InterruptedException {
        stopped = true;
        sender.interrupt();
        sender.join(TimeUnit.SECONDS.toMillis(70)); // a send may block up to max.block.ms (60 s)
        producer.close(Duration.ofSeconds(10));
        if (failure != null) {
            throw new IllegalStateException("the failover producer failed after " + acks.get() + " acks", failure);
        }
    }
}
