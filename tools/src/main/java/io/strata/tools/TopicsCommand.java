package io.strata.tools;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code strata topics}: the parent of the topic administration subcommands. */
@Command(name = "topics",
    description = "Create, list, describe, alter and delete topics.",
    subcommands = {TopicsCreateCommand.class, TopicsListCommand.class, TopicsDescribeCommand.class, TopicsAlterCommand.class,
        TopicsDeleteCommand.class})
final class TopicsCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
