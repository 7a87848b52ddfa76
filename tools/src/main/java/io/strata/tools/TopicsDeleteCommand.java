package io.strata.tools;

import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.TopicAdmin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

import java.util.List;
import java.util.concurrent.Callable;

/** {@code strata topics delete NAME...}: DeleteTopics; each topic succeeds or fails on its own, and any failure exits 1. */
@Command(name = "delete", description = "Delete topics.")
final class TopicsDeleteCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions connection;

    @Parameters(paramLabel = "NAME", arity = "1..*", description = "Topics to delete.")
    List<String> names;

    @Override
    public Integer call() {
        List<TopicAdmin.TopicResult> results;
        try (ClusterClient cluster = connection.connect()) {
            results = new TopicAdmin(cluster).deleteTopics(names);
        }
        int exitCode = 0;
        for (TopicAdmin.TopicResult result : results) {
            if (result.failed()) {
                System.err.println("strata: cannot delete topic " + result.topic() + ": " + result.describe());
                exitCode = StrataCli.EXIT_FAILURE;
            } else {
                System.out.println("Deleted topic " + result.topic() + ".");
            }
        }
        return exitCode;
    }
}
