package io.strata.chaos.workload;

import io.strata.chaos.history.Op;
import io.strata.chaos.history.SendValue;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One idempotent acks=all producer sending unique values to random partitions of one topic, each send recorded
 * as a {@code send} op (invoke before {@code send()}, completion in its callback, classified by
 * {@link Outcomes#send}).
 *
 * <p>In-flight bound and process ids: the producer has {@code maxInFlight} slots, each holding a process id; a
 * send takes a free slot and returns it when it completes, so a process id has at most one send in flight (what
 * the checker assumes) while the producer still pipelines up to {@code maxInFlight} records (what exercises its
 * sequence numbers). A slot whose send ended info gets a fresh process id: that record may still appear.
 *
 * <p>Replacement: after an error that leaves the producer unusable ({@link Outcomes#producerUnusable}) the loop
 * closes it (its pending sends complete info) and builds a new one, which gets a new producer id.
 *
 * <p>Threads: one loop thread invokes sends; callbacks run on the producer's I/O thread (or on the loop thread
 * inside {@code send()}, or on the stopping thread inside {@code close()}); each op completes exactly once
 * (first wins), and {@link #stop} records every op still open as info.
 */
final class ProducerLoop {
    private static final Logger log = LoggerFactory.getLogger(ProducerLoop.class);
    /** Between two attempts to build a producer whose constructor threw. */
    private static final long REBUILD_BACKOFF_MS = 500;
    /** How long the loop waits for a free slot before looking at the stop flag again. */
    private static final long SLOT_POLL_MS = 100;

    private final String name;
    private final Properties properties;
    private final String topic;
    private final int partitions;
    private final Recorder recorder;
    private final Random random;
    private final long pauseMsMax;
    private final BlockingQueue<int[]> freeSlots;
    private final Set<PendingSend> pending = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean replaceProducer = new AtomicBoolean();
    private volatile boolean running;
    private volatile KafkaProducer<byte[], byte[]> producer;
    private Thread thread;

    /**
     * @param pauseMsMax a seeded pause of 0..pauseMsMax ms between sends keeps the load moderate on a small box
     */
    ProducerLoop(String name, Properties properties, String topic, int partitions, int maxInFlight, Recorder recorder,
                 Random random, long pauseMsMax) {
        if (maxInFlight < 1 || maxInFlight > 5) {
            throw new IllegalArgumentException("maxInFlight must be 1..5 (an idempotent producer keeps at most 5 batches in flight): maxInFlight=" + maxInFlight);
        }
        this.name = name;
        this.properties = properties;
        this.topic = topic;
        this.partitions = partitions;
        this.recorder = recorder;
        this.random = random;
        this.pauseMsMax = pauseMsMax;
        this.freeSlots = new ArrayBlockingQueue<>(maxInFlight);
        for (int i = 0; i < maxInFlight; i++) {
            freeSlots.add(new int[] {recorder.newProcess()});
        }
    }

    synchronized void start() {
        if (thread != null) {
            throw new IllegalStateException("producer loop " + name + " already started");
        }
        running = true;
        thread = new Thread(this::runSafely, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Stops invoking new sends (returns at once); {@link #stop} then waits for the open ones. */
    void requestStop() {
        running = false;
    }

    /** Stops sending, waits up to {@code timeout} for open sends, closes the producer; every op left open ends info. */
    void stop(Duration timeout) throws InterruptedException {
        long deadlineNanos = System.nanoTime() + timeout.toNanos();
        running = false;
        Thread loop;
        synchronized (this) {
            loop = thread;
        }
        if (loop != null) {
            loop.join(Math.max(1, timeout.toMillis()));
            if (loop.isAlive()) {
                loop.interrupt();
                loop.join(1_000);
            }
        }
        while (!pending.isEmpty() && System.nanoTime() - deadlineNanos < 0) {
            Thread.sleep(20);
        }
        closeProducer(Duration.ZERO);
        for (PendingSend send : pending) {
            complete(send, null, new KafkaException("still in flight when the workload stopped"), false);
        }
    }

    private void runSafely() {
        try {
            run();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            // Background work never dies silently: the stop() caller sees the log, the history shows ops stop.
            log.error("producer loop {} died", name, e);
            throw e;
        }
    }

    private void run() throws InterruptedException {
        while (running) {
            int[] slot = freeSlots.poll(SLOT_POLL_MS, TimeUnit.MILLISECONDS);
            if (slot == null) {
                continue;
            }
            KafkaProducer<byte[], byte[]> current = producerOrNull();
            if (current == null) {
                freeSlots.add(slot);
                Thread.sleep(REBUILD_BACKOFF_MS);
                continue;
            }
            sendOne(current, slot);
            if (pauseMsMax > 0) {
                Thread.sleep(random.nextLong(pauseMsMax + 1));
            }
        }
    }

    private void sendOne(KafkaProducer<byte[], byte[]> current, int[] slot) {
        int partition = random.nextInt(partitions);
        PendingSend send = new PendingSend(slot, RecordValues.partition(topic, partition), recorder.nextValue());
        pending.add(send);
        recorder.invoke(slot[0], Op.Function.SEND, new SendValue(send.partition, send.value, -1));
        try {
            current.send(new ProducerRecord<>(topic, partition, null, RecordValues.encode(send.value)),
                    (metadata, error) -> complete(send, metadata, error, !send.sendReturned && Thread.currentThread() == thread));
        } catch (RuntimeException e) {
            complete(send, null, e, true);
        } finally {
            send.sendReturned = true;
        }
    }

    private void complete(PendingSend send, RecordMetadata metadata, Exception error, boolean beforeAppend) {
        if (!send.completed.compareAndSet(false, true)) {
            return;
        }
        pending.remove(send);
        int process = send.slot[0];
        if (error == null) {
            long offset = metadata.hasOffset() ? metadata.offset() : -1;
            recorder.ok(process, Op.Function.SEND, new SendValue(send.partition, send.value, offset));
        } else if (Outcomes.send(error, beforeAppend) == Op.Type.FAIL) {
            recorder.fail(process, Op.Function.SEND, new SendValue(send.partition, send.value, -1));
        } else {
            recorder.info(process, Op.Function.SEND, new SendValue(send.partition, send.value, -1));
            send.slot[0] = recorder.newProcess();
        }
        if (error != null) {
            log.debug("{}: send of {} to {} ended {}", name, send.value, send.partition, error.toString());
            if (Outcomes.producerUnusable(error)) {
                replaceProducer.set(true);
            }
        }
        freeSlots.add(send.slot);
    }

    /** The producer, built (or rebuilt after a fatal error) on the loop thread; null when building failed. */
    private KafkaProducer<byte[], byte[]> producerOrNull() {
        if (replaceProducer.getAndSet(false)) {
            closeProducer(Duration.ZERO);
        }
        if (producer == null) {
            try {
                producer = new KafkaProducer<>(properties);
            } catch (KafkaException e) {
                log.warn("{}: cannot build a producer: {}", name, e.toString());
                return null;
            }
        }
        return producer;
    }

    private synchronized void closeProducer(Duration timeout) {
        KafkaProducer<byte[], byte[]> old = producer;
        producer = null;
        if (old != null) {
            try {
                old.close(timeout);
            } catch (RuntimeException e) {
                log.warn("{}: closing the producer: {}", name, e.toString());
            }
        }
    }

    /** One send between its invoke and its completion. */
    private static final class PendingSend {
        final int[] slot;
        final String partition;
        final long value;
        final AtomicBoolean completed = new AtomicBoolean();
        volatile boolean sendReturned;

        PendingSend(int[] slot, String partition, long value) {
            this.slot = slot;
            this.partition = partition;
            this.value = value;
        }
    }
}
