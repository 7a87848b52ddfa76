package io.strata.tools;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code strata groups}: the parent of the consumer group subcommands (Kafka's kafka-consumer-groups.sh). */
@Command(name = "groups",
    description = "List, describe and delete consumer groups, and reset their committed offsets.",
    subcommands = {GroupsListCommand.class, GroupsDescribeCommand.class, GroupsDeleteCommand.class, GroupsResetOffsetsCommand.class})
final class GroupsCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
