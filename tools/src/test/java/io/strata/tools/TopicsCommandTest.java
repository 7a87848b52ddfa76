package io.strata.tools;

import io.strata.protocol.Uuids;
import io.strata.protocol.message.ApiMessageType;
import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.TopicInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code strata topics ...} against a real in-process broker. */
class TopicsCommandTest {
    @RegisterExtension
    static final TestBroker BROKER = new TestBroker();

    private static CliRunner.Result topics(String... args) {
        String[] full = new String[args.length + 3];
        full[0] = "topics";
        System.arraycopy(args, 0, full, 1, args.length);
        full[args.length + 1] = "--bootstrap-server";
        full[args.length + 2] = BROKER.bootstrap();
        return CliRunner.run(full);
    }

    @Test
    void createMakesATopicWithTheRequestedPartitions() {
        CliRunner.Result result = topics("create", "orders", "--partitions", "3", "--replication-factor", "1");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.out()).isEqualTo("Created topic orders.\n");
        try (ClusterClient client = BROKER.client()) {
            TopicInfo topic = client.topic("orders", false);
            assertThat(topic.partitionCount()).isEqualTo(3);
            assertThat(topic.hasTopicId()).isTrue();
        }
    }

    @Test
    void createWithoutPartitionsUsesTheBrokerDefault() {
        CliRunner.Result result = topics("create", "defaults");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        try (ClusterClient client = BROKER.client()) {
            assertThat(client.topic("defaults", false).partitionCount()).isEqualTo(1); // num.partitions defaults to 1
        }
    }

    @Test
    void createOfAnExistingTopicPrintsKafkasErrorAndFails() {
        assertThat(topics("create", "twice").exitCode()).isZero();

        CliRunner.Result again = topics("create", "twice");

        assertThat(again.exitCode()).isEqualTo(1);
        assertThat(again.out()).isEmpty();
        assertThat(again.err()).startsWith("strata: cannot create topic twice: TOPIC_ALREADY_EXISTS: ");
    }

    @Test
    void createWithAnInvalidNameReportsTheBrokersError() {
        CliRunner.Result result = topics("create", "bad/name");

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.err()).contains("strata: cannot create topic bad/name: INVALID_TOPIC_EXCEPTION");
    }

    @Test
    void listPrintsTopicNamesSorted() {
        topics("create", "list-b");
        topics("create", "list-a");

        CliRunner.Result result = topics("list");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        List<String> lines = result.lines();
        assertThat(lines).contains("list-a", "list-b");
        assertThat(lines).isSorted();
    }

    @Test
    void describeShowsTopicIdPartitionsLeadersReplicasAndIsr() {
        topics("create", "described", "--partitions", "2");
        String topicId;
        int nodeId;
        try (ClusterClient client = BROKER.client()) {
            TopicInfo topic = client.topic("described", false);
            topicId = Uuids.toBase64(topic.topicId());
            nodeId = topic.partition(0).leaderId();
        }

        CliRunner.Result result = topics("describe", "described");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        List<String> lines = result.lines();
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).startsWith("Topic: described\tTopicId: " + topicId + "\tPartitionCount: 2\tReplicationFactor: 1");
        assertThat(lines.get(1)).isEqualTo("\tTopic: described\tPartition: 0\tLeader: " + nodeId + "\tReplicas: " + nodeId + "\tIsr: " + nodeId);
        assertThat(lines.get(2)).isEqualTo("\tTopic: described\tPartition: 1\tLeader: " + nodeId + "\tReplicas: " + nodeId + "\tIsr: " + nodeId);
    }

    @Test
    void describeWithoutNamesDescribesEveryTopic() {
        topics("create", "every-1");
        topics("create", "every-2");

        CliRunner.Result result = topics("describe");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.out()).contains("Topic: every-1\t", "Topic: every-2\t");
    }

    @Test
    @RequiresBrokerApi(ApiMessageType.DESCRIBE_CONFIGS)
    void describeListsOnlyTheConfigsSetOnTheTopic() {
        topics("create", "configured", "--config", "retention.ms=123456", "--config", "cleanup.policy=compact");

        CliRunner.Result result = topics("describe", "configured");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.lines().get(0)).endsWith("\tConfigs: cleanup.policy=compact,retention.ms=123456");
    }

    @Test
    void describeOfAnUnknownTopicFails() {
        CliRunner.Result result = topics("describe", "no-such-topic");

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.err()).contains("strata: cannot describe topic no-such-topic: UNKNOWN_TOPIC_OR_PARTITION: "
            + "This server does not host this topic-partition.");
    }

    @Test
    @RequiresBrokerApi(ApiMessageType.CREATE_PARTITIONS)
    void alterPartitionsGrowsTheTopic() {
        topics("create", "growing", "--partitions", "1");

        CliRunner.Result result = topics("alter", "growing", "--partitions", "4");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.out()).isEqualTo("Topic growing now has 4 partitions.\n");
        try (ClusterClient client = BROKER.client()) {
            assertThat(client.topic("growing", false).partitionCount()).isEqualTo(4);
        }
    }

    @Test
    @RequiresBrokerApi(ApiMessageType.CREATE_PARTITIONS)
    void alterPartitionsCannotShrinkATopic() {
        topics("create", "shrinking", "--partitions", "3");

        CliRunner.Result result = topics("alter", "shrinking", "--partitions", "2");

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.err()).contains("strata: cannot add partitions to topic shrinking: INVALID_PARTITIONS");
    }

    @Test
    @RequiresBrokerApi({ApiMessageType.INCREMENTAL_ALTER_CONFIGS, ApiMessageType.DESCRIBE_CONFIGS})
    void alterConfigsSetsAndDeletesOverrides() {
        topics("create", "reconfigured", "--config", "retention.ms=1000", "--config", "segment.ms=600000");

        CliRunner.Result result = topics("alter", "reconfigured", "--config", "retention.ms=2000", "--config", "max.message.bytes=5000",
            "--delete-config", "segment.ms");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.out()).isEqualTo("Updated the configs of topic reconfigured.\n");
        CliRunner.Result described = topics("describe", "reconfigured");
        assertThat(described.lines().get(0)).endsWith("\tConfigs: max.message.bytes=5000,retention.ms=2000");
    }

    @Test
    @RequiresBrokerApi(ApiMessageType.DELETE_TOPICS)
    void deleteRemovesTheTopicAndReportsUnknownOnes() {
        topics("create", "doomed");

        CliRunner.Result result = topics("delete", "doomed", "never-existed");

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.out()).isEqualTo("Deleted topic doomed.\n");
        assertThat(result.err()).contains("strata: cannot delete topic never-existed: UNKNOWN_TOPIC_OR_PARTITION");
        assertThat(topics("list").lines()).doesNotContain("doomed");
    }
}
