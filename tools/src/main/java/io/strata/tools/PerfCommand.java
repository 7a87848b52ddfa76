package io.strata.tools;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code strata perf}: the parent of the load generators (Kafka's kafka-producer-perf-test / kafka-consumer-perf-test). */
@Command(name = "perf",
    description = "Measure produce and consume throughput and latency against a cluster.",
    subcommands = {PerfProduceCommand.class, PerfConsumeCommand.class})
final class PerfCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
