package io.strata.server;

import io.strata.common.Time;
import io.strata.protocol.Uuids;
import io.strata.raft.BootstrapCheckpoint;
import io.strata.raft.ReplicaKey;
import io.strata.raft.VoterSet;
import io.strata.server.config.ServerConfig;
import io.strata.storage.LogManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code strata format} for dynamic quorums (KIP-853), and the start of a dynamic node that was not formatted. */
class StorageFormatterTest {
    private static final String CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg";

    @TempDir
    Path dir;

    private ServerConfig controller(int nodeId, int port) throws Exception {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("node.id", Integer.toString(nodeId));
        settings.put("process.roles", "controller");
        settings.put("listeners", "CONTROLLER://127.0.0.1:" + port);
        settings.put("controller.listener.names", "CONTROLLER");
        settings.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT");
        settings.put("controller.quorum.bootstrap.servers", "127.0.0.1:" + port);
        settings.put("log.dirs", dir.resolve("node-" + nodeId).toString());
        settings.put("metrics.listener", "http://127.0.0.1:0");
        return ServerConfig.load(null, settings);
    }

    private Path metadataDir(int nodeId) {
        return dir.resolve("node-" + nodeId).resolve(LogManager.METADATA_TOPIC + "-0");
    }

    @Test
    void standaloneWritesMetaPropertiesAndABootstrapCheckpointNamingThisControllerOnly() throws Exception {
        UUID directoryId = StorageFormatter.format(controller(1, 19093), CLUSTER_ID, StorageFormatter.Mode.STANDALONE, List.of(), false,
            Time.SYSTEM.milliseconds());
        String meta = Files.readString(dir.resolve("node-1").resolve("meta.properties"));
        assertThat(meta).contains("cluster.id=" + CLUSTER_ID).contains("node.id=1").contains("directory.id=" + Uuids.toBase64(directoryId));
        VoterSet voters = BootstrapCheckpoint.read(metadataDir(1)).orElseThrow();
        assertThat(voters.voters()).singleElement().satisfies(voter -> {
            assertThat(voter.key()).isEqualTo(new ReplicaKey(1, directoryId));
            assertThat(voter.endpoints()).containsExactly(new VoterSet.Endpoint("CONTROLLER", "127.0.0.1", 19093));
        });
    }

    @Test
    void initialControllersNameEveryVoterAndThisNodesDirectoryId() throws Exception {
        UUID one = new UUID(1, 1);
        UUID two = new UUID(2, 2);
        List<StorageFormatter.InitialController> initial = List.of(
            StorageFormatter.InitialController.parse("1@127.0.0.1:19093:" + Uuids.toBase64(one)),
            StorageFormatter.InitialController.parse("2@127.0.0.1:19094:" + Uuids.toBase64(two)));
        UUID directoryId = StorageFormatter.format(controller(2, 19094), CLUSTER_ID, StorageFormatter.Mode.INITIAL_CONTROLLERS, initial, false,
            Time.SYSTEM.milliseconds());
        assertThat(directoryId).isEqualTo(two);
        assertThat(BootstrapCheckpoint.read(metadataDir(2)).orElseThrow().ids()).containsExactly(1, 2);
        assertThatThrownBy(() -> StorageFormatter.InitialController.parse("1@127.0.0.1:19093")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("id@host:port:directoryId");
    }

    @Test
    void noInitialControllersWritesNoCheckpointAndAFormattedDirectoryIsRefused() throws Exception {
        ServerConfig config = controller(3, 19095);
        StorageFormatter.format(config, CLUSTER_ID, StorageFormatter.Mode.NO_INITIAL_CONTROLLERS, List.of(), false, Time.SYSTEM.milliseconds());
        assertThat(BootstrapCheckpoint.read(metadataDir(3))).isEmpty();
        assertThatThrownBy(() -> StorageFormatter.format(config, CLUSTER_ID, StorageFormatter.Mode.NO_INITIAL_CONTROLLERS, List.of(), false,
            Time.SYSTEM.milliseconds())).isInstanceOf(IllegalStateException.class).hasMessageContaining("already formatted");
    }

    @Test
    void aDynamicControllerNeedsAQuorumMode() throws Exception {
        assertThatThrownBy(() -> StorageFormatter.format(controller(4, 19096), CLUSTER_ID, StorageFormatter.Mode.STATIC, List.of(), false,
            Time.SYSTEM.milliseconds())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--standalone");
    }

    @Test
    void anUnformattedDynamicNodeRefusesToStartNamingTheFormatCommand() throws Exception {
        try (StrataServer server = new StrataServer(controller(5, 19097), Time.SYSTEM)) {
            assertThatThrownBy(server::startup).isInstanceOf(IllegalStateException.class).hasMessageContaining("strata format")
                .hasMessageContaining("--standalone");
        }
        assertThat(dir.resolve("node-5").resolve("meta.properties")).doesNotExist();
    }
}
