package io.strata.tools;

import io.strata.protocol.message.ApiMessageType;
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

/**
 * {@code strata topics alter NAME}: grows the partition count (CreatePartitions) and sets or
 * removes configs (IncrementalAlterConfigs). Partitions are changed first; if that fails the
 * configs are left alone.
 */
@Command(name = "alter", description = "Add partitions to a topic and change its configs.")
final class TopicsAlterCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Parameters(index = "0", paramLabel = "NAME", description = "The topic to alter.")
    String name;

    @Option(names = "--partitions", paramLabel = "N", description = "The new, larger number of partitions.")
    Integer partitions;

    @Option(names = "--config", paramLabel = "KEY=VALUE", description = "A config to set (repeatable).")
    List<String> configs = List.of();

    @Option(names = "--delete-config", paramLabel = "KEY", description = "A config to remove, restoring the default (repeatable).")
    List<String> deleteConfigs = List.of();

    @Override
    public Integer call() {
        if (partitions == null && configs.isEmpty() && deleteConfigs.isEmpty()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "nothing to alter: give --partitions, --config or --delete-config");
        }
        if (partitions != null && partitions <= 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--partitions must be at least 1, got " + partitions);
        }
        Map<String, String> set = KeyValueOptions.parse(spec, "--config", configs);
        for (String key : deleteConfigs) {
            if (set.containsKey(key)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "config " + key + " is both set and deleted");
            }
        }
        try (ClusterClient cluster = connection.connect()) {
            TopicAdmin admin = new TopicAdmin(cluster);
            // Check every API first, so an unsupported one leaves the topic unchanged.
            if (partitions != null) {
                admin.requireSupport(ApiMessageType.CREATE_PARTITIONS);
            }
            if (!set.isEmpty() || !deleteConfigs.isEmpty()) {
                admin.requireSupport(ApiMessageType.INCREMENTAL_ALTER_CONFIGS);
            }
            if (partitions != null) {
                admin.createPartitions(name, partitions);
                System.out.println("Topic " + name + " now has " + partitions + " partitions.");
            }
            if (!set.isEmpty() || !deleteConfigs.isEmpty()) {
                admin.alterConfigs(name, set, deleteConfigs);
                System.out.println("Updated the configs of topic " + name + ".");
            }
        }
        return 0;
    }
}
