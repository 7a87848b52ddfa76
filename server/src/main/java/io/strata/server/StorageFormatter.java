package io.strata.server;

import io.strata.protocol.Uuids;
import io.strata.raft.BootstrapCheckpoint;
import io.strata.raft.ReplicaKey;
import io.strata.raft.VoterSet;
import io.strata.server.cluster.DynamicQuorum;
import io.strata.server.config.ServerConfig;
import io.strata.storage.LogManager;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * {@code strata format}, as {@code kafka-storage format} does it: writes {@code meta.properties}
 * (cluster id, node id, a directory id per directory) and, for a dynamic quorum's controller,
 * the bootstrap checkpoint {@code 0-0} of {@code __cluster_metadata-0} (KIP-853):
 * <ul>
 *   <li>{@code --standalone}: this controller is the only voter (its directory id is made here);</li>
 *   <li>{@code --initial-controllers id@host:port:directoryId,...}: those voters; this node's entry gives
 *       its metadata directory's id;</li>
 *   <li>{@code --no-initial-controllers}: no checkpoint; the node joins an existing quorum as an
 *       observer, to be added with AddRaftVoter.</li>
 * </ul>
 * A directory that is formatted already is refused unless {@code ignoreFormatted} (then it is left as it is).
 */
public final class StorageFormatter {
    public enum Mode { STANDALONE, INITIAL_CONTROLLERS, NO_INITIAL_CONTROLLERS, STATIC }

    /** One entry of --initial-controllers. */
    public record InitialController(int id, String host, int port, UUID directoryId) {
        /** Parses {@code id@host:port:directoryId} (the directory id in Kafka's base64 form). */
        public static InitialController parse(String text) {
            int at = text.indexOf('@');
            int lastColon = text.lastIndexOf(':');
            int portColon = lastColon < 0 ? -1 : text.lastIndexOf(':', lastColon - 1);
            if (at <= 0 || portColon <= at + 1 || lastColon <= portColon + 1) {
                throw new IllegalArgumentException("expected id@host:port:directoryId, got '" + text + "'");
            }
            try {
                return new InitialController(Integer.parseInt(text.substring(0, at)), text.substring(at + 1, portColon),
                    Integer.parseInt(text.substring(portColon + 1, lastColon)), Uuids.fromBase64(text.substring(lastColon + 1)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("expected id@host:port:directoryId, got '" + text + "': " + e.getMessage(), e);
            }
        }
    }

    private StorageFormatter() {
    }

    /**
     * Formats every directory of {@code config} (log.dirs and metadata.log.dir); the metadata log's
     * directory gets the directory id that is this node's identity as a replica; returns it.
     */
    public static UUID format(ServerConfig config, String clusterId, Mode mode, List<InitialController> initialControllers, boolean ignoreFormatted,
                              long nowMs) throws IOException {
        Path first = config.metadataLogDir();
        List<Path> dirs = new ArrayList<>();
        dirs.add(first);
        for (Path dir : config.formattedDirectories()) {
            if (!dir.toAbsolutePath().normalize().equals(first.toAbsolutePath().normalize())) {
                dirs.add(dir);
            }
        }
        if (Files.exists(first.resolve(DataDirectories.META_PROPERTIES))) {
            if (ignoreFormatted) {
                return DataDirectories.directoryId(first);
            }
            throw new IllegalStateException("Log directory " + first + " is already formatted (use --ignore-formatted to leave it)");
        }
        boolean dynamic = DynamicQuorum.isDynamic(config);
        if (dynamic && config.isController() && mode == Mode.STATIC) {
            throw new IllegalArgumentException("a controller of a dynamic quorum (" + ServerConfig.CONTROLLER_QUORUM_BOOTSTRAP_SERVERS
                + ") needs --standalone, --initial-controllers or --no-initial-controllers");
        }
        if (!dynamic && mode != Mode.STATIC && mode != Mode.NO_INITIAL_CONTROLLERS) {
            throw new IllegalArgumentException("--standalone and --initial-controllers need " + ServerConfig.CONTROLLER_QUORUM_BOOTSTRAP_SERVERS
                + " without " + ServerConfig.CONTROLLER_QUORUM_VOTERS);
        }
        if ((mode == Mode.STANDALONE || mode == Mode.INITIAL_CONTROLLERS) && !config.isController()) {
            throw new IllegalArgumentException("--standalone and --initial-controllers format a controller; process.roles=" + config.processRoles());
        }
        UUID directoryId = Uuids.randomTopicId();
        VoterSet voters = VoterSet.EMPTY;
        if (mode == Mode.STANDALONE) {
            ServerConfig.Endpoint endpoint = controllerEndpoint(config);
            voters = VoterSet.of(List.of(new VoterSet.Voter(new ReplicaKey(config.nodeId(), directoryId),
                List.of(new VoterSet.Endpoint(endpoint.listenerName(), endpoint.host(), endpoint.port())), VoterSet.KRAFT_VERSION_MIN,
                VoterSet.KRAFT_VERSION_MAX)));
        } else if (mode == Mode.INITIAL_CONTROLLERS) {
            List<VoterSet.Voter> list = new ArrayList<>();
            boolean self = false;
            for (InitialController controller : initialControllers) {
                list.add(new VoterSet.Voter(new ReplicaKey(controller.id(), controller.directoryId()), List.of(new VoterSet.Endpoint(
                    DynamicQuorum.listenerName(config), controller.host(), controller.port())), VoterSet.KRAFT_VERSION_MIN, VoterSet.KRAFT_VERSION_MAX));
                if (controller.id() == config.nodeId()) {
                    directoryId = controller.directoryId();
                    self = true;
                }
            }
            if (!self) {
                throw new IllegalArgumentException("--initial-controllers does not name this node (node.id=" + config.nodeId() + ")");
            }
            voters = VoterSet.of(list);
        }
        DataDirectories.format(dirs, config.nodeId(), clusterId, directoryId);
        if (voters.size() > 0) {
            BootstrapCheckpoint.write(first.resolve(LogManager.METADATA_TOPIC + "-0"), voters, nowMs);
        }
        return directoryId;
    }

    private static ServerConfig.Endpoint controllerEndpoint(ServerConfig config) {
        String listener = DynamicQuorum.listenerName(config);
        for (ServerConfig.Endpoint endpoint : config.advertisedListeners()) {
            if (endpoint.listenerName().equals(listener)) {
                return endpoint;
            }
        }
        throw new IllegalArgumentException("no listener named " + listener + " (controller.listener.names) in listeners/advertised.listeners");
    }
}
