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
    description = "Strata: a Kafka-compatible event streaming platform.")
public final class StrataCli implements Runnable {
    /** Exit code of a command whose operation failed. */
    public static final int EXIT_FAILURE = 1;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        // Netty asks the JVM whether Flight Recorder is available when it starts, which loads and
        // initialises JFR (~70 classes) on every start; it records only allocator events with it.
        // -Dio.netty.jfr.enabled=true turns them back on.
        if (System.getProperty("io.netty.jfr.enabled") == null) {
            System.setProperty("io.netty.jfr.enabled", "false");
        }
        System.exit(run(args));
    }

    /** Runs the CLI and returns its exit code (for tests). */
    public static int run(String... args) {
        CommandLine commandLine = commandLine(args.length > 0 ? args[0] : "");
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

    /**
     * The command tree for a command line starting with {@code first}. picocli builds a model of
     * every registered command, its options and their types up front; when the first argument
     * names a subcommand only that one is registered (for {@code strata server} this takes about
     * a fifth off the time to a ready broker). Anything else (help, usage errors, no arguments)
     * gets the whole tree.
     */
    static CommandLine commandLine(String first) {
        CommandLine commandLine = new CommandLine(new StrataCli());
        Object only = subcommand(first);
        if (only != null) {
            commandLine.addSubcommand(first, only);
            return commandLine;
        }
        for (String name : SUBCOMMANDS) {
            commandLine.addSubcommand(name, subcommand(name));
        }
        commandLine.addSubcommand(new CommandLine.HelpCommand());
        return commandLine;
    }

    /** The subcommands, in the order {@code strata --help} lists them. */
    private static final String[] SUBCOMMANDS = {"server", "format", "cluster", "topics", "produce", "consume", "groups", "perf", "metrics", "version"};

    private static Object subcommand(String name) {
        return switch (name) {
            case "server" -> new ServerCommand();
            case "format" -> new FormatCommand();
            case "cluster" -> new ClusterCommand();
            case "topics" -> new TopicsCommand();
            case "produce" -> new ProduceCommand();
            case "consume" -> new ConsumeCommand();
            case "groups" -> new GroupsCommand();
            case "perf" -> new PerfCommand();
            case "metrics" -> new MetricsCommand();
            case "version" -> new VersionCommand();
            default -> null;
        };
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
