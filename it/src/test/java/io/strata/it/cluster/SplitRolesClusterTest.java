package io.strata.it.cluster;

import io.strata.it.ExternalTools;
import io.strata.it.KafkaTool;
import io.strata.protocol.Frames;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.MetadataRequestData;
import io.strata.protocol.message.MetadataResponseData;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.BrokerIdNotRegisteredException;
import org.apache.kafka.tools.MetadataQuorumCommand;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Three controller-only voters (nodes 1-3) and three broker-only nodes (4-6), each its own
 * process: brokers share the metadata written through any of them, Kafka's
 * {@code kafka-metadata-quorum} tool sees the three voters and the three brokers as observers,
 * and librdkafka (kcat) round-trips records across brokers.
 */
@Tag("cluster")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(PrintClusterLogsOnFailure.class)
class SplitRolesClusterTest {
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final Set<Integer> VOTERS = Set.of(1, 2, 3);
    private static final Set<Integer> BROKERS = Set.of(4, 5, 6);
    private static final Pattern ID = Pattern.compile("\"id\": (\\d+)");

    @TempDir
    static Path dir;

    private ClusterHarness cluster;

    @BeforeAll
    void start() throws Exception {
        cluster = ClusterHarness.split(dir, 3, 3); // assigned first: a failed start still closes it and prints its logs
        cluster.start();
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void topicsCreatedThroughEachBrokerAreVisibleOnEveryBroker() throws Exception {
        List<String> topics = new ArrayList<>();
        for (ClusterHarness.Node broker : cluster.brokers()) {
            String topic = "split-through-" + broker.id();
            topics.add(topic);
            try (Admin admin = ClusterHarness.admin(broker.bootstrap())) {
                admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
        }
        for (ClusterHarness.Node broker : cluster.brokers()) {
            try (Admin admin = ClusterHarness.admin(broker.bootstrap())) {
                ClusterHarness.waitUntil(() -> admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).stream().map(Node::id)
                    .collect(Collectors.toSet()).equals(BROKERS), DEADLINE, broker + " lists exactly the brokers " + BROKERS);
                ClusterHarness.waitUntil(() -> {
                    Map<String, TopicDescription> described = admin.describeTopics(topics).allTopicNames().get(10, TimeUnit.SECONDS);
                    return described.values().stream().allMatch(description -> description.partitions().size() == 3
                        && description.partitions().stream().allMatch(partition -> partition.leader() != null
                            && BROKERS.contains(partition.leader().id())));
                }, DEADLINE, broker + " describes " + topics + " with every partition led by a broker");
            }
        }
    }

    @Test
    void kafkaMetadataQuorumReportsThreeVotersAndTheBrokersAsObservers() throws Exception {
        int leader = cluster.awaitActiveController(DEADLINE);
        assertThat(leader).isIn(VOTERS.toArray());
        String bootstrap = cluster.brokers().get(0).bootstrap();
        // Brokers are observers once they fetch the metadata log; wait for all three to be seen.
        ClusterHarness.waitUntil(() -> {
            QuorumInfo quorum = cluster.describeQuorum();
            return quorum.observers().stream().map(QuorumInfo.ReplicaState::replicaId).collect(Collectors.toSet()).equals(BROKERS);
        }, DEADLINE, "the quorum lists the brokers " + BROKERS + " as observers");

        KafkaTool.Result status = KafkaTool.run(MetadataQuorumCommand::main, "--bootstrap-server", bootstrap, "describe", "--status");
        assertThat(status.exitCode()).as("%s", status).isZero();
        List<String> lines = status.lines();
        assertThat(lines).as("%s", status).contains("LeaderId:               " + leader);
        assertThat(lines).anySatisfy(line -> assertThat(line).startsWith("ClusterId:              " + cluster.clusterId()));
        assertThat(ids(line(lines, "CurrentVoters:"))).as("voters in %s", status).isEqualTo(VOTERS);
        assertThat(ids(line(lines, "CurrentObservers:"))).as("observers in %s", status).isEqualTo(BROKERS);

        KafkaTool.Result replication = KafkaTool.run(MetadataQuorumCommand::main, "--bootstrap-server", bootstrap, "describe",
            "--replication");
        assertThat(replication.exitCode()).as("%s", replication).isZero();
        List<String> rows = replication.lines();
        assertThat(rows).as("%s", replication).hasSize(1 + VOTERS.size() + BROKERS.size());
        assertThat(rows.get(0).trim().split("\\s+")).containsExactly("NodeId", "DirectoryId", "LogEndOffset", "Lag",
            "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status");
        for (String row : rows.subList(1, rows.size())) {
            String[] fields = row.trim().split("\\s+");
            int id = Integer.parseInt(fields[0]);
            String expected = id == leader ? "Leader" : VOTERS.contains(id) ? "Follower" : "Observer";
            assertThat(fields[fields.length - 1]).as("status of node %d in %s", id, replication).isEqualTo(expected);
        }
    }

    @Test
    void kcatRoundTripsRecordsAcrossBrokers() throws Exception {
        ExternalTools.require("kcat", ExternalTools.onPath("kcat"));
        String metadata = ExternalTools.run(List.of("kcat", "-b", cluster.bootstrapServers(), "-L"), null, 60);
        assertThat(metadata).contains("3 brokers:");
        for (ClusterHarness.Node broker : cluster.brokers()) {
            assertThat(metadata).contains("broker " + broker.id() + " at " + broker.bootstrap());
        }
        String topic = "split-kcat";
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        StringBuilder input = new StringBuilder();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            input.append("key").append(i).append(':').append("value-").append(i).append('\n');
            expected.add("key" + i + "=value-" + i);
        }
        // Produce through the first broker, consume through the last: each finds the partitions' leaders on the others.
        ExternalTools.run(List.of("kcat", "-b", cluster.brokers().get(0).bootstrap(), "-P", "-t", topic, "-K:",
            "-X", "topic.metadata.refresh.interval.ms=1000"), input.toString(), 120);
        String consumed = ExternalTools.run(List.of("kcat", "-b", cluster.brokers().get(2).bootstrap(), "-C", "-t", topic,
            "-o", "beginning", "-e", "-f", "%k=%s\\n"), null, 120);
        assertThat(consumed.lines().filter(line -> !line.isEmpty()).toList()).containsExactlyInAnyOrderElementsOf(expected);
    }

