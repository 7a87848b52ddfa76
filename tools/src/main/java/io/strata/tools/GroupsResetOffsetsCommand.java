package io.strata.tools;

import io.strata.protocol.ErrorCode;
import io.strata.tools.client.BrokerErrorException;
import io.strata.tools.client.ClientException;
import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.GroupAdmin;
import io.strata.tools.client.GroupDescription;
import io.strata.tools.client.PartitionOffsets;
import io.strata.tools.client.TopicConsumer;
import io.strata.tools.client.TopicInfo;
import io.strata.tools.client.TopicPartition;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;

/**
 * {@code strata groups reset-offsets --group G --topic T[:P,...] SCENARIO [--execute]}: moves a
 * group's committed offsets, as kafka-consumer-groups.sh --reset-offsets does. Without
 * {@code --execute} it is a dry run that only prints the plan:
 * <pre>
 *
 * GROUP           TOPIC           PARTITION  NEW-OFFSET
 * orders-app      orders          0          0
 * </pre>
 * With {@code --execute} the plan is committed with OffsetCommit at generation -1, which the
 * coordinator accepts only from outside the group. Like Kafka's tool it refuses while the group
 * has active members (any state but Empty, or Dead for a group that does not exist yet).
 *
 * <p>Offsets asked for with {@code --to-offset} or {@code --shift-by} are kept inside the
 * partition's earliest and latest offsets (with a warning on stderr); {@code --to-datetime}
 * goes to the first record at or after the time, or to the end if there is none.
 */
