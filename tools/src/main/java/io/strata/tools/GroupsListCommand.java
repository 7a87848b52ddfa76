package io.strata.tools;

import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.GroupAdmin;
import io.strata.tools.client.GroupListing;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code strata groups list}: ListGroups to every broker, one group per line, sorted:
 * <pre>
 * GROUP           TYPE            PROTOCOL-TYPE   STATE
 * orders-app      Classic         consumer        Stable
 * </pre>
 * TYPE is Classic or Consumer (KIP-848); PROTOCOL-TYPE is the classic embedded protocol
 * (consumer, connect, ...). Values a broker does not report (state before ListGroups v4, type
 * before v5, an empty protocol type) print as "-".
 */
@Command(name = "list", description = "List the groups of every broker with their type, protocol type and state.")
final class GroupsListCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions connection;

    @Override
    public Integer call() {
        List<GroupListing> groups;
        try (ClusterClient cluster = connection.connect()) {
            groups = new GroupAdmin(cluster).listGroups();
        }
        TextTable table = new TextTable().column("GROUP", 15).column("TYPE", 15).column("PROTOCOL-TYPE", 15).column("STATE", 0);
        for (GroupListing group : groups) {
            table.row(group.groupId(), GroupAdmin.displayType(group.type()), emptyAsMissing(group.protocolType()), group.state());
        }
        table.lines().forEach(System.out::println);
        return 0;
    }

    static String emptyAsMissing(String value) {
        return value == null || value.isEmpty() ? TextTable.MISSING : value;
    }
}
