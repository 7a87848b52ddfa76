package io.strata.server;

import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The metadata log's settings, as Kafka's: {@code metadata.log.dir} holds {@code
 * __cluster_metadata-0} (formatted with this node's meta.properties and locked, the log.dirs
 * keep the topics), {@code metadata.log.segment.ms} rolls its segments, and the active
 * controller's NoOp records ({@code metadata.max.idle.interval.ms}) move the metadata offset of
 * an otherwise idle node; a restart finds the metadata where it was written.
 */
class MetadataLogSettingsTest {
    @TempDir
    Path dataDir;
    @TempDir
    Path metadataDir;

    private static long logSegments(Path partitionDir) throws Exception {
        try (Stream<Path> files = Files.list(partitionDir)) {
            return files.filter(file -> file.getFileName().toString().endsWith(".log")).count();
        }
    }

    private static Properties read(Path file) throws Exception {
        Properties properties = new Properties();
        try (var reader = Files.newBufferedReader(file)) {
            properties.load(reader);
        }
        return properties;
    }

    @Test
    void theMetadataLogLivesInMetadataLogDirRollsByTimeAndMovesWhileIdle() throws Exception {
        Map<String, String> overrides = Map.of("metadata.log.dir", metadataDir.toString(), "metadata.log.segment.ms", "50",
            "metadata.max.idle.interval.ms", "20");
        Path partitionDir = metadataDir.resolve("__cluster_metadata-0");
        try (TestBroker broker = new TestBroker(dataDir, overrides)) {
            broker.admin().createTopics(List.of(new NewTopic("data", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            assertThat(partitionDir.resolve("00000000000000000000.log")).exists();
            assertThat(dataDir.resolve("__cluster_metadata-0")).as("not in log.dirs").doesNotExist();
            assertThat(dataDir.resolve("data-0")).as("topics stay in log.dirs").isDirectory();
            assertThat(metadataDir.resolve(".lock")).exists();
            Properties metadataMeta = read(metadataDir.resolve("meta.properties"));
            Properties dataMeta = read(dataDir.resolve("meta.properties"));
            assertThat(metadataMeta.getProperty("cluster.id")).isEqualTo(dataMeta.getProperty("cluster.id"));
            assertThat(metadataMeta.getProperty("node.id")).isEqualTo(dataMeta.getProperty("node.id"));

            // Nothing else is written now: the offset moves by NoOp records alone, and the segments roll by age.
            long offset = broker.server().metadata().nextOffset();
            InProcessCluster.awaitCondition(() -> broker.server().metadata().nextOffset() >= offset + 5, 30_000,
                "NoOp records move the metadata offset of an idle node");
            InProcessCluster.awaitCondition(() -> {
                try {
                    return logSegments(partitionDir) >= 3;
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }, 30_000, "the metadata log rolls segments older than 50 ms");
        }
        try (TestBroker restarted = new TestBroker(dataDir, overrides)) {
            assertThat(restarted.admin().listTopics().names().get(30, TimeUnit.SECONDS)).as("the metadata log is read back from metadata.log.dir")
                .contains("data");
        }
    }
}
