package io.strata.it.cluster;

import io.strata.it.ExternalTools;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three combined broker,controller nodes in three processes, started once for the class: the
 * metadata quorum forms over them, metadata written through any node reaches every node,
 * RF=1 partitions are spread over the nodes, and producers, a consumer group and transactions
 * work across partitions led by different nodes.
 */
@Tag("cluster")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(PrintClusterLogsOnFailure.class)
class ThreeNodeClusterTest {
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final int PARTITIONS = 6;

    @TempDir
    static Path dir;

    private ClusterHarness cluster;

    @BeforeAll
    void start() throws Exception {
        cluster = ClusterHarness.combined(dir, 3); // assigned first: a failed start still closes it and prints its logs
        cluster.start();
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void quorumFormsOverThreeVotersWithOneLeaderAndEveryVoterCaughtUp() throws Exception {
        int leader = cluster.awaitActiveController(DEADLINE);
        assertThat(leader).isIn(1, 2, 3);
        ClusterHarness.waitUntil(() -> {
            QuorumInfo quorum = cluster.describeQuorum();
            return quorum.leaderId() == leader && quorum.highWatermark() > 0
                && quorum.voters().stream().allMatch(voter -> voter.logEndOffset() >= quorum.highWatermark());
        }, DEADLINE, "every voter's log end offset reaches the high watermark");
        QuorumInfo quorum = cluster.describeQuorum();
        assertThat(quorum.voters()).extracting(QuorumInfo.ReplicaState::replicaId).containsExactlyInAnyOrder(1, 2, 3);
        assertThat(quorum.observers()).as("combined nodes are voters, not observers").isEmpty();
        assertThat(quorum.leaderEpoch()).isPositive();
        // Every node names the same leader.
        for (ClusterHarness.Node node : cluster.nodes()) {
            try (Admin admin = ClusterHarness.admin(node.bootstrap())) {
                assertThat(admin.describeMetadataQuorum().quorumInfo().get(10, TimeUnit.SECONDS).leaderId()).as("leader seen by %s", node)
                    .isEqualTo(leader);
            }
        }
    }

    @Test
    void theControllerListenersDescribeTheSameQuorum() throws Exception {
        int leader = cluster.awaitActiveController(DEADLINE);
        QuorumInfo quorum = cluster.describeQuorumThroughControllers();
        assertThat(quorum.leaderId()).isEqualTo(leader);
        assertThat(quorum.voters()).extracting(QuorumInfo.ReplicaState::replicaId).containsExactlyInAnyOrder(1, 2, 3);
    }

    @Test
    void everyNodeListsAllThreeBrokers() throws Exception {
        for (ClusterHarness.Node node : cluster.nodes()) {
            try (Admin admin = ClusterHarness.admin(node.bootstrap())) {
                ClusterHarness.waitUntil(() -> admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).stream().map(Node::id)
                    .collect(Collectors.toSet()).equals(Set.of(1, 2, 3)), DEADLINE, node + " lists brokers 1, 2 and 3");
            }
        }
    }

