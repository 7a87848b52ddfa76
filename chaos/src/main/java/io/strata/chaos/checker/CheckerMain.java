package io.strata.chaos.checker;

import io.strata.chaos.history.History;
import io.strata.chaos.history.HistoryFormatException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code check history.jsonl}: reads a history, runs every checker, prints one line per anomaly and a
 * summary. Exit status: 0 no anomaly, 1 anomalies found, 2 the history is malformed or unreadable.
 */
@Command(name = "chaos", mixinStandardHelpOptions = true, subcommands = CheckerMain.Check.class,
        description = "The fault campaign's tools (docs/chaos-plan.md).")
public final class CheckerMain {
    static final int EXIT_ANOMALIES = 1;
    static final int EXIT_BAD_HISTORY = 2;

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line with the given streams; @return the exit status. */
    static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine commandLine = new CommandLine(new CheckerMain());
        commandLine.setOut(out);
        commandLine.setErr(err);
        return commandLine.execute(args);
    }

    /** The {@code check} subcommand. */
    @Command(name = "check", mixinStandardHelpOptions = true, description = "Check a history for anomalies.")
    static final class Check implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "HISTORY", description = "the history.jsonl of a run")
        Path history;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            History loaded;
            try {
                loaded = History.read(history);
            } catch (HistoryFormatException | IllegalArgumentException e) {
                spec.commandLine().getErr().println("malformed history " + history + ": " + e.getMessage());
                return EXIT_BAD_HISTORY;
            } catch (java.io.IOException | java.io.UncheckedIOException e) {
                spec.commandLine().getErr().println("cannot read " + history + ": " + e.getMessage());
                return EXIT_BAD_HISTORY;
            }
            List<Anomaly> anomalies = new Checker().check(loaded);
            for (Anomaly anomaly : anomalies) {
                out.println(anomaly);
            }
            out.println(loaded.ops().size() + " ops, " + anomalies.size() + " anomalies");
            return anomalies.isEmpty() ? 0 : EXIT_ANOMALIES;
        }
    }
}
