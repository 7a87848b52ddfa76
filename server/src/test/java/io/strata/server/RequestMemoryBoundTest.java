package io.strata.server;

import io.netty.buffer.PooledByteBufAllocator;
import io.strata.common.Time;
import io.strata.protocol.Frames;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ProduceRequestData;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.server.metrics.ExpositionFormat;
import io.strata.server.network.RequestMemoryPool;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where the request memory bound bites: the request handlers are slow, and many raw
 * connections pipeline large valid Produce requests without reading a response. The bytes the
 * broker buffers for requests never exceed {@code queued.max.request.bytes} (the pool's own
 * high-water mark, its metric, and Netty's direct memory, which does not depend on the pool's
 * bookkeeping), the broker stays up, a Java producer and consumer round-trip records while the
 * flood is under way and after it, and every flooded request is eventually appended.
 *
 * <p>Slow handlers: the broker's injected clock takes {@link #HANDLER_CLOCK_DELAY_MS} per read
 * on a request handler thread. Appends read it under the partition lock, so Produce requests to
 * the flooded partition take at least that long each, one at a time.
 */
class RequestMemoryBoundTest {
    private static final int MAX_REQUEST_BYTES = 512 * 1024;
    private static final long POOL_BYTES = 1024 * 1024;
    private static final int VALUE_BYTES = 64 * 1024;
    private static final int FLOOD_CONNECTIONS = 32;
    private static final int FRAMES_PER_CONNECTION = 40;
    private static final long HANDLER_CLOCK_DELAY_MS = 3;
    /**
     * Netty direct memory beyond the pool's bound that frames do not account for: the pooled
     * allocator's chunks (4 MiB each, per arena of the event loop and handler threads that
     * allocate responses), read buffers and responses.
     */
    private static final long DIRECT_MEMORY_SLACK_BYTES = 8L * 1024 * 1024;
    private static final long TIMEOUT_MS = 120_000;
    /** Between two samples, and between two checks of a condition waited for (not a wait for an event: a polling period). */
    private static final long SAMPLE_INTERVAL_NANOS = 200_000;

    @TempDir
    Path dataDir;

    /** The system clock, except that on request handler threads each read takes a while. */
    private static final class SlowHandlersClock implements Time {
        volatile boolean slow = true;

