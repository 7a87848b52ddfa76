package io.strata.tools;

import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.TopicAdmin;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code strata topics create NAME}: CreateTopics. */
@Command(name = "create", description = "Create a topic.")
final class TopicsCreateCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Parameters(index = "0", paramLabel = "NAME", description = "The topic to create.")
    String name;

    @Option(names = "--partitions", paramLabel = "N", description = "Number of partitions (default: the broker's num.partitions).")
    Integer partitions;

    @Option(names = "--replication-factor", paramLabel = "N",
        description = "Replicas per partition (default: the broker's default.replication.factor).")
    Short replicationFactor;

    @Option(names = "--config", paramLabel = "KEY=VALUE", description = "A topic config, e.g. retention.ms=86400000 (repeatable).")
    List<String> configs = List.of();

    @Override
    public Integer call() {
        if (partitions != null && partitions <= 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--partitions must be at least 1, got " + partitions);
        }
        if (replicationFactor != null && replicationFactor <= 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--replication-factor must be at least 1, got " + replicationFactor);
        }
        Map<String, String> configMap = KeyValueOptions.parse(spec, "--config", configs);
        try (ClusterClient cluster = connection.connect()) {
            new TopicAdmin(cluster).createTopic(name, partitions == null ? -1 : partitions,
                replicationFactor == null ? -1 : replicationFactor, configMap);
        }
        System.out.println("Created topic " + name + ".");
        return 0;
    }
}
