import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.Random;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * kafka-tools' EndToEndLatency loop with microsecond percentiles. EndToEndLatency stores each
 * latency as whole milliseconds (truncated), which on loopback makes its p50 "0" and its p99 "1"
 * or "2": too coarse to compare two brokers. This does the same thing: one record at a time,
 * {@code send().get()} with linger.ms=0, then {@code poll()} on a consumer that assign()s every
 * partition from the end with fetch.max.wait.ms=0, and times send to receive with nanoTime. It
 * uses no consumer group. The first {@code WARMUP} round trips are not counted.
 *
 * <pre>
 *   BenchE2E BOOTSTRAP TOPIC ROUND_TRIPS ACKS RECORD_SIZE [COMPRESSION]
 * </pre>
 *
 * Prints {@code Avg latency ms: A} and {@code Percentiles ms: 50th = X, 99th = Y, 99.9th = Z,
 * max = M} with microsecond resolution.
 */
public final class BenchE2E {
    private static final int WARMUP = 500;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        int n = Integer.parseInt(args[2]);
        String acks = args[3];
        int size = Integer.parseInt(args[4]);
        String compression = args.length > 5 ? args[5] : "none";

        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        pp.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(Long.MAX_VALUE));
        pp.put(ProducerConfig.ACKS_CONFIG, acks);
        pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        cp.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "0");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());

        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp);
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            partitions.forEach(consumer::position);

            Random random = new Random(0);
            long[] latencies = new long[n];
            double total = 0;
            for (int i = -WARMUP; i < n; i++) {
                byte[] value = new byte[size];
                for (int j = 0; j < size; j++) {
                    value[j] = (byte) ('a' + random.nextInt(26));
                }
                long start = System.nanoTime();
                producer.send(new ProducerRecord<>(topic, value)).get();
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofSeconds(60));
                long elapsed = System.nanoTime() - start;
                if (records.count() != 1) {
                    throw new IllegalStateException("round trip " + i + ": expected 1 record, got " + records.count());
                }
                ConsumerRecord<byte[], byte[]> record = records.iterator().next();
                if (!Arrays.equals(record.value(), value)) {
                    throw new IllegalStateException("round trip " + i + ": the record read back differs from the one sent");
                }
                if (i >= 0) {
                    latencies[i] = elapsed;
                    total += elapsed;
                }
            }
            Arrays.sort(latencies);
            System.out.printf("Avg latency ms: %.4f%n", total / n / 1e6);
            System.out.printf("Percentiles ms: 50th = %.3f, 99th = %.3f, 99.9th = %.3f, max = %.3f%n",
                latencies[(int) (n * 0.5)] / 1e6, latencies[(int) (n * 0.99)] / 1e6,
                latencies[(int) (n * 0.999)] / 1e6, latencies[n - 1] / 1e6);
        }
    }
}
