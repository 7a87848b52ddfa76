package io.strata.server;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatch;
import io.strata.server.replica.ReplicaSelectors;
import io.strata.storage.TopicPartition;
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
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Follower fetching (KIP-392) on three in-process nodes with {@code broker.rack} r0, r1, r2 and
 * Kafka's rack-aware {@code replica.selector.class}: the leader sends a consumer of rack r2 to the
 * r2 follower (PreferredReadReplica, no records); the follower serves it up to its own high
 * watermark, answers an offset at its log end empty and one past it OFFSET_OUT_OF_RANGE, checks
 * the leader epoch, and answers a waiting fetch when its high watermark moves (KAFKA-14334); a
 * Java consumer with {@code client.rack} reads everything from the follower and goes on after the
 * leader stops.
 */
class FollowerFetchingInProcessTest {
    private static final String TOPIC = "racked";
    private static final TopicPartition PARTITION = new TopicPartition(TOPIC, 0);
    /** Node ids are 1-based, racks 0-based: node 3 is on r2. */
    private static final int LEADER = 1;
    private static final int R2_FOLLOWER = 3;
    private static final int FETCH_VERSION = 12;
    private static final int RECORDS = 100;
    private static final Map<String, String> SETTINGS = Map.of("broker.session.timeout.ms", "3000", "broker.heartbeat.interval.ms", "500",
        "replica.fetch.wait.max.ms", "100", "replica.selector.class", ReplicaSelectors.KAFKA_RACK_AWARE);

    @TempDir
    Path dir;

