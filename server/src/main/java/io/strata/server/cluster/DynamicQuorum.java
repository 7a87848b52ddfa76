package io.strata.server.cluster;

import io.strata.raft.BootstrapCheckpoint;
import io.strata.raft.QuorumSetup;
import io.strata.raft.ReplicaKey;
import io.strata.raft.VoterSet;
import io.strata.server.config.ServerConfig;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * A dynamic metadata quorum (KIP-853): {@code controller.quorum.bootstrap.servers} without
 * {@code controller.quorum.voters}. The voters come from the bootstrap checkpoint that
 * {@code strata format} wrote and from the metadata log; the node is named by its id and the
 * {@code directory.id} of its metadata log directory.
 */
public final class DynamicQuorum {
    private DynamicQuorum() {
    }

    public static boolean isDynamic(ServerConfig config) {
        return config.quorumVoters().isEmpty() && !config.quorumBootstrapServers().isEmpty();
    }

    /** The listener the quorum talks on: the first of {@code controller.listener.names}. */
    public static String listenerName(ServerConfig config) {
        return config.controllerListenerNames().get(0);
    }

    /**
     * The quorum setup of this node.
     *
     * @param directoryId the {@code directory.id} of the metadata log directory
     * @throws IllegalStateException if a controller's directory was never formatted (it has no meta.properties)
     */
    public static QuorumSetup setup(ServerConfig config, Path logDir, UUID directoryId) {
        List<VoterSet.Endpoint> local = new ArrayList<>();
        if (config.isController()) {
            for (ServerConfig.Endpoint endpoint : config.advertisedListeners()) {
                if (config.controllerListenerNames().contains(endpoint.listenerName())) {
                    local.add(new VoterSet.Endpoint(endpoint.listenerName(), endpoint.host(), endpoint.port()));
                }
            }
        }
        List<VoterSet.Endpoint> bootstrap = new ArrayList<>();
        for (InetSocketAddress address : config.quorumBootstrapServers()) {
            bootstrap.add(new VoterSet.Endpoint(listenerName(config), address.getHostString(), address.getPort()));
        }
        return new QuorumSetup(new ReplicaKey(config.nodeId(), directoryId), Set.of(), listenerName(config), local, bootstrap);
    }

    /**
     * A node of a dynamic quorum must have been formatted first ({@code strata format}, as
     * {@code kafka-storage format}): its directory id is its identity as a replica and a new
     * cluster's first voters are in the bootstrap checkpoint. Starting it unformatted would make
     * up an identity and, for the first controller, a quorum without voters.
     */
    public static void requireFormatted(ServerConfig config, Path logDir) {
        if (!Files.exists(logDir.resolve("meta.properties"))) {
            throw new IllegalStateException("Data directory " + logDir + " is not formatted, and " + ServerConfig.CONTROLLER_QUORUM_BOOTSTRAP_SERVERS
                + " without " + ServerConfig.CONTROLLER_QUORUM_VOTERS + " means a dynamic quorum: run `strata format --config <file> --cluster-id <id>"
                + " (--standalone | --initial-controllers id@host:port:directoryId,... | --no-initial-controllers)` first");
        }
    }

    /** Whether {@code metadataDir} holds a bootstrap checkpoint (a node formatted with --standalone or --initial-controllers). */
    public static boolean hasBootstrapCheckpoint(Path metadataDir) {
        return Files.exists(BootstrapCheckpoint.file(metadataDir));
    }
}
