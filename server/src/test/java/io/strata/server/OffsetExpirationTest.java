package io.strata.server;

import io.strata.common.Time;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.DescribeGroupsRequestData;
import io.strata.protocol.message.DescribeGroupsResponseData;
import io.strata.protocol.message.OffsetFetchRequestData;
import io.strata.protocol.message.OffsetFetchResponseData;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code offsets.retention.minutes} end to end: offsets committed with the Java Admin and a
 * classic consumer expire once the broker's wall clock moves past the retention, and the
 * emptied groups are deleted (OffsetFetch answers -1, DescribeGroups says Dead, ListGroups
 * omits them). The broker runs on a clock whose wall time the test moves forward (its monotonic
 * clock is the real one, so timers and request timeouts behave normally); the check interval is
 * short.
 */
class OffsetExpirationTest {
    private static final String TOPIC = "orders";

    /** The system clock with a wall-clock offset the test sets. */
    static final class SkewedTime implements Time {
        final AtomicLong skewMs = new AtomicLong();

        @Override
        public long milliseconds() {
            return Time.SYSTEM.milliseconds() + skewMs.get();
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

    @TempDir
    Path dataDir;
    private TestBroker broker;

    @AfterEach
    void close() {
        if (broker != null) {
            broker.close();
        }
    }

    private KafkaConsumer<byte[], byte[]> classicConsumer(String group) {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        properties.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return new KafkaConsumer<>(properties);
    }

    private List<String> listedGroups() throws Exception {
        return broker.admin().listGroups().all().get(TestBroker.TIMEOUT_MS, TimeUnit.MILLISECONDS).stream().map(GroupListing::groupId)
            .sorted().toList();
    }

    /** OffsetFetch v7 (one group, explicit partitions) as the wire carries it: partition → committed offset. */
    private static Map<Integer, Long> fetchOffsets(RawClient client, String group, int... partitions) throws Exception {
        List<Integer> indexes = new ArrayList<>();
        for (int partition : partitions) {
            indexes.add(partition);
        }
        OffsetFetchRequestData request = new OffsetFetchRequestData().setGroupId(group).setTopics(new ArrayList<>(List.of(
            new OffsetFetchRequestData.OffsetFetchRequestTopic().setName(TOPIC).setPartitionIndexes(indexes))));
        OffsetFetchResponseData response = client.send(ApiMessageType.OFFSET_FETCH, 7, request);
        assertThat(ErrorCode.forCode(response.errorCode())).isEqualTo(ErrorCode.NONE);
        Map<Integer, Long> offsets = new java.util.TreeMap<>();
        for (OffsetFetchResponseData.OffsetFetchResponsePartition partition : response.topics().get(0).partitions()) {
            assertThat(ErrorCode.forCode(partition.errorCode())).isEqualTo(ErrorCode.NONE);
            offsets.put(partition.partitionIndex(), partition.committedOffset());
        }
        return offsets;
    }

    private static DescribeGroupsResponseData.DescribedGroup describe(RawClient client, String group) throws Exception {
        DescribeGroupsResponseData response = client.send(ApiMessageType.DESCRIBE_GROUPS, 5,
            new DescribeGroupsRequestData().setGroups(new ArrayList<>(List.of(group))));
        return response.groups().get(0);
    }

    @Test
    void committedOffsetsExpireAfterTheRetentionAndEmptiedGroupsAreDeleted() throws Exception {
        SkewedTime time = new SkewedTime();
        broker = new TestBroker(dataDir, Map.of("offsets.retention.minutes", "1", "offsets.retention.check.interval.ms", "100",
            "offsets.topic.num.partitions", "3", "group.initial.rebalance.delay.ms", "0"), time);
        broker.createTopic(TOPIC, 2, Map.of());
        broker.produce(TOPIC, 5);

        // A standalone commit (a simple group, no members): Admin alterConsumerGroupOffsets.
        broker.admin().alterConsumerGroupOffsets("standalone", Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(3)))
            .all().get(TestBroker.TIMEOUT_MS, TimeUnit.MILLISECONDS);
        // A classic consumer group: it commits, then leaves, so the group is Empty from then on.
        try (KafkaConsumer<byte[], byte[]> consumer = classicConsumer("classic-app")) {
            consumer.subscribe(List.of(TOPIC));
            long deadline = System.currentTimeMillis() + TestBroker.TIMEOUT_MS;
            while (consumer.assignment().size() < 2 && System.currentTimeMillis() < deadline) {
                consumer.poll(Duration.ofMillis(100));
            }
            assertThat(consumer.assignment()).hasSize(2);
            consumer.commitSync(Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(4), new TopicPartition(TOPIC, 1),
                new OffsetAndMetadata(0)));
        }

        try (RawClient client = new RawClient(broker.port())) {
            assertThat(fetchOffsets(client, "standalone", 0)).containsEntry(0, 3L);
            assertThat(fetchOffsets(client, "classic-app", 0, 1)).containsEntry(0, 4L).containsEntry(1, 0L);
            assertThat(listedGroups()).contains("standalone", "classic-app");
            assertThat(describe(client, "classic-app").groupState()).isEqualTo("Empty");

            // Checks run every 100 ms, but nothing is a minute old yet.
            Thread.sleep(500);
            assertThat(fetchOffsets(client, "standalone", 0)).containsEntry(0, 3L);
            assertThat(fetchOffsets(client, "classic-app", 0, 1)).containsEntry(0, 4L);

            time.skewMs.set(TimeUnit.MINUTES.toMillis(1) + 1000);
            long deadline = System.currentTimeMillis() + TestBroker.TIMEOUT_MS;
            while (!listedGroups().isEmpty() && System.currentTimeMillis() < deadline) {
                Thread.sleep(50);
            }
            assertThat(listedGroups()).doesNotContain("standalone", "classic-app");
            assertThat(fetchOffsets(client, "standalone", 0)).containsEntry(0, -1L);
            assertThat(fetchOffsets(client, "classic-app", 0, 1)).containsEntry(0, -1L).containsEntry(1, -1L);
            DescribeGroupsResponseData.DescribedGroup described = describe(client, "classic-app");
            assertThat(described.groupState()).isEqualTo("Dead");
            assertThat(described.members()).isEmpty();
            assertThat(broker.admin().listConsumerGroupOffsets("standalone").partitionsToOffsetAndMetadata()
                .get(TestBroker.TIMEOUT_MS, TimeUnit.MILLISECONDS)).isEmpty();
        }
    }
}
