package io.strata.it.cluster;

import io.strata.it.ExternalTools;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Follower fetching (KIP-392) against real processes: three combined nodes on racks r0, r1, r2
 * with Kafka's {@code replica.selector.class}; an RF 3 partition led by node 1 (r0). kcat with
 * {@code -X client.rack=r2} reads every record; a Java consumer with {@code client.rack=r2} reads
 * in small fetches and finishes while the leader is SIGSTOPped — which it could only do if the
 * r2 follower serves it (a fetch parked on a stopped leader waits for the request timeout, 30 s).
 */
@Tag("cluster")
@ExtendWith(PrintClusterLogsOnFailure.class)
class FollowerFetchingClusterTest {
    private static final String TOPIC = "racked";
    private static final int RECORDS = 400;
    private static final int LEADER = 1;
    /** Well under the consumer's 30 s request timeout: a consumer stuck on the stopped leader misses it. */
    private static final Duration FINISH_WHILE_LEADER_STOPPED = Duration.ofSeconds(15);

    @TempDir
    Path dir;

    @Test
    void rackAwareConsumersReadEverythingFromTheFollowerOnTheirRack() throws Exception {
        try (ClusterHarness cluster = ClusterHarness.combined(dir, 3, Map.of("replica.selector.class",
            "org.apache.kafka.common.replica.RackAwareReplicaSelector", "replica.fetch.wait.max.ms", "100"))) {
            for (int id = 1; id <= 3; id++) {
                cluster.nodeConfig(id, Map.of("broker.rack", "r" + (id - 1)));
            }
            cluster.start();
            try (Admin admin = cluster.admin()) {
                admin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(LEADER, 2, 3))))).all().get(30, TimeUnit.SECONDS);
                ClusterHarness.waitUntil(() -> {
                    TopicDescription description = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(10, TimeUnit.SECONDS).get(TOPIC);
                    return description.partitions().get(0).leader() != null && description.partitions().get(0).leader().id() == LEADER
                        && description.partitions().get(0).isr().size() == 3;
                }, Duration.ofSeconds(60), "node 1 leads " + TOPIC + "-0 with all three replicas in sync");
            }
            produce(cluster.bootstrapServers());

            if (ExternalTools.onPath("kcat")) {
                String out = ExternalTools.run(List.of("kcat", "-C", "-b", cluster.bootstrapServers(), "-t", TOPIC, "-p", "0", "-o", "beginning",
                    "-c", Integer.toString(RECORDS), "-e", "-q", "-X", "client.rack=r2"), null, 60);
                assertThat(out.lines().toList()).as("kcat with client.rack=r2").hasSize(RECORDS).contains("v-0", "v-" + (RECORDS - 1));
            }

            // Kafka's default request timeout (30 s), not the harness's short one: a fetch parked on the stopped leader must not finish in time.
            Properties properties = new Properties();
            properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
            properties.put(ConsumerConfig.CLIENT_RACK_CONFIG, "r2");
            properties.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, "512");
            properties.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, "512");
            properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
                TopicPartition tp = new TopicPartition(TOPIC, 0);
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                Set<String> seen = new HashSet<>();
                // Read until a follower's answer (the leader's first one carries no records) shows the whole partition committed.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (true) {
                    poll(consumer, seen);
                    OptionalLong lag = consumer.currentLag(tp);
                    long position = consumer.position(tp);
                    if (position > 0 && position < RECORDS && lag.isPresent() && position + lag.getAsLong() == RECORDS) {
                        break;
                    }
                    assertThat(position).as("the test needs records left to read after the leader stops").isLessThan(RECORDS);
                    assertThat(System.nanoTime()).as("the follower's high watermark at %d", RECORDS).isLessThan(deadline);
                }
                cluster.node(LEADER).pause();
                try {
                    long stopDeadline = System.nanoTime() + FINISH_WHILE_LEADER_STOPPED.toNanos();
                    while (seen.size() < RECORDS) {
                        assertThat(System.nanoTime()).as("read %d of %d with the leader stopped", seen.size(), RECORDS).isLessThan(stopDeadline);
                        poll(consumer, seen);
                    }
                } finally {
                    cluster.node(LEADER).resume();
                }
                for (int i = 0; i < RECORDS; i++) {
                    assertThat(seen).contains("v-" + i);
                }
            }
        }
    }

    private static void poll(KafkaConsumer<String, String> consumer, Set<String> seen) {
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
            assertThat(seen.add(record.value())).as("%s read twice", record.value()).isTrue();
        }
    }

    /** Small batches (batch.size 256): the consumer's 512-byte fetches then take many rounds. */
    private static void produce(String bootstrap) throws Exception {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.BATCH_SIZE_CONFIG, "256");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++) {
                sent.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, "v-" + i)));
            }
            for (Future<?> future : sent) {
                future.get(60, TimeUnit.SECONDS);
            }
        }
    }
}