    @Test
    void topicsCreatedThroughEachNodeAreVisibleThroughEveryNode() throws Exception {
        List<String> topics = new ArrayList<>();
        for (ClusterHarness.Node node : cluster.nodes()) {
            String topic = "created-through-" + node.id();
            topics.add(topic);
            try (Admin admin = ClusterHarness.admin(node.bootstrap())) {
                admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
        }
        for (ClusterHarness.Node node : cluster.nodes()) {
            try (Admin admin = ClusterHarness.admin(node.bootstrap())) {
                ClusterHarness.waitUntil(() -> {
                    Map<String, TopicDescription> described = admin.describeTopics(topics).allTopicNames().get(10, TimeUnit.SECONDS);
                    return described.values().stream().allMatch(description -> description.partitions().size() == PARTITIONS
                        && description.partitions().stream().allMatch(partition -> partition.leader() != null));
                }, DEADLINE, node + " describes " + topics + " with " + PARTITIONS + " led partitions each");
                assertThat(admin.listTopics().names().get(10, TimeUnit.SECONDS)).containsAll(topics);
            }
            // Metadata (not DescribeTopicPartitions): what producers and consumers read.
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProperties(node.bootstrap(), null))) {
                for (String topic : topics) {
                    assertThat(consumer.partitionsFor(topic, Duration.ofSeconds(10))).as("Metadata of %s through %s", topic, node)
                        .hasSize(PARTITIONS);
                }
            }
        }
    }

    @Test
    void replicationFactorOnePartitionsAreLedByMoreThanOneNode() throws Exception {
        Map<Integer, Integer> leaders = createAndAwaitLeaders("spread");
        assertThat(Set.copyOf(leaders.values())).as("leaders of the 6 partitions: %s", leaders).hasSizeGreaterThan(1)
            .isSubsetOf(1, 2, 3);
    }

    @Test
    void idempotentProducerAndGroupConsumerRoundTripAThousandRecordsAcrossNodes() throws Exception {
        String topic = "round-trip";
        Map<Integer, Integer> leaders = createAndAwaitLeaders(topic);
        assertThat(Set.copyOf(leaders.values())).hasSizeGreaterThan(1);
        int count = 1000;
        Properties producerProperties = producerProperties(cluster.bootstrapServers());
        producerProperties.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProperties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        Set<Integer> writtenPartitions = new HashSet<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties)) {
            List<Future<RecordMetadata>> sends = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                sends.add(producer.send(new ProducerRecord<>(topic, i % PARTITIONS, "key-" + i, "value-" + i)));
            }
            for (Future<RecordMetadata> send : sends) {
                writtenPartitions.add(send.get(60, TimeUnit.SECONDS).partition());
            }
        }
        assertThat(writtenPartitions).hasSize(PARTITIONS);

        String group = "round-trip-group";
        Map<String, Integer> seen = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProperties(cluster.bootstrapServers(), group))) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            Map<Integer, Long> lastOffsets = new HashMap<>();
            while (seen.size() < count && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    seen.merge(record.value(), 1, Integer::sum);
                    Long last = lastOffsets.put(record.partition(), record.offset());
                    assertThat(last == null || last < record.offset()).as("offsets ascend in partition %d", record.partition()).isTrue();
                }
            }
            consumer.commitSync(Duration.ofSeconds(30));
        }
        assertThat(seen).as("every record exactly once").hasSize(count).allSatisfy((value, times) -> assertThat(times).isEqualTo(1));
        assertThat(seen.keySet()).isEqualTo(IntStream.range(0, count).mapToObj(i -> "value-" + i).collect(Collectors.toSet()));
        try (Admin admin = cluster.admin()) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS);
            assertThat(committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum()).as("committed offsets %s", committed)
                .isEqualTo(count);
        }
    }

    @Test
    void readCommittedConsumerSeesExactlyTheCommittedTransactions() throws Exception {
        String topic = "transactions";
        Map<Integer, Integer> leaders = createAndAwaitLeaders(topic);
        assertThat(Set.copyOf(leaders.values())).hasSizeGreaterThan(1);
        Properties properties = producerProperties(cluster.bootstrapServers());
        properties.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "cluster-tx");
        Set<String> committed = new HashSet<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            producer.initTransactions();
            for (int transaction = 0; transaction < 3; transaction++) {
                boolean commit = transaction != 1;
                producer.beginTransaction();
                for (int i = 0; i < 60; i++) {
                    String value = (commit ? "committed-" : "aborted-") + transaction + "-" + i;
                    producer.send(new ProducerRecord<>(topic, i % PARTITIONS, value, value));
                    if (commit) {
                        committed.add(value);
                    }
                }
                if (commit) {
                    producer.commitTransaction();
                } else {
                    producer.abortTransaction();
                }
            }
        }
        Properties consumerProperties = consumerProperties(cluster.bootstrapServers(), null);
        consumerProperties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<String> read = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProperties)) {
            List<TopicPartition> partitions = IntStream.range(0, PARTITIONS).mapToObj(p -> new TopicPartition(topic, p)).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            // read_committed end offsets are the last stable offsets: reading up to them reads every decided transaction.
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            ClusterHarness.waitUntil(() -> {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    read.add(record.value());
                }
                return partitions.stream().allMatch(partition -> consumer.position(partition) >= end.get(partition));
            }, Duration.ofSeconds(60), "the read_committed consumer reaches the last stable offsets " + end);
        }
        assertThat(read).as("only committed records, each once").doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(committed);
    }

    /**
     * kafkajs (its own protocol implementation) against the cluster: an idempotent acks=all
     * producer writes to six RF=1 partitions led by different nodes, then a kafkajs consumer group
     * member is assigned all six, reads every record once and commits the end offsets.
     */
    @Test
    void kafkajsProducesToPartitionsLedByDifferentNodesAndAKafkajsGroupReadsEveryRecord() throws Exception {
        ExternalTools.require("node with kafkajs (npm ci in it/src/test/js)", ExternalTools.kafkajsInstalled());
        String topic = "kafkajs";
        Map<Integer, Integer> leaders = createAndAwaitLeaders(topic);
        assertThat(Set.copyOf(leaders.values())).as("leaders %s", leaders).hasSizeGreaterThan(1);
        int count = 1200;
        String produced = ExternalTools.run(List.of("node", ExternalTools.nodeModulesRoot().resolve("produce.js").toString(),
            cluster.bootstrapServers(), topic, Integer.toString(count), Integer.toString(PARTITIONS)), null, 120);
        assertThat(produced).contains("\"total\":" + count);

        String group = "kafkajs-group";
        String consumed = ExternalTools.run(List.of("node", ExternalTools.nodeModulesRoot().resolve("consume.js").toString(),
            cluster.bootstrapServers(), topic, group, Integer.toString(count)), null, 120);
        List<String> lines = consumed.lines().toList();
        assertThat(lines).as("%s", consumed).anyMatch(line -> line.startsWith("JOIN\t") && line.endsWith("\t0,1,2,3,4,5"));
        List<String> records = lines.stream().filter(line -> line.startsWith("RECORD\t")).toList();
        Set<String> values = new HashSet<>();
        for (String record : records) {
            String[] fields = record.split("\t");
            int i = Integer.parseInt(fields[3].substring("value-".length()));
            assertThat(Integer.parseInt(fields[1])).as("partition of %s", record).isEqualTo(i % PARTITIONS);
            assertThat(values.add(fields[3])).as("%s read once", fields[3]).isTrue();
        }
        assertThat(values).isEqualTo(IntStream.range(0, count).mapToObj(i -> "value-" + i).collect(Collectors.toSet()));
        assertThat(lines.get(lines.size() - 1)).isEqualTo("STOPPED\t" + count);
        try (Admin admin = cluster.admin()) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS);
            assertThat(committed).as("committed %s", committed).hasSize(PARTITIONS);
            assertThat(committed.values()).allSatisfy(offset -> assertThat(offset.offset()).isEqualTo(count / PARTITIONS));
        }
    }

    /**
     * A kafkajs transactional producer commits and aborts transactions over partitions led by
     * different nodes (its coordinator is one node, the partitions' leaders the others); a Java
     * read_committed consumer sees exactly the committed records, a read_uncommitted one the aborted as well.
     */
    @Test
    void kafkajsTransactionsCommitAndAbortAcrossNodes() throws Exception {
        ExternalTools.require("node with kafkajs (npm ci in it/src/test/js)", ExternalTools.kafkajsInstalled());
        String topic = "kafkajs-transactions";
        Map<Integer, Integer> leaders = createAndAwaitLeaders(topic);
        assertThat(Set.copyOf(leaders.values())).as("leaders %s", leaders).hasSizeGreaterThan(1);
        int transactions = 3;
        int perTransaction = 60;
        String report = ExternalTools.run(List.of("node", ExternalTools.nodeModulesRoot().resolve("transactions.js").toString(),
            cluster.bootstrapServers(), topic, "kafkajs-tx", Integer.toString(PARTITIONS), Integer.toString(transactions),
            Integer.toString(perTransaction)), null, 120);
        assertThat(report).contains("\"committed\":" + 2 * perTransaction).contains("\"aborted\":" + perTransaction);
        Set<String> committed = new HashSet<>();
        Set<String> aborted = new HashSet<>();
        for (int t = 0; t < transactions; t++) {
            for (int i = 0; i < perTransaction; i++) {
                (t % 2 == 0 ? committed : aborted).add((t % 2 == 0 ? "committed-" : "aborted-") + t + "-" + i);
            }
        }
        assertThat(readToEnd(topic, "read_committed")).as("read_committed").doesNotHaveDuplicates()
            .containsExactlyInAnyOrderElementsOf(committed);
        Set<String> everything = new HashSet<>(committed);
        everything.addAll(aborted);
        assertThat(readToEnd(topic, "read_uncommitted")).as("read_uncommitted").doesNotHaveDuplicates()
            .containsExactlyInAnyOrderElementsOf(everything);
    }

    /** Every value of {@code topic}'s partitions up to their end offsets at {@code isolation} (the last stable offsets for read_committed). */
    private List<String> readToEnd(String topic, String isolation) throws Exception {
        Properties properties = consumerProperties(cluster.bootstrapServers(), null);
        properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        List<String> read = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
            List<TopicPartition> partitions = IntStream.range(0, PARTITIONS).mapToObj(p -> new TopicPartition(topic, p)).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            ClusterHarness.waitUntil(() -> {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    read.add(record.value());
                }
                return partitions.stream().allMatch(partition -> consumer.position(partition) >= end.get(partition));
            }, Duration.ofSeconds(60), isolation + " consumer reaches the end offsets " + end);
        }
        return read;
    }

    /** Creates {@code topic} (6 partitions, RF=1) and returns partition → leader once every partition has one. */
    private Map<Integer, Integer> createAndAwaitLeaders(String topic) throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get(30, TimeUnit.SECONDS);
            Map<Integer, Integer> leaders = new HashMap<>();
            ClusterHarness.waitUntil(() -> {
                leaders.clear();
                for (TopicPartitionInfo partition : admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic)
                    .partitions()) {
                    if (partition.leader() != null) {
                        leaders.put(partition.partition(), partition.leader().id());
                    }
                }
                return leaders.size() == PARTITIONS;
            }, DEADLINE, "every partition of " + topic + " has a leader");
            return leaders;
        }
    }

    static Properties producerProperties(String bootstrap) {
        Properties properties = ClusterHarness.clientProperties(bootstrap);
        properties.remove("default.api.timeout.ms");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        return properties;
    }

    static Properties consumerProperties(String bootstrap, String group) {
        Properties properties = ClusterHarness.clientProperties(bootstrap);
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        if (group != null) {
            properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        return properties;
    }
}