@Command(name = "reset-offsets", description = "Move a group's committed offsets (a dry run unless --execute is given).")
final class GroupsResetOffsetsCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Option(names = "--group", required = true, paramLabel = "GROUP", description = "The group whose offsets to reset.")
    String groupId;

    @Option(names = "--topic", paramLabel = "TOPIC[:PARTITIONS]",
        description = "A topic, or some of its partitions (orders:0,2); repeatable.")
    List<String> topicArguments = new ArrayList<>();

    @Option(names = "--all-topics", description = "Every partition the group has committed an offset for.")
    boolean allTopics;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Scenario scenario;

    @Option(names = "--execute", description = "Commit the new offsets (default: print them only).")
    boolean execute;

    @Option(names = "--dry-run", description = "Print the new offsets without committing them (the default).")
    boolean dryRun;

    /** Where the offsets go; exactly one. */
    static final class Scenario {
        @Option(names = "--to-earliest", required = true, description = "To the earliest offset of each partition.")
        boolean toEarliest;

        @Option(names = "--to-latest", required = true, description = "To the latest offset (the end) of each partition.")
        boolean toLatest;

        @Option(names = "--to-offset", required = true, paramLabel = "N", description = "To offset N.")
        Long toOffset;

        @Option(names = "--to-datetime", required = true, paramLabel = "DATETIME", converter = DateTimes.Converter.class,
            description = "To the first record at or after DATETIME (ISO 8601, e.g. 2024-05-01T12:00:00.000Z; no zone: local time).")
        Long toDateTimeMs;

        @Option(names = "--shift-by", required = true, paramLabel = "N",
            description = "By N from the committed offset (negative: back).")
        Long shiftBy;
    }

    @Override
    public Integer call() {
        if (execute && dryRun) {
            throw usage("choose one of --execute and --dry-run");
        }
        if (allTopics == !topicArguments.isEmpty()) {
            throw usage("choose the partitions with --topic, or give --all-topics");
        }
        Map<TopicPartition, Long> plan;
        try (ClusterClient cluster = connection.connect()) {
            GroupAdmin admin = new GroupAdmin(cluster);
            GroupDescription group = admin.describeGroup(groupId);
            if (group.exists() && !GroupDescription.EMPTY.equals(group.state())) {
                throw new ClientException("assignments can only be reset if the group '" + groupId
                    + "' is inactive, but the current state is " + group.state() + ".");
            }
            Map<TopicPartition, Long> committed = allTopics || scenario.shiftBy != null ? admin.committedOffsets(groupId) : Map.of();
            PartitionOffsets lookup = new PartitionOffsets(cluster);
            plan = plan(lookup, committed);
            if (execute) {
                admin.commitOffsets(groupId, plan);
            }
        }
        TextTable table = new TextTable().column("GROUP", 15).column("TOPIC", 15).column("PARTITION", 10).column("NEW-OFFSET", 0);
        plan.forEach((partition, offset) -> table.row(groupId, partition.topic(), partition.partition(), offset));
        System.out.println();
        table.lines().forEach(System.out::println);
        System.out.flush();
        if (execute) {
            System.err.println("strata: committed " + plan.size() + (plan.size() == 1 ? " offset" : " offsets") + " for group " + groupId);
        } else {
            System.err.println("strata: dry run; nothing was committed (add --execute to commit these offsets)");
        }
        return 0;
    }

    private CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    /** The new offset of every target partition, sorted. */
    private Map<TopicPartition, Long> plan(PartitionOffsets lookup, Map<TopicPartition, Long> committed) {
        Set<TopicPartition> targets = allTopics ? new TreeSet<>(committed.keySet()) : null;
        Map<String, TopicInfo> topics;
        if (targets == null) {
            Map<String, List<Integer>> requested = parseTopicArguments();
            topics = lookup.topics(requested.keySet());
            targets = targets(requested, topics);
        } else {
            topics = lookup.topics(targets.stream().map(TopicPartition::topic).toList());
            List<TopicPartition> missing = targets.stream().filter(partition -> !exists(topics, partition)).toList();
            if (!missing.isEmpty()) {
                throw new ClientException("cannot reset the offsets of group " + groupId + ": partitions " + missing + " do not exist");
            }
        }
        Map<TopicPartition, Long> earliest = lookup.offsets(topics, targets, TopicConsumer.EARLIEST_TIMESTAMP);
        Map<TopicPartition, Long> latest = lookup.offsets(topics, targets, TopicConsumer.LATEST_TIMESTAMP);
        Map<TopicPartition, Long> byTime = scenario.toDateTimeMs == null ? Map.of() : lookup.offsets(topics, targets, scenario.toDateTimeMs);
        Map<TopicPartition, Long> plan = new TreeMap<>();
        for (TopicPartition partition : targets) {
            plan.put(partition, newOffset(partition, earliest.get(partition), latest.get(partition), byTime.get(partition), committed.get(partition)));
        }
        return plan;
    }

    private long newOffset(TopicPartition partition, long earliest, long latest, Long byTime, Long committed) {
        if (scenario.toEarliest) {
            return earliest;
        }
        if (scenario.toLatest) {
            return latest;
        }
        if (scenario.toDateTimeMs != null) {
            if (byTime == null || byTime < 0) {
                warn("partition " + partition.partition() + " of topic " + partition.topic() + " has no record at or after the time; "
                    + "using its latest offset " + latest);
                return latest;
            }
            return byTime;
        }
        long requested;
        if (scenario.shiftBy != null) {
            if (committed == null) {
                throw new ClientException("cannot shift the offset of " + partition + ": group " + groupId + " has no committed offset for it");
            }
            requested = committed + scenario.shiftBy;
        } else {
            requested = scenario.toOffset;
        }
        if (requested > latest) {
            warn("new offset " + requested + " is higher than the latest offset of " + partition + "; using " + latest);
            return latest;
        }
        if (requested < earliest) {
            warn("new offset " + requested + " is lower than the earliest offset of " + partition + "; using " + earliest);
            return earliest;
        }
        return requested;
    }

    private static void warn(String message) {
        System.err.println("strata: " + message);
    }

    /** --topic values: topic to its partitions (an empty list: every partition). */
    private Map<String, List<Integer>> parseTopicArguments() {
        Map<String, List<Integer>> requested = new LinkedHashMap<>();
        for (String argument : topicArguments) {
            int colon = argument.indexOf(':');
            String topic = colon < 0 ? argument : argument.substring(0, colon);
            if (topic.isEmpty()) {
                throw usage("--topic needs a topic name, got '" + argument + "'");
            }
            List<Integer> partitions = requested.computeIfAbsent(topic, name -> new ArrayList<>());
            if (colon < 0) {
                continue;
            }
            for (String text : argument.substring(colon + 1).split(",", -1)) {
                try {
                    int partition = Integer.parseInt(text.trim());
                    if (partition < 0) {
                        throw new NumberFormatException();
                    }
                    partitions.add(partition);
                } catch (NumberFormatException e) {
                    throw usage("invalid partition '" + text + "' in --topic " + argument);
                }
            }
        }
        return requested;
    }

    private static Set<TopicPartition> targets(Map<String, List<Integer>> requested, Map<String, TopicInfo> topics) {
        Set<TopicPartition> targets = new TreeSet<>();
        for (Map.Entry<String, List<Integer>> entry : requested.entrySet()) {
            TopicInfo topic = topics.get(entry.getKey());
            if (topic == null) {
                throw new BrokerErrorException("cannot reset offsets for topic " + entry.getKey(), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null);
            }
            if (entry.getValue().isEmpty()) {
                for (int partition = 0; partition < topic.partitionCount(); partition++) {
                    targets.add(new TopicPartition(topic.name(), partition));
                }
            }
            for (int partition : entry.getValue()) {
                targets.add(new TopicPartition(topic.name(), topic.partition(partition).partition()));
            }
        }
        return targets;
    }

    private static boolean exists(Map<String, TopicInfo> topics, TopicPartition partition) {
        TopicInfo topic = topics.get(partition.topic());
        return topic != null && partition.partition() < topic.partitionCount();
    }
}