        @Override
        public long milliseconds() {
            if (slow && Thread.currentThread().getName().startsWith("strata-request-handler-")) {
                try {
                    Time.SYSTEM.sleep(HANDLER_CLOCK_DELAY_MS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return Time.SYSTEM.milliseconds();
        }

        @Override
        public long nanoseconds() {
            return Time.SYSTEM.nanoseconds();
        }

        @Override
        public void sleep(long ms) throws InterruptedException {
            Time.SYSTEM.sleep(ms);
        }
    }

    /** Samples the pool and Netty's direct memory until stopped, keeping the maxima. */
    private static final class Sampler extends Thread {
        final RequestMemoryPool pool;
        final long directBaselineBytes;
        final AtomicLong maxUsedBytes = new AtomicLong();
        final AtomicLong maxDirectAboveBaselineBytes = new AtomicLong();
        final AtomicLong samples = new AtomicLong();
        volatile boolean running = true;

        Sampler(RequestMemoryPool pool) {
            super("memory-sampler");
            this.pool = pool;
            this.directBaselineBytes = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
            setDaemon(true);
        }

        @Override
        public void run() {
            while (running) {
                maxUsedBytes.accumulateAndGet(pool.usedBytes(), Math::max);
                long direct = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory() - directBaselineBytes;
                maxDirectAboveBaselineBytes.accumulateAndGet(direct, Math::max);
                samples.incrementAndGet();
                LockSupport.parkNanos(SAMPLE_INTERVAL_NANOS);
            }
        }
    }

    @Test
    void pipelinedLargeProducesNeverBufferMoreThanTheBoundAndOtherClientsKeepWorking() throws Exception {
        SlowHandlersClock clock = new SlowHandlersClock();
        clock.slow = false;
        try (TestBroker broker = new TestBroker(dataDir, Map.of("socket.request.max.bytes", Integer.toString(MAX_REQUEST_BYTES),
            "queued.max.request.bytes", Long.toString(POOL_BYTES), "metrics.enabled", "true", "metrics.listener", "http://127.0.0.1:0"), clock)) {
            broker.createTopic("flood", 1, Map.of());
            broker.createTopic("normal", 1, Map.of());
            RequestMemoryPool pool = broker.server().socketServer().memoryPool();
            assertThat(pool.capacityBytes()).isEqualTo(POOL_BYTES);
            roundTrip(broker, "before", 5);

            clock.slow = true;
            Sampler sampler = new Sampler(pool);
            sampler.start();
            List<Socket> sockets = new ArrayList<>();
            List<Thread> writers = new ArrayList<>();
            AtomicReference<Throwable> writeFailure = new AtomicReference<>();
            try {
                for (int i = 0; i < FLOOD_CONNECTIONS; i++) {
                    Socket socket = new Socket();
                    socket.connect(new InetSocketAddress("127.0.0.1", broker.port()), 10_000);
                    sockets.add(socket);
                    Thread writer = new Thread(() -> pipelineProduces(socket, writeFailure), "flood-writer-" + i);
                    writer.setDaemon(true);
                    writers.add(writer);
                    writer.start();
                }
                waitFor(() -> pool.waitingCount() > 0 && pool.availableBytes() < MAX_REQUEST_BYTES, "the pool to fill: " + pool);
                assertBoundInMetrics(broker);

                // While connections wait for request memory, a client's requests still get their turn.
                long roundTripStart = System.nanoTime();
                roundTrip(broker, "during", 5);
                long appendedAfterRoundTrip = broker.log("flood", 0).logEndOffset();
                System.out.printf("round trip during the flood: %d ms; flooded produces appended by then: %d of %d; %s%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - roundTripStart), appendedAfterRoundTrip,
                    FLOOD_CONNECTIONS * FRAMES_PER_CONNECTION, pool);
                assertThat(appendedAfterRoundTrip).as("the flood was still under way when the round trip finished")
                    .isLessThan((long) FLOOD_CONNECTIONS * FRAMES_PER_CONNECTION);

                clock.slow = false;
                waitFor(() -> broker.log("flood", 0).logEndOffset() == (long) FLOOD_CONNECTIONS * FRAMES_PER_CONNECTION,
                    "every flooded produce to be appended");
                for (Thread writer : writers) {
                    writer.join(TIMEOUT_MS);
                }
                assertThat(writeFailure.get()).isNull();
            } finally {
                sampler.running = false;
                sampler.join(TIMEOUT_MS);
                for (Socket socket : sockets) {
                    socket.close();
                }
            }

            System.out.printf("pool peak %d of %d bytes, %d waits; sampled max used %d; Netty direct memory above baseline max %d bytes (%d samples)%n",
                pool.peakUsedBytes(), POOL_BYTES, pool.waitsTotal(), sampler.maxUsedBytes.get(), sampler.maxDirectAboveBaselineBytes.get(),
                sampler.samples.get());
            assertThat(sampler.samples.get()).isPositive();
            assertThat(pool.peakUsedBytes()).as("the pool's high-water mark").isLessThanOrEqualTo(POOL_BYTES)
                .as("the pool was full").isGreaterThan(POOL_BYTES - MAX_REQUEST_BYTES);
            assertThat(sampler.maxUsedBytes.get()).isLessThanOrEqualTo(POOL_BYTES);
            assertThat(sampler.maxDirectAboveBaselineBytes.get()).as("Netty direct memory above the baseline")
                .isLessThanOrEqualTo(POOL_BYTES + DIRECT_MEMORY_SLACK_BYTES);
            assertThat(pool.waitsTotal()).as("reservations waited").isPositive();

            assertThat(broker.server().isStarted()).isTrue();
            roundTrip(broker, "after", 5);
            waitFor(() -> pool.usedBytes() == 0, "every reservation to be returned once the flood connections closed: " + pool);
        }
    }

    /** Writes every Produce request of one connection and never reads a response. */
    private static void pipelineProduces(Socket socket, AtomicReference<Throwable> failure) {
        byte[] value = new byte[VALUE_BYTES];
        try {
            OutputStream out = socket.getOutputStream();
            for (int correlationId = 1; correlationId <= FRAMES_PER_CONNECTION; correlationId++) {
                MemoryRecords records = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0)
                    .append(System.currentTimeMillis(), null, value).build();
                ProduceRequestData request = new ProduceRequestData().setAcks((short) 1).setTimeoutMs(30_000)
                    .setTopicData(List.of(new ProduceRequestData.TopicProduceData().setName("flood")
                        .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records)))));
                ByteBuffer frame = Frames.encodeRequest(ApiMessageType.PRODUCE, (short) 9, correlationId, "flood", request);
                assertThat(frame.remaining()).isLessThan(MAX_REQUEST_BYTES);
                out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
            }
            out.flush();
        } catch (IOException | RuntimeException | AssertionError e) {
            failure.compareAndSet(null, e);
        }
    }

    private static void assertBoundInMetrics(TestBroker broker) {
        String scrape = broker.server().metrics().scrape(ExpositionFormat.PROMETHEUS_TEXT);
        double used = sample(scrape, "kafka_network_socketserver_memorypoolused");
        double available = sample(scrape, "kafka_network_socketserver_memorypoolavailable");
        assertThat(used).isBetween(0.0, (double) POOL_BYTES);
        assertThat(available).isBetween(0.0, (double) POOL_BYTES);
        assertThat(sample(scrape, "strata_network_memorypool_waiting_connections")).isPositive();
    }

    private static double sample(String scrape, String name) {
        for (String line : scrape.split("\n")) {
            if (line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError(name + " is not in the scrape");
    }

    /** Produces {@code count} records to "normal" with a Java producer and reads them back with a Java consumer. */
    private static void roundTrip(TestBroker broker, String phase, int count) throws Exception {
        Properties producerProperties = new Properties();
        producerProperties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        producerProperties.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProperties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Long.toString(TIMEOUT_MS));
        producerProperties.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "60000");
        producerProperties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        producerProperties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        long startOffset = broker.log("normal", 0).logEndOffset();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProperties)) {
            List<java.util.concurrent.Future<?>> sends = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                sends.add(producer.send(new ProducerRecord<>("normal", 0, null, (phase + "-" + i).getBytes(StandardCharsets.UTF_8))));
            }
            for (java.util.concurrent.Future<?> send : sends) {
                send.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            }
        }
        Properties consumerProperties = new Properties();
        consumerProperties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        consumerProperties.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "60000");
        consumerProperties.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Long.toString(TIMEOUT_MS));
        consumerProperties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        consumerProperties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<String> read = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProperties)) {
            TopicPartition partition = new TopicPartition("normal", 0);
            consumer.assign(List.of(partition));
            consumer.seek(partition, startOffset);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
            while (read.size() < count) {
                assertThat(System.nanoTime()).as("records read back %s: %s", phase, read).isLessThan(deadline);
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    read.add(new String(record.value(), StandardCharsets.UTF_8));
                }
            }
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            expected.add(phase + "-" + i);
        }
        assertThat(read).containsExactlyElementsOf(expected);
    }

    private static void waitFor(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting for %s", what).isLessThan(deadline);
            LockSupport.parkNanos(SAMPLE_INTERVAL_NANOS);
        }
    }
}
