package io.strata.server;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ProduceRequestData;
import io.strata.protocol.message.ProduceResponseData;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.server.replica.Partition;
import io.strata.storage.FetchDataInfo;
import io.strata.storage.FetchIsolation;
import io.strata.storage.UnifiedLog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replication between three in-process nodes: an RF=3 topic's followers fetch from its leader
 * and end byte-identical to it (batches, leader epochs, producer state, transaction markers);
 * acks=all is answered once the in-sync replicas have a write; min.insync.replicas refuses
 * acks=all writes when too few replicas are in sync; a producer fails over to a new leader
 * when the leader's node stops, and nothing it was told was written is lost or doubled.
 */
class ReplicationInProcessTest {
    private static final String TOPIC = "replicated";
    private static final Map<String, String> FAST_FENCING = Map.of("broker.session.timeout.ms", "3000", "broker.heartbeat.interval.ms", "500",
        "replica.fetch.wait.max.ms", "100");

    @TempDir
    Path dir;

    @Test
    void followersEndByteIdenticalToTheLeader() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(dir, 3, FAST_FENCING); Admin admin = admin(cluster)) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 3).configs(Map.of("min.insync.replicas", "2"))))
                .all().get(30, TimeUnit.SECONDS);
            cluster.awaitLeaders(TOPIC, 2, 30_000);
            try (KafkaProducer<String, String> producer = producer(cluster, Map.of())) {
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                for (int i = 0; i < 3_000; i++) {
                    sent.add(producer.send(new ProducerRecord<>(TOPIC, i % 2, "k" + (i % 17), "value-" + i)));
                }
                for (Future<RecordMetadata> future : sent) {
                    future.get(30, TimeUnit.SECONDS);
                }
            }
            // A committed and an aborted transaction: markers and the transaction index reach the followers too.
            for (boolean commit : new boolean[] {true, false}) {
                try (KafkaProducer<String, String> producer = producer(cluster, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "txn-" + commit))) {
                    producer.initTransactions();
                    producer.beginTransaction();
                    for (int i = 0; i < 50; i++) {
                        producer.send(new ProducerRecord<>(TOPIC, i % 2, null, "txn-" + commit + "-" + i));
                    }
                    if (commit) {
                        producer.commitTransaction();
                    } else {
                        producer.abortTransaction();
                    }
                }
            }
            for (int partition = 0; partition < 2; partition++) {
                int p = partition;
                int leader = cluster.leader(TOPIC, partition);
                UnifiedLog leaderLog = log(cluster, leader, partition);
                InProcessCluster.awaitCondition(() -> {
                    for (int node = 1; node <= 3; node++) {
                        UnifiedLog log = log(cluster, node, p);
                        if (log == null || log.logEndOffset() != leaderLog.logEndOffset() || log.highWatermark() != leaderLog.logEndOffset()) {
                            return false;
                        }
                    }
                    return true;
                }, 30_000, "every replica of partition " + partition + " at the leader's log end with the high watermark there");
                byte[] expected = bytes(leaderLog);
                assertThat(expected.length).isPositive();
                for (int node = 1; node <= 3; node++) {
                    UnifiedLog log = log(cluster, node, partition);
                    assertThat(bytes(log)).as("the log of partition %d on node %d", partition, node).isEqualTo(expected);
                    assertThat(log.leaderEpochCache().epochEntries()).as("leader epochs on node %d", node)
                        .isEqualTo(leaderLog.leaderEpochCache().epochEntries());
                    assertThat(log.lastStableOffset()).isEqualTo(leaderLog.lastStableOffset());
                    // ProducerStateEntry has no equals: its text names every field (sequences, offsets, epochs, open transaction).
                    assertThat(log.producerStateSnapshot().toString()).as("producer state on node %d", node)
                        .isEqualTo(leaderLog.producerStateSnapshot().toString());
                }
            }
        }
    }

    @Test
    void acksAllWritesAreRefusedBelowMinIsrAndTheProducerFailsOverWhenTheLeaderStops() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(dir, 3, FAST_FENCING)) {
            try (Admin admin = admin(cluster)) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 3).configs(Map.of("min.insync.replicas", "2")),
                    new NewTopic("strict", 1, (short) 3).configs(Map.of("min.insync.replicas", "3")))).all().get(30, TimeUnit.SECONDS);
            }
            cluster.awaitLeaders(TOPIC, 1, 30_000);
            cluster.awaitLeaders("strict", 1, 30_000);
            Map<String, Long> acked = new HashMap<>();
            try (KafkaProducer<String, String> producer = producer(cluster, Map.of(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000"))) {
                for (int i = 0; i < 500; i++) {
                    acked.put("before-" + i, producer.send(new ProducerRecord<>(TOPIC, 0, null, "before-" + i)).get(30, TimeUnit.SECONDS).offset());
                }
                int leader = cluster.leader(TOPIC, 0);
                int survivor = leader == 1 ? 2 : 1;
                cluster.server(leader).close();
                // The stopped node leaves the ISR once its session expires; the producer finds the new leader and goes on.
                List<Future<RecordMetadata>> after = new ArrayList<>();
                for (int i = 0; i < 500; i++) {
                    after.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, "after-" + i)));
                }
                for (int i = 0; i < 500; i++) {
                    acked.put("after-" + i, after.get(i).get(60, TimeUnit.SECONDS).offset());
                }
                assertThat(cluster.server(survivor).metadata().image().topic(TOPIC).partition(0).leader()).isNotEqualTo(leader);

                // "strict" needs all 3 replicas in sync: with one node stopped, acks=all is refused before anything is appended.
                InProcessCluster.awaitCondition(() -> cluster.server(survivor).metadata().image().topic("strict").partition(0).isr().length == 2,
                    30_000, "the stopped node out of the ISR of strict-0");
                int strictLeader = cluster.server(survivor).metadata().image().topic("strict").partition(0).leader();
                try (RawClient client = new RawClient(cluster.server(strictLeader).boundPort("PLAINTEXT"))) {
                    ProduceResponseData response = client.send(ApiMessageType.PRODUCE, 12, produce("strict", (short) -1));
                    assertThat(ErrorCode.forCode(response.responses().get(0).partitionResponses().get(0).errorCode()))
                        .isEqualTo(ErrorCode.NOT_ENOUGH_REPLICAS);
                    long logEnd = log(cluster, strictLeader, "strict", 0).logEndOffset();
                    assertThat(logEnd).as("nothing appended for a refused acks=all write").isZero();
                    response = client.send(ApiMessageType.PRODUCE, 12, produce("strict", (short) 1));
                    assertThat(ErrorCode.forCode(response.responses().get(0).partitionResponses().get(0).errorCode())).isEqualTo(ErrorCode.NONE);
                }

                Properties properties = new Properties();
                properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + cluster.server(survivor).boundPort("PLAINTEXT"));
                properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
                properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
                try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
                    org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition(TOPIC, 0);
                    consumer.assign(List.of(tp));
                    consumer.seekToBeginning(List.of(tp));
                    long end = consumer.endOffsets(List.of(tp), Duration.ofSeconds(30)).get(tp);
                    Map<String, Long> seen = new HashMap<>();
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (consumer.position(tp) < end) {
                        assertThat(System.nanoTime()).isLessThan(deadline);
                        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                            assertThat(seen.put(record.value(), record.offset())).as("%s read twice", record.value()).isNull();
                        }
                    }
                    assertThat(seen).containsAllEntriesOf(acked);
                }
            }
        }
    }

    private static ProduceRequestData produce(String topic, short acks) {
        return new ProduceRequestData().setAcks(acks).setTimeoutMs(10_000).setTopicData(List.of(
            new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                .setIndex(0).setRecords(new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0)
                    .append(System.currentTimeMillis(), null, "v".getBytes(StandardCharsets.UTF_8)).build())))));
    }

    private static Admin admin(InProcessCluster cluster) {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        return Admin.create(properties);
    }

    private static KafkaProducer<String, String> producer(InProcessCluster cluster, Map<String, String> overrides) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        properties.put(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, "500");
        properties.putAll(overrides);
        return new KafkaProducer<>(properties);
    }

    private static UnifiedLog log(InProcessCluster cluster, int node, int partition) {
        return log(cluster, node, TOPIC, partition);
    }

    private static UnifiedLog log(InProcessCluster cluster, int node, String topic, int partition) {
        Partition hosted = cluster.server(node).replicaManager().partition(new io.strata.storage.TopicPartition(topic, partition));
        return hosted == null ? null : hosted.log();
    }

    /** The log's batches from its start to its end, as bytes. */
    private static byte[] bytes(UnifiedLog log) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long offset = log.logStartOffset();
        while (offset < log.logEndOffset()) {
            FetchDataInfo read = log.read(offset, 1 << 20, FetchIsolation.LOG_END, true);
            MemoryRecords records = MemoryRecords.of(read.records());
            if (records.sizeInBytes() == 0) {
                break;
            }
            ByteBuffer buffer = records.buffer().duplicate();
            byte[] chunk = new byte[buffer.remaining()];
            buffer.get(chunk);
            out.writeBytes(chunk);
            long last = -1;
            for (var batch : records.batches()) {
                last = batch.lastOffset();
            }
            offset = last + 1;
        }
        return out.toByteArray();
    }
}
