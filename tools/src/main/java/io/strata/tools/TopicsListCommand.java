package io.strata.tools;

import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.TopicAdmin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.List;
import java.util.concurrent.Callable;

/** {@code strata topics list}: topic names from Metadata, one per line, sorted. */
@Command(name = "list", description = "List the topics, one per line.")
final class TopicsListCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions connection;

    @Option(names = "--exclude-internal", description = "Leave out internal topics such as __consumer_offsets.")
    boolean excludeInternal;

    @Override
    public Integer call() {
        List<String> names;
        try (ClusterClient cluster = connection.connect()) {
            names = new TopicAdmin(cluster).listTopics(!excludeInternal);
        }
        for (String name : names) {
            System.out.println(name);
        }
        return 0;
    }
}