    @Test
    void theLeaderSendsAnR2ConsumerToTheR2FollowerWhichServesUpToItsHighWatermark() throws Exception {
        try (InProcessCluster cluster = start()) {
            produce(cluster, "a", RECORDS);
            UnifiedLog leaderLog = cluster.server(LEADER).replicaManager().partition(PARTITION).log();
            UnifiedLog followerLog = cluster.server(R2_FOLLOWER).replicaManager().partition(PARTITION).log();
            InProcessCluster.awaitCondition(() -> followerLog.highWatermark() == leaderLog.logEndOffset(), 30_000, "the r2 follower's HW at the log end");
            int epoch = cluster.server(LEADER).replicaManager().partition(PARTITION).leaderEpoch();

            try (RawClient leader = new RawClient(cluster.server(LEADER).boundPort("PLAINTEXT"))) {
                FetchResponseData.PartitionData sent = fetch(leader, FETCH_VERSION, "r2", 0, epoch, 0);
                assertThat(sent.errorCode()).isEqualTo(ErrorCode.NONE.code());
                assertThat(sent.preferredReadReplica()).isEqualTo(R2_FOLLOWER);
                assertThat(sent.records().sizeInBytes()).as("no records with a preferred read replica").isZero();
                assertThat(sent.highWatermark()).isEqualTo(leaderLog.highWatermark());
                // The leader's own rack, or no rack: the leader reads.
                for (String rack : new String[] {"r0", ""}) {
                    FetchResponseData.PartitionData read = fetch(leader, FETCH_VERSION, rack, 0, epoch, 0);
                    assertThat(read.preferredReadReplica()).as("rack '%s'", rack).isEqualTo(-1);
                    assertThat(read.records().sizeInBytes()).isPositive();
                }
            }

            long servedBefore = cluster.server(R2_FOLLOWER).replicaManager().followerReadsForConsumers();
            try (RawClient follower = new RawClient(cluster.server(R2_FOLLOWER).boundPort("PLAINTEXT"))) {
                // Before v11 a consumer sends no client metadata: only the leader serves it (Kafka's fetchOnlyLeader).
                assertThat(fetch(follower, 10, "r2", 0, epoch, 0).errorCode()).isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER.code());

                FetchResponseData.PartitionData read = fetch(follower, FETCH_VERSION, "r2", 0, epoch, 0);
                assertThat(read.errorCode()).isEqualTo(ErrorCode.NONE.code());
                assertThat(read.preferredReadReplica()).isEqualTo(-1);
                assertThat(read.highWatermark()).isEqualTo(followerLog.highWatermark());
                assertThat(lastOffset(read)).as("nothing above the follower's high watermark").isLessThan(read.highWatermark());
                assertThat(cluster.server(R2_FOLLOWER).replicaManager().followerReadsForConsumers()).isGreaterThan(servedBefore);

                long followerEnd = followerLog.logEndOffset();
                FetchResponseData.PartitionData atEnd = fetch(follower, FETCH_VERSION, "r2", followerEnd, epoch, 0);
                assertThat(atEnd.errorCode()).isEqualTo(ErrorCode.NONE.code());
                assertThat(atEnd.records().sizeInBytes()).isZero();
                assertThat(fetch(follower, FETCH_VERSION, "r2", followerEnd + 1, epoch, 0).errorCode())
                    .isEqualTo(ErrorCode.OFFSET_OUT_OF_RANGE.code());
                assertThat(fetch(follower, FETCH_VERSION, "r2", 0, epoch + 1, 0).errorCode()).isEqualTo(ErrorCode.UNKNOWN_LEADER_EPOCH.code());
            }

            // A fetch waiting on the follower is answered when the follower's high watermark moves, not at its 20 s expiry.
            long waitFrom = followerLog.logEndOffset();
            long started = System.nanoTime();
            CompletableFuture<FetchResponseData.PartitionData> waiting = CompletableFuture.supplyAsync(() -> {
                try (RawClient follower = new RawClient(cluster.server(R2_FOLLOWER).boundPort("PLAINTEXT"))) {
                    return fetch(follower, FETCH_VERSION, "r2", waitFrom, epoch, 20_000);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            InProcessCluster.awaitCondition(() -> cluster.server(R2_FOLLOWER).fetchPurgatory().numDelayed() > 0 || waiting.isDone(), 10_000,
                "the follower's fetch parked");
            assertThat(waiting).isNotDone();
            produce(cluster, "b", 1);
            FetchResponseData.PartitionData woken = waiting.get(30, TimeUnit.SECONDS);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isLessThan(15_000);
            assertThat(woken.errorCode()).isEqualTo(ErrorCode.NONE.code());
            assertThat(woken.records().sizeInBytes()).isPositive();
        }
    }

    @Test
    void aJavaConsumerWithClientRackReadsFromItsRackAndGoesOnAfterTheLeaderStops() throws Exception {
        try (InProcessCluster cluster = start()) {
            produce(cluster, "before-", RECORDS);
            Properties properties = new Properties();
            properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
            properties.put(ConsumerConfig.CLIENT_RACK_CONFIG, "r2");
            properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
                org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition(TOPIC, 0);
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                Set<String> seen = new HashSet<>();
                readUntil(consumer, seen, RECORDS);
                assertThat(cluster.server(R2_FOLLOWER).replicaManager().followerReadsForConsumers())
                    .as("the r2 follower served the consumer").isPositive();

                int oldEpoch = cluster.server(R2_FOLLOWER).replicaManager().partition(PARTITION).leaderEpoch();
                cluster.server(LEADER).close();
                produce(cluster, "after-", RECORDS);
                readUntil(consumer, seen, 2 * RECORDS);
                for (int i = 0; i < RECORDS; i++) {
                    assertThat(seen).contains("before-" + i, "after-" + i);
                }
                assertThat(cluster.server(R2_FOLLOWER).replicaManager().partition(PARTITION).leaderEpoch()).isGreaterThan(oldEpoch);
                try (RawClient follower = new RawClient(cluster.server(R2_FOLLOWER).boundPort("PLAINTEXT"))) {
                    assertThat(fetch(follower, FETCH_VERSION, "r2", 0, oldEpoch, 0).errorCode()).isEqualTo(ErrorCode.FENCED_LEADER_EPOCH.code());
                }
            }
        }
    }

    private InProcessCluster start() throws Exception {
        InProcessCluster cluster = InProcessCluster.start(dir, 3, SETTINGS, id -> Map.of("broker.rack", "r" + (id - 1)));
        try (Admin admin = admin(cluster)) {
            admin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(LEADER, 2, R2_FOLLOWER))))).all().get(30, TimeUnit.SECONDS);
        }
        cluster.awaitLeaders(TOPIC, 1, 30_000);
        InProcessCluster.awaitCondition(() -> cluster.server(LEADER).replicaManager().partition(PARTITION).isr().size() == 3, 30_000,
            "all three replicas in the ISR");
        return cluster;
    }

    private static void readUntil(KafkaConsumer<String, String> consumer, Set<String> seen, int count) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (seen.size() < count) {
            assertThat(System.nanoTime()).as("read %d of %d records", seen.size(), count).isLessThan(deadline);
            for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                assertThat(seen.add(record.value())).as("%s read twice", record.value()).isTrue();
            }
        }
    }

    private static FetchResponseData.PartitionData fetch(RawClient client, int version, String rack, long offset, int leaderEpoch, int maxWaitMs)
        throws Exception {
        FetchRequestData request = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(maxWaitMs).setMinBytes(1).setMaxBytes(1 << 20)
            .setIsolationLevel((byte) 0).setSessionId(0).setSessionEpoch(-1).setRackId(rack)
            .setTopics(List.of(new FetchRequestData.FetchTopic().setTopic(TOPIC).setPartitions(List.of(new FetchRequestData.FetchPartition()
                .setPartition(0).setFetchOffset(offset).setPartitionMaxBytes(1 << 20).setCurrentLeaderEpoch(leaderEpoch)
                .setLastFetchedEpoch(-1).setLogStartOffset(-1)))));
        FetchResponseData response = client.send(ApiMessageType.FETCH, version, request);
        return response.responses().get(0).partitions().get(0);
    }

    private static long lastOffset(FetchResponseData.PartitionData partition) {
        long last = -1;
        for (RecordBatch batch : ((MemoryRecords) partition.records()).batches()) {
            last = batch.lastOffset();
        }
        return last;
    }

    private static void produce(InProcessCluster cluster, String prefix, int count) throws Exception {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            List<java.util.concurrent.Future<?>> sent = new java.util.ArrayList<>();
            for (int i = 0; i < count; i++) {
                sent.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, prefix + i)));
            }
            for (java.util.concurrent.Future<?> future : sent) {
                future.get(60, TimeUnit.SECONDS);
            }
        }
    }

    private static Admin admin(InProcessCluster cluster) {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        return Admin.create(properties);
    }
}
