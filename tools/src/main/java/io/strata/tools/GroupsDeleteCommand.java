package io.strata.tools;

import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.GroupAdmin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code strata groups delete GROUP...}: DeleteGroups at each group's coordinator. Each group
 * succeeds or fails on its own, with Kafka's error name (NON_EMPTY_GROUP while it has members,
 * GROUP_ID_NOT_FOUND, ...); any failure exits 1.
 */
@Command(name = "delete", description = "Delete groups and their committed offsets (only groups without active members).")
final class GroupsDeleteCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions connection;

    @Parameters(paramLabel = "GROUP", arity = "1..*", description = "Groups to delete.")
    List<String> groupIds;

    @Override
    public Integer call() {
        List<GroupAdmin.GroupResult> results;
        try (ClusterClient cluster = connection.connect()) {
            results = new GroupAdmin(cluster).deleteGroups(groupIds);
        }
        int exitCode = 0;
        for (GroupAdmin.GroupResult result : results) {
            if (result.failed()) {
                System.err.println("strata: cannot delete group " + result.groupId() + ": " + result.describe());
                exitCode = StrataCli.EXIT_FAILURE;
            } else {
                System.out.println("Deleted group " + result.groupId() + ".");
            }
        }
        return exitCode;
    }
}
