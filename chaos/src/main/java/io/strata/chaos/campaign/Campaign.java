package io.strata.chaos.campaign;

import io.strata.chaos.cluster.ChaosCluster;
import io.strata.chaos.nemesis.FaultBudget;
import io.strata.chaos.nemesis.NemesisSchedule;
import io.strata.chaos.nemesis.Nemeses;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code campaign}: one fault-campaign run against a real cluster (root only; docs/chaos-plan.md, "Running a
 * campaign"). Exit status: 0 no anomaly, 1 anomalies, 2 the run could not be checked completely (the cluster did
 * not recover, a drain was cut short, a step failed, an exception), 64 bad arguments.
 */
@Command(name = "campaign", mixinStandardHelpOptions = true,
    description = "Runs workloads against a chaos cluster under a seeded nemesis schedule, drains, checks the history.",
    footer = {"", "Nemeses: " + Campaign.NEMESES_HELP, "Exit: 0 no anomaly, 1 anomalies, 2 run not fully checked, 64 bad arguments."})
public final class Campaign implements Callable<Integer> {
    /** Exit status for bad arguments (sysexits' EX_USAGE: picocli's default 2 is taken by {@link CampaignResult#EXIT_HARNESS}). */
    static final int EXIT_USAGE = 64;
    /** The {@code Nemeses.names()} for {@code --help} (an annotation needs a constant; a test keeps them equal). */
    static final String NEMESES_HELP = "kill, kill-leader, kill-controller, pause, pause-leader, partition, partition-halves, "
        + "partition-isolate, partition-bridge, partition-oneway, partition-leader, loss, bandwidth (docs/chaos-plan.md, \"Nemeses\")";

    /** The workload registry of the command line: {@code io.strata.chaos.workload.Workloads} (names there). */
    static final WorkloadFactory REGISTRY = io.strata.chaos.workload.Workloads::create;

    @Option(names = "--nodes", defaultValue = "3", description = "cluster size, 3 or 5 (default ${DEFAULT-VALUE})")
    int nodes;

    @Option(names = "--seconds", defaultValue = "60", description = "how long the nemeses run (default ${DEFAULT-VALUE})")
    int seconds;

    @Option(names = "--seed", defaultValue = "1", description = "seeds the schedule, the workloads and the cluster id (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--nemeses", split = ",", defaultValue = "kill,pause,partition",
        description = "comma-separated nemesis kinds (default ${DEFAULT-VALUE}); 'none' for a baseline run")
    List<String> nemeses;

    @Option(names = "--workloads", split = ",", required = true, description = "comma-separated workload names")
    List<String> workloads;

    @Option(names = "--out", required = true, description = "the run directory (absent or empty)")
    Path out;

    @Option(names = "--run", defaultValue = "1", description = "run number 1..254: the nodes' 10.77.RUN.N addresses (default ${DEFAULT-VALUE})")
    int run;

    @Option(names = "--jar", description = "the strata.jar (default: -Dstrata.jar, else tools/target/strata.jar above here)")
    Path jar;

    @Option(names = "--max-concurrent", defaultValue = "2", description = "most faults at once (default ${DEFAULT-VALUE})")
    int maxConcurrent;

    @Option(names = "--max-impaired", description = "most nodes impaired at once (default: what the quorum tolerates, (nodes-1)/2)")
    Integer maxImpaired;

    @Option(names = "--fault-seconds", split = "-", defaultValue = "5-15", description = "fault period bounds (default ${DEFAULT-VALUE})")
    List<Integer> faultSeconds;

    @Option(names = "--heal-seconds", split = "-", defaultValue = "5-10", description = "healthy period bounds (default ${DEFAULT-VALUE})")
    List<Integer> healSeconds;

    private final WorkloadFactory factory;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    Campaign(WorkloadFactory factory) {
        this.factory = factory;
    }

    public static void main(String[] args) {
        System.exit(run(args, REGISTRY, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line with this workload factory and these streams; @return the exit status. */
    public static int run(String[] args, WorkloadFactory factory, PrintWriter out, PrintWriter err) {
        CommandLine commandLine = new CommandLine(new Campaign(factory));
        commandLine.setOut(out);
        commandLine.setErr(err);
        commandLine.getCommandSpec().exitCodeOnInvalidInput(EXIT_USAGE);
        commandLine.getCommandSpec().exitCodeOnExecutionException(CampaignResult.EXIT_HARNESS);
        return commandLine.execute(args);
    }

    /** The run's configuration from the options; @throws IllegalArgumentException naming a bad one */
    CampaignConfig config() {
        List<String> kinds = new ArrayList<>(nemeses);
        kinds.remove("none");
        for (String kind : kinds) {
            if (!Nemeses.names().contains(kind)) {
                throw new IllegalArgumentException("unknown nemesis: " + kind + "; known: " + Nemeses.names());
            }
        }
        if (nodes != 3 && nodes != 5) {
            throw new IllegalArgumentException("--nodes must be 3 or 5: nodes=" + nodes);
        }
        if (seconds < 1) {
            throw new IllegalArgumentException("--seconds must be >= 1: seconds=" + seconds);
        }
        if (faultSeconds.size() != 2 || healSeconds.size() != 2) {
            throw new IllegalArgumentException("--fault-seconds and --heal-seconds take MIN-MAX: " + faultSeconds + ", " + healSeconds);
        }
        int impaired = maxImpaired == null ? FaultBudget.quorumTolerance(nodes) : maxImpaired;
        NemesisSchedule.Config schedule = new NemesisSchedule.Config(faultSeconds.get(0) * 1000L, faultSeconds.get(1) * 1000L,
            healSeconds.get(0) * 1000L, healSeconds.get(1) * 1000L, maxConcurrent, impaired);
        return CampaignConfig.of(run, nodes, Duration.ofSeconds(seconds), seed, kinds, workloads, out,
            jar == null ? ChaosCluster.defaultJar() : jar).withSchedule(schedule);
    }

    @Override
    public Integer call() throws Exception {
        CampaignConfig config;
        try {
            config = config();
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println(e.getMessage());
            return EXIT_USAGE;
        }
        CampaignResult result;
        try {
            result = new CampaignRunner(config, factory).run();
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println(e.getMessage()); // refused before anything started
            return EXIT_USAGE;
        }
        PrintWriter out = spec.commandLine().getOut();
        result.anomalies().forEach(out::println);
        result.harnessErrors().forEach(error -> out.println("HARNESS " + error));
        out.println("run " + config.run() + " seed " + result.seed() + ": ops " + result.ops() + ", nemesis " + result.nemesisEvents()
            + ", " + result.anomalies().size() + " anomalies, " + result.durationsMs().get("total") / 1000 + " s; " + result.runDir());
        return result.exitCode();
    }
}
