package io.strata.tools;

import io.strata.common.config.ConfigException;
import io.strata.server.StorageFormatter;
import io.strata.server.config.ServerConfig;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;

/**
 * {@code strata format}: prepares a node's log directories before its first start, as
 * {@code kafka-storage format} does. For a dynamic quorum (KIP-853,
 * {@code controller.quorum.bootstrap.servers}): {@code --standalone} makes this controller the
 * only voter; {@code --initial-controllers id@host:port:directoryId,...} names the first voters;
 * {@code --no-initial-controllers} formats a controller that joins as an observer and is added
 * later (AddRaftVoter). Prints the metadata directory id, which {@code add-controller} needs.
 */
@Command(name = "format", description = "Format a node's log directories (as kafka-storage format).")
final class FormatCommand implements Callable<Integer> {
    @Option(names = {"-c", "--config"}, required = true, description = "The node's properties file.")
    Path configFile;

    @Option(names = {"-t", "--cluster-id"}, required = true, description = "The cluster id (22 characters of base64, as kafka-storage random-uuid makes).")
    String clusterId;

    @Option(names = {"-g", "--ignore-formatted"}, description = "Leave a directory that is formatted already as it is.")
    boolean ignoreFormatted;

    @ArgGroup(exclusive = true)
    Quorum quorum;

    static final class Quorum {
        @Option(names = {"-s", "--standalone"}, description = "This controller is the only voter of a new dynamic quorum.")
        boolean standalone;

        @Option(names = {"-I", "--initial-controllers"}, split = ",", description = "The first voters: id@host:port:directoryId,...")
        List<String> initialControllers;

        @Option(names = {"-N", "--no-initial-controllers"}, description = "A controller that joins an existing dynamic quorum as an observer.")
        boolean noInitialControllers;
    }

    @Override
    public Integer call() throws Exception {
        ServerConfig config;
        try {
            config = ServerConfig.load(configFile, Map.of());
        } catch (ConfigException e) {
            System.err.println("strata format: invalid configuration: " + e.getMessage());
            return 2;
        }
        StorageFormatter.Mode mode = StorageFormatter.Mode.STATIC;
        List<StorageFormatter.InitialController> initial = new ArrayList<>();
        if (quorum != null && quorum.standalone) {
            mode = StorageFormatter.Mode.STANDALONE;
        } else if (quorum != null && quorum.initialControllers != null) {
            mode = StorageFormatter.Mode.INITIAL_CONTROLLERS;
            for (String entry : quorum.initialControllers) {
                initial.add(StorageFormatter.InitialController.parse(entry.trim()));
            }
        } else if (quorum != null && quorum.noInitialControllers) {
            mode = StorageFormatter.Mode.NO_INITIAL_CONTROLLERS;
        }
        try {
            UUID directoryId = StorageFormatter.format(config, clusterId, mode, initial, ignoreFormatted, io.strata.common.Time.SYSTEM.milliseconds());
            System.out.println("Formatted " + config.logDirs() + " for node " + config.nodeId() + " of cluster " + clusterId
                + " (metadata directory id " + io.strata.protocol.Uuids.toBase64(directoryId) + ")");
            return 0;
        } catch (IllegalArgumentException | IllegalStateException e) {
            System.err.println("strata format: " + e.getMessage());
            return 1;
        }
    }
}
