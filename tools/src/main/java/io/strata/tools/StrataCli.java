package io.strata.tools;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code strata} command. Each subcommand is its own class. */
@Command(name = "strata",
    mixinStandardHelpOptions = true,
    versionProvider = VersionCommand.Provider.class,
    description = "Strata: a Kafka-compatible event streaming platform.",
    subcommands = {ServerCommand.class, VersionCommand.class, CommandLine.HelpCommand.class})
public final class StrataCli implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the CLI and returns its exit code (for tests). */
    public static int run(String... args) {
        return new CommandLine(new StrataCli()).execute(args);
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
