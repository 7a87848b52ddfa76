package io.strata.tools;

import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.GroupAdmin;
import io.strata.tools.client.GroupDescription;
import io.strata.tools.client.GroupListing;
import io.strata.tools.client.GroupMember;
import io.strata.tools.client.PartitionOffsets;
import io.strata.tools.client.TopicConsumer;
import io.strata.tools.client.TopicInfo;
import io.strata.tools.client.TopicPartition;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/**
 * {@code strata groups describe GROUP...}: what kafka-consumer-groups.sh --describe prints,
 * with its layout (a blank line, then one table per group). The default view is per partition:
 * <pre>
 * GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID
 * orders-app      orders          0          10              12              2               consumer-1-...  /127.0.0.1      consumer-1
 * </pre>
 * one row per partition a member owns (members with most partitions first), then the
 * partitions with committed offsets that nobody owns ("-" member). {@code --members} prints one
 * row per member, {@code --state} one row per group. Notices go to stderr as Kafka words them:
 * "Consumer group 'g' has no active members.", "Warning: Consumer group 'g' is rebalancing.";
 * a group that does not exist is an error (exit 1) and the other groups are still described.
 */
@Command(name = "describe", description = "Show a group's partitions with committed offsets and lag, its members (--members) or its state (--state).")
final class GroupsDescribeCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Parameters(paramLabel = "GROUP", arity = "0..*", description = "Groups to describe.")
    List<String> groupIds = List.of();

    @Option(names = "--all-groups", description = "Describe every group.")
    boolean allGroups;

    @Option(names = "--members", description = "One row per member: consumer id, host, client id and partition count.")
    boolean members;

    @Option(names = "--state", description = "One row per group: coordinator, assignment strategy, state and member count.")
    boolean state;

    @Option(names = "--offsets", description = "One row per partition (the default).")
    boolean offsets;

    @Option(names = "--verbose", description = "More columns: assignments and epochs with --members, epochs with --state.")
    boolean verbose;

    @Override
    public Integer call() {
        if ((members ? 1 : 0) + (state ? 1 : 0) + (offsets ? 1 : 0) > 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "choose one of --members, --state and --offsets");
        }
        if (allGroups == !groupIds.isEmpty()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "name the groups to describe, or give --all-groups");
        }
        int exitCode = 0;
        try (ClusterClient cluster = connection.connect()) {
            GroupAdmin admin = new GroupAdmin(cluster);
            List<String> targets = allGroups ? admin.listGroups().stream().map(GroupListing::groupId).toList()
                : new ArrayList<>(new LinkedHashSet<>(groupIds));
            for (String groupId : new TreeSet<>(targets)) {
                GroupDescription group = admin.describeGroup(groupId);
                if (!group.exists()) {
                    System.out.flush();
                    System.err.println("strata: consumer group '" + groupId + "' does not exist");
                    exitCode = StrataCli.EXIT_FAILURE;
                    continue;
                }
                printNotice(group);
                if (state) {
                    print(stateTable(group));
                } else if (members) {
                    if (!group.members().isEmpty()) {
                        print(membersTable(group));
                    }
                } else {
                    TextTable table = offsetsTable(group, admin.committedOffsets(groupId), new PartitionOffsets(cluster));
                    if (!table.isEmpty()) {
                        print(table);
                    }
                }
            }
        }
        return exitCode;
    }

    private static void printNotice(GroupDescription group) {
        if (GroupDescription.EMPTY.equals(group.state())) {
            System.err.println("Consumer group '" + group.groupId() + "' has no active members.");
        } else if (group.isRebalancing()) {
            System.err.println("Warning: Consumer group '" + group.groupId() + "' is rebalancing.");
        }
    }

    /** Kafka's layout: a blank line before each table. */
    private static void print(TextTable table) {
        System.out.println();
        table.lines().forEach(System.out::println);
    }

    /** One row per owned partition (members with the most partitions first), then committed partitions nobody owns. */
    static TextTable offsetsTable(GroupDescription group, Map<TopicPartition, Long> committed, PartitionOffsets lookup) {
        Set<TopicPartition> all = new TreeSet<>(committed.keySet());
        group.members().forEach(member -> all.addAll(member.assignment()));
        Map<String, TopicInfo> topics = lookup.topics(all.stream().map(TopicPartition::topic).collect(Collectors.toSet()));
        Map<TopicPartition, Long> logEndOffsets = lookup.offsets(topics, all, TopicConsumer.LATEST_TIMESTAMP);

        TextTable table = new TextTable().column("GROUP", 15).column("TOPIC", 15).column("PARTITION", 10).column("CURRENT-OFFSET", 15)
            .column("LOG-END-OFFSET", 15).column("LAG", 15).column("CONSUMER-ID", 15).column("HOST", 15).column("CLIENT-ID", 0);
        List<GroupMember> owners = new ArrayList<>(group.members());
        owners.sort(Comparator.comparingInt((GroupMember member) -> member.assignment().size()).reversed()
            .thenComparing(GroupMember::memberId));
        Set<TopicPartition> owned = new TreeSet<>();
        for (GroupMember member : owners) {
            for (TopicPartition partition : member.assignment()) {
                owned.add(partition);
                addOffsetRow(table, group.groupId(), partition, committed, logEndOffsets, member.memberId(), member.host(), member.clientId());
            }
        }
        for (TopicPartition partition : committed.keySet()) {
            if (!owned.contains(partition)) {
                addOffsetRow(table, group.groupId(), partition, committed, logEndOffsets, null, null, null);
            }
        }
        return table;
    }

    private static void addOffsetRow(TextTable table, String groupId, TopicPartition partition, Map<TopicPartition, Long> committed,
                                     Map<TopicPartition, Long> logEndOffsets, String consumerId, String host, String clientId) {
        Long offset = committed.get(partition);
        Long logEndOffset = logEndOffsets.get(partition);
        Long lag = offset == null || logEndOffset == null ? null : logEndOffset - offset;
        table.row(groupId, partition.topic(), partition.partition(), offset, logEndOffset, lag, consumerId, host, clientId);
    }

    private TextTable membersTable(GroupDescription group) {
        boolean staticMembers = group.members().stream().anyMatch(member -> member.groupInstanceId() != null);
        TextTable table = new TextTable().column("GROUP", 15).column("CONSUMER-ID", 15);
        if (staticMembers) {
            table.column("GROUP-INSTANCE-ID", 17);
        }
        table.column("HOST", 15).column("CLIENT-ID", 15).column("#PARTITIONS", verbose ? 15 : 0);
        if (verbose) {
            table.column("CURRENT-EPOCH", 15).column("CURRENT-ASSIGNMENT", 20).column("TARGET-EPOCH", 15).column("TARGET-ASSIGNMENT", 0);
        }
        for (GroupMember member : group.members()) {
            List<Object> cells = new ArrayList<>(Arrays.asList(group.groupId(), member.memberId()));
            if (staticMembers) {
                cells.add(member.groupInstanceId());
            }
            cells.addAll(Arrays.asList(member.host(), member.clientId(), member.assignment().size()));
            if (verbose) {
                boolean consumerGroup = GroupDescription.CONSUMER.equals(group.type());
                cells.add(consumerGroup ? member.memberEpoch() : null);
                cells.add(assignmentText(member.assignment()));
                cells.add(consumerGroup ? group.assignmentEpoch() : null);
                cells.add(member.targetAssignment() == null ? null : assignmentText(member.targetAssignment()));
            }
            table.row(cells.toArray());
        }
        return table;
    }

    /** Kafka's assignment format: "orders:0,1;payments:2" (topics and partitions sorted), or "-" for none. */
    static String assignmentText(List<TopicPartition> assignment) {
        if (assignment.isEmpty()) {
            return TextTable.MISSING;
        }
        Map<String, List<Integer>> byTopic = new TreeMap<>();
        for (TopicPartition partition : assignment) {
            byTopic.computeIfAbsent(partition.topic(), topic -> new ArrayList<>()).add(partition.partition());
        }
        return byTopic.entrySet().stream()
            .map(entry -> entry.getKey() + ":" + entry.getValue().stream().sorted().map(String::valueOf).collect(Collectors.joining(",")))
            .collect(Collectors.joining(";"));
    }

    private TextTable stateTable(GroupDescription group) {
        String coordinator = group.coordinator().host() + ":" + group.coordinator().port() + "  (" + group.coordinatorId() + ")";
        TextTable table = new TextTable().column("GROUP", 15).column("COORDINATOR (ID)", 25).column("ASSIGNMENT-STRATEGY", 20)
            .column("STATE", 20);
        boolean consumerGroup = GroupDescription.CONSUMER.equals(group.type());
        if (verbose) {
            table.column("GROUP-EPOCH", 15).column("TARGET-ASSIGNMENT-EPOCH", 25);
        }
        table.column("#MEMBERS", 0);
        String strategy = group.assignor().isEmpty() ? null : group.assignor();
        if (verbose) {
            table.row(group.groupId(), coordinator, strategy, group.state(), consumerGroup ? group.groupEpoch() : null,
                consumerGroup ? group.assignmentEpoch() : null, group.members().size());
        } else {
            table.row(group.groupId(), coordinator, strategy, group.state(), group.members().size());
        }
        return table;
    }
}
