package io.strata.tools;

import io.strata.protocol.Uuids;
import io.strata.protocol.message.ApiMessageType;
import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.PartitionInfo;
import io.strata.tools.client.TopicAdmin;
import io.strata.tools.client.TopicInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/**
 * {@code strata topics describe [NAME...]}: Metadata and DescribeConfigs, printed as Kafka's
 * kafka-topics.sh prints them:
 * <pre>
 * Topic: orders	TopicId: 3q2-...	PartitionCount: 2	ReplicationFactor: 1	Configs: retention.ms=60000
 * 	Topic: orders	Partition: 0	Leader: 1	Replicas: 1	Isr: 1
 * </pre>
 * Configs lists only the values set on the topic itself. A broker without DescribeConfigs
 * gets the layout without configs and a notice on stderr.
 */
@Command(name = "describe", description = "Show partitions, leaders, replicas, ISR, topic id and overridden configs.")
final class TopicsDescribeCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions connection;

    @Parameters(paramLabel = "NAME", arity = "0..*", description = "Topics to describe (default: all).")
    List<String> names = List.of();

    @Override
    public Integer call() {
        List<TopicInfo> topics;
        Map<String, Map<String, String>> configs = null;
        try (ClusterClient cluster = connection.connect()) {
            TopicAdmin admin = new TopicAdmin(cluster);
            topics = admin.describeTopics(names);
            if (admin.supports(ApiMessageType.DESCRIBE_CONFIGS)) {
                if (!topics.isEmpty()) {
                    configs = admin.overriddenConfigs(topics.stream().map(TopicInfo::name).toList());
                }
            } else {
                System.err.println("strata: the broker does not support DescribeConfigs; configs are not shown");
            }
        }
        for (TopicInfo topic : topics) {
            printTopic(topic, configs == null ? null : configs.getOrDefault(topic.name(), Map.of()));
        }
        return 0;
    }

    private static void printTopic(TopicInfo topic, Map<String, String> configs) {
        StringBuilder line = new StringBuilder()
            .append("Topic: ").append(topic.name())
            .append("\tTopicId: ").append(topic.hasTopicId() ? Uuids.toBase64(topic.topicId()) : "none")
            .append("\tPartitionCount: ").append(topic.partitionCount())
            .append("\tReplicationFactor: ").append(topic.partitions().isEmpty() ? 0 : topic.partitions().get(0).replicas().size());
        if (configs != null) {
            StringJoiner joined = new StringJoiner(",");
            configs.forEach((key, value) -> joined.add(key + "=" + (value == null ? "(sensitive)" : value)));
            line.append("\tConfigs: ").append(joined);
        }
        System.out.println(line);
        for (PartitionInfo partition : topic.partitions()) {
            StringBuilder row = new StringBuilder()
                .append("\tTopic: ").append(topic.name())
                .append("\tPartition: ").append(partition.partition())
                .append("\tLeader: ").append(partition.hasLeader() ? String.valueOf(partition.leaderId()) : "none")
                .append("\tReplicas: ").append(join(partition.replicas()))
                .append("\tIsr: ").append(join(partition.isr()));
            if (!partition.offlineReplicas().isEmpty()) {
                row.append("\tOffline: ").append(join(partition.offlineReplicas()));
            }
            System.out.println(row);
        }
    }

    private static String join(List<Integer> nodes) {
        return nodes.stream().map(String::valueOf).collect(Collectors.joining(","));
    }
}
