package io.strata.tools;

import io.strata.tools.client.ClientException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code strata} command. Each subcommand is its own class.
 *
 * <p>Exit codes: 0 success; 1 an operation failed (unreachable broker, broker error, timeout:
 * {@link ClientException}, reported as one "strata: ..." line on stderr); 2 bad usage
 * (picocli's message and the command's usage).
 */
@Command(name = "strata",
    scope = CommandLine.ScopeType.INHERIT, // every subcommand gets -h/--help and -V/--version
    mixinStandardHelpOptions = true,
    versionProvider = VersionCommand.Provider.class,
    description = "Strata: a Kafka-compatible event streaming platform.",
    subcommands = {ServerCommand.class, TopicsCommand.class, ProduceCommand.class, ConsumeCommand.class, GroupsCommand.class, MetricsCommand.class,
        VersionCommand.class, CommandLine.HelpCommand.class})
public final class StrataCli implements Runnable {
    /** Exit code of a command whose operation failed. */
    public static final int EXIT_FAILURE = 1;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the CLI and returns its exit code (for tests). */
    public static int run(String... args) {
        CommandLine commandLine = new CommandLine(new StrataCli());
        commandLine.setExecutionExceptionHandler((exception, command, parseResult) -> {
            if (exception instanceof ClientException) {
                System.out.flush();
                System.err.println("strata: " + exception.getMessage());
                return EXIT_FAILURE;
            }
            throw exception;
        });
        return commandLine.execute(args);
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
