package io.strata.server;

import io.strata.protocol.Uuids;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Properties;
import java.util.UUID;

/**
 * Formats data directories on first start and checks them on every start, with Kafka's
 * {@code meta.properties}: {@code version=1}, {@code cluster.id}, {@code node.id} and a
 * {@code directory.id} per directory. A directory of another cluster or node is refused
 * rather than mixed in.
 */
final class DataDirectories {
    static final String META_PROPERTIES = "meta.properties";

    private DataDirectories() {
    }

    /**
     * Ensures every directory is formatted for this node and cluster; returns the cluster id.
     *
     * @param configuredClusterId the {@code cluster.id} setting, used when formatting a new cluster (random if null)
     */
    static String ensureFormatted(List<Path> dirs, int nodeId, String configuredClusterId) throws IOException {
        String clusterId = null;
        for (Path dir : dirs) {
            Path meta = dir.resolve(META_PROPERTIES);
            if (!Files.exists(meta)) {
                continue;
            }
            Properties properties = read(meta);
            String dirCluster = properties.getProperty("cluster.id");
            String dirNode = properties.getProperty("node.id");
            if (dirCluster == null || dirNode == null) {
                throw new IOException(meta + " is missing cluster.id or node.id");
            }
            if (Integer.parseInt(dirNode.trim()) != nodeId) {
                throw new IOException("Data directory " + dir + " belongs to node " + dirNode + ", but this is node.id=" + nodeId);
            }
            if (clusterId != null && !clusterId.equals(dirCluster)) {
                throw new IOException("Data directory " + dir + " belongs to cluster " + dirCluster + ", but another directory belongs to " + clusterId);
            }
            if (configuredClusterId != null && !configuredClusterId.equals(dirCluster)) {
                throw new IOException("Data directory " + dir + " belongs to cluster " + dirCluster + ", but cluster.id=" + configuredClusterId);
            }
            clusterId = dirCluster;
        }
        if (clusterId == null) {
            clusterId = configuredClusterId != null ? configuredClusterId : Uuids.toBase64(UUID.randomUUID());
        }
        for (Path dir : dirs) {
            Files.createDirectories(dir);
            Path meta = dir.resolve(META_PROPERTIES);
            if (!Files.exists(meta)) {
                Properties properties = new Properties();
                properties.setProperty("version", "1");
                properties.setProperty("cluster.id", clusterId);
                properties.setProperty("node.id", Integer.toString(nodeId));
                properties.setProperty("directory.id", Uuids.toBase64(Uuids.randomTopicId()));
                write(meta, properties);
            }
        }
        return clusterId;
    }

    /**
     * Formats every directory (none may be formatted yet) for a new node: the first, which holds
     * the metadata log, gets {@code metadataDirectoryId}, the others random ids ({@code strata format}).
     */
    static void format(List<Path> dirs, int nodeId, String clusterId, UUID metadataDirectoryId) throws IOException {
        for (int index = 0; index < dirs.size(); index++) {
            Path dir = dirs.get(index);
            Files.createDirectories(dir);
            Path meta = dir.resolve(META_PROPERTIES);
            if (Files.exists(meta)) {
                throw new IOException("Data directory " + dir + " is already formatted");
            }
            Properties properties = new Properties();
            properties.setProperty("version", "1");
            properties.setProperty("cluster.id", clusterId);
            properties.setProperty("node.id", Integer.toString(nodeId));
            properties.setProperty("directory.id", Uuids.toBase64(index == 0 ? metadataDirectoryId : Uuids.randomTopicId()));
            write(meta, properties);
        }
    }

    /** The {@code directory.id} of a formatted directory. */
    static UUID directoryId(Path dir) throws IOException {
        String id = read(dir.resolve(META_PROPERTIES)).getProperty("directory.id");
        if (id == null) {
            throw new IOException(dir.resolve(META_PROPERTIES) + " has no directory.id");
        }
        return Uuids.fromBase64(id.trim());
    }

    private static Properties read(Path file) throws IOException {
        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            properties.load(reader);
        }
        return properties;
    }

    private static void write(Path file, Properties properties) throws IOException {
        Path temp = file.resolveSibling(file.getFileName() + ".tmp");
        try (Writer writer = Files.newBufferedWriter(temp, StandardCharsets.UTF_8)) {
            properties.store(writer, null);
        }
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
