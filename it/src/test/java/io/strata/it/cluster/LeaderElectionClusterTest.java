package io.strata.it.cluster;

import io.strata.it.KafkaTool;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.tools.LeaderElectionCommand;
import org.apache.kafka.tools.TopicCommand;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka's own admin tools against 3 combined Strata nodes (real processes):
 * {@code kafka-leader-election.sh --election-type PREFERRED --all-topic-partitions} after a
 * kill -9 and restart moved leaderships away from their preferred replicas puts every preferred
 * replica back in the lead (ElectLeaders, key 43); and with one node killed,
 * {@code kafka-topics.sh --describe} with {@code --under-replicated-partitions},
 * {@code --under-min-isr-partitions} and {@code --unavailable-partitions} lists exactly the
 * partitions each should (DescribeTopicPartitions from the image). The automatic rebalance is
 * off so only the tool moves leaders back.
 */
@Tag("cluster")
@ExtendWith(PrintClusterLogsOnFailure.class)
class LeaderElectionClusterTest {
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    private static final String TOPIC = "elect";

    @TempDir
    Path dir;

    private ClusterHarness cluster;

    @BeforeEach
    void start() throws Exception {
        cluster = ClusterHarness.combined(dir, 3, Map.of("default.replication.factor", "3", "auto.leader.rebalance.enable", "false"));
        cluster.start();
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static Collection<TopicDescription> describeAll(Admin admin) throws Exception {
        Set<String> names = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(10, TimeUnit.SECONDS);
        return admin.describeTopics(names).allTopicNames().get(10, TimeUnit.SECONDS).values();
    }

    private static void awaitFullIsr(Admin admin) throws InterruptedException {
        ClusterHarness.waitUntil(() -> describeAll(admin).stream().flatMap(topic -> topic.partitions().stream())
            .allMatch(info -> info.leader() != null && info.isr().size() == info.replicas().size()), DEADLINE,
            "every partition of every topic has its full ISR");
    }

    private static boolean preferredLeads(TopicPartitionInfo info) {
        return info.leader() != null && info.leader().id() == info.replicas().get(0).id();
    }

    @Test
    void preferredElectionThroughKafkasToolMovesEveryLeaderBackToItsPreferredReplica() throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 3, (short) 3))).all().get(30, TimeUnit.SECONDS);
            awaitFullIsr(admin);
            TopicDescription before = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(10, TimeUnit.SECONDS).get(TOPIC);
            int victim = before.partitions().get(0).replicas().get(0).id();

            cluster.node(victim).kill9();
            ClusterHarness.waitUntil(() -> describeAll(admin).stream().flatMap(topic -> topic.partitions().stream())
                .noneMatch(info -> info.leader() != null && info.leader().id() == victim), DEADLINE, "node " + victim + " leads nothing");
            cluster.node(victim).start();
            awaitFullIsr(admin);
            assertThat(describeAll(admin).stream().flatMap(topic -> topic.partitions().stream()))
                .as("leaderships moved away from node %d", victim).anyMatch(info -> !preferredLeads(info));

            KafkaTool.Result result = KafkaTool.run(LeaderElectionCommand::main, "--bootstrap-server", cluster.liveBootstrapServers(),
                "--election-type", "PREFERRED", "--all-topic-partitions");
            assertThat(result.exitCode()).as("%s", result).isZero();
            assertThat(result.stdout()).as("%s", result).contains("Successfully completed leader election (PREFERRED)");

            ClusterHarness.waitUntil(() -> describeAll(admin).stream().flatMap(topic -> topic.partitions().stream())
                .allMatch(LeaderElectionClusterTest::preferredLeads), DEADLINE, "every preferred replica leads");

            KafkaTool.Result again = KafkaTool.run(LeaderElectionCommand::main, "--bootstrap-server", cluster.liveBootstrapServers(),
                "--election-type", "PREFERRED", "--topic", TOPIC, "--partition", "0");
            assertThat(again.exitCode()).as("%s", again).isZero();
            assertThat(again.stdout()).as("%s", again).contains("Valid replica already elected for partitions " + TOPIC + "-0");
        }
    }

    @Test
    void kafkaTopicsListsUnderReplicatedUnderMinIsrAndUnavailablePartitions() throws Exception {
        int victim = 3;
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(
                new NewTopic("lenient", 2, (short) 3).configs(Map.of("min.insync.replicas", "2")),
                new NewTopic("strict", 1, (short) 3).configs(Map.of("min.insync.replicas", "3")),
                new NewTopic("single", Map.of(0, List.of(victim))))).all().get(30, TimeUnit.SECONDS);
            awaitFullIsr(admin);
            assertThat(describe("--under-replicated-partitions")).as("nothing under-replicated before the kill").isEmpty();

            cluster.node(victim).kill9();
            ClusterHarness.waitUntil(() -> admin.describeTopics(List.of("lenient", "strict")).allTopicNames().get(10, TimeUnit.SECONDS).values()
                .stream().flatMap(topic -> topic.partitions().stream()).allMatch(info -> info.isr().size() == 2), DEADLINE,
                "node " + victim + " left every ISR");

            // single-0 (RF 1 on the killed node) too: with ELR (on for new clusters, as Kafka 4.4) its ISR is empty, and
            // kafka-topics counts a partition whose ISR is smaller than its replicas as under-replicated.
            assertThat(describe("--under-replicated-partitions")).contains("lenient-0", "lenient-1", "strict-0", "single-0");
            assertThat(describe("--under-min-isr-partitions")).contains("strict-0", "single-0").doesNotContain("lenient-0", "lenient-1");
            assertThat(describe("--unavailable-partitions")).contains("single-0").doesNotContain("lenient-0", "lenient-1", "strict-0");
        }
    }

    /** The partitions {@code kafka-topics.sh --describe <filter>} lists, as "topic-partition". */
    private Set<String> describe(String filter) {
        KafkaTool.Result result = KafkaTool.run(TopicCommand::main, "--bootstrap-server", cluster.liveBootstrapServers(), "--describe", filter);
        assertThat(result.exitCode()).as("%s", result).isZero();
        Set<String> partitions = new TreeSet<>();
        java.util.regex.Pattern row = java.util.regex.Pattern.compile("Topic: (\\S+)\\s+Partition: (\\d+)");
        for (String line : result.lines()) {
            java.util.regex.Matcher matcher = row.matcher(line);
            if (matcher.find()) {
                partitions.add(matcher.group(1) + "-" + matcher.group(2));
            }
        }
        return partitions;
    }
}