    /**
     * Admin.unregisterBroker, as an operator decommissions a broker: through a broker (which
     * forwards it to the active controller) and through the controllers (KIP-919). An id that is
     * not registered is BROKER_ID_NOT_REGISTERED; a stopped broker once unregistered is gone from
     * DescribeCluster and Metadata on every broker; started again it registers again.
     */
    @Test
    void anUnregisteredBrokerLeavesTheClusterAndRegistersAgainWhenItRestarts() throws Exception {
        ClusterHarness.Node leaving = cluster.node(6);
        List<ClusterHarness.Node> staying = List.of(cluster.node(4), cluster.node(5));
        try (Admin admin = ClusterHarness.admin(cluster.node(4).bootstrap()); Admin controllers = cluster.controllerAdmin()) {
            awaitBrokers(cluster.brokers(), BROKERS);
            assertThatThrownBy(() -> admin.unregisterBroker(99).all().get(30, TimeUnit.SECONDS)).as("unknown id through a broker")
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(BrokerIdNotRegisteredException.class);
            assertThatThrownBy(() -> controllers.unregisterBroker(99).all().get(30, TimeUnit.SECONDS)).as("unknown id through the controllers")
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(BrokerIdNotRegisteredException.class);

            leaving.stop();
            // Stopped, it is fenced but still registered: DescribeCluster v2 lists it when asked for fenced brokers (KIP-1073).
            ClusterHarness.waitUntil(() -> admin.describeCluster(new DescribeClusterOptions().includeFencedBrokers(true)).nodes()
                .get(10, TimeUnit.SECONDS).stream().anyMatch(node -> node.id() == 6 && node.isFenced()), DEADLINE, "broker 6 is fenced");
            admin.unregisterBroker(6).all().get(30, TimeUnit.SECONDS);
            awaitBrokers(staying, Set.of(4, 5));
            assertThatThrownBy(() -> admin.unregisterBroker(6).all().get(30, TimeUnit.SECONDS)).as("unregistered twice")
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(BrokerIdNotRegisteredException.class);

            leaving.start();
            awaitBrokers(cluster.brokers(), BROKERS);
        } finally {
            if (!leaving.isAlive()) {
                leaving.start(); // the other tests share the cluster
            }
        }
    }

    /**
     * Waits until DescribeCluster (Admin, fenced brokers included: every registration) and
     * Metadata (a raw request: the unfenced brokers) on each of {@code nodes} list exactly {@code expected}.
     */
    private static void awaitBrokers(List<ClusterHarness.Node> nodes, Set<Integer> expected) throws Exception {
        for (ClusterHarness.Node node : nodes) {
            try (Admin admin = ClusterHarness.admin(node.bootstrap())) {
                ClusterHarness.waitUntil(() -> admin.describeCluster(new DescribeClusterOptions().includeFencedBrokers(true)).nodes()
                    .get(10, TimeUnit.SECONDS).stream().map(Node::id).collect(Collectors.toSet()).equals(expected), DEADLINE,
                    node + " describes exactly the brokers " + expected);
            }
            ClusterHarness.waitUntil(() -> metadataBrokers(node).equals(expected), DEADLINE, node + "'s Metadata lists exactly " + expected);
        }
    }

    /** The broker ids a Metadata v12 request (no topics) to {@code node} answers. */
    private static Set<Integer> metadataBrokers(ClusterHarness.Node node) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", node.brokerPort())) {
            socket.setSoTimeout(10_000);
            ByteBuffer frame = Frames.encodeRequest(ApiMessageType.METADATA, (short) 12, 1, "unregister-test",
                new MetadataRequestData().setTopics(List.of()));
            socket.getOutputStream().write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] response = new byte[in.readInt()];
            in.readFully(response);
            MetadataResponseData metadata = (MetadataResponseData) Frames.parseResponse(ApiMessageType.METADATA, (short) 12,
                ByteBuffer.wrap(response), 1);
            return metadata.brokers().stream().map(MetadataResponseData.MetadataResponseBroker::nodeId).collect(Collectors.toSet());
        }
    }

    private static String line(List<String> lines, String prefix) {
        return lines.stream().filter(line -> line.startsWith(prefix)).findFirst()
            .orElseThrow(() -> new AssertionError("no line starting with " + prefix + " in " + lines));
    }

    private static Set<Integer> ids(String line) {
        Matcher matcher = ID.matcher(line);
        Set<Integer> ids = new java.util.TreeSet<>();
        while (matcher.find()) {
            ids.add(Integer.parseInt(matcher.group(1)));
        }
        return ids;
    }
}
