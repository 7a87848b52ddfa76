package io.strata.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Snapshots of the metadata log (KIP-630) on a real node: past
 * {@code metadata.log.max.record.bytes.between.snapshots} of records the node writes a
 * snapshot, the quorum drops the log before it, and a restart loads the snapshot and the log
 * after it — with every topic, partition and config intact.
 */
class MetadataSnapshotTest {
    @TempDir
    Path dataDir;

    private static List<Path> snapshots(Path metadataDir) throws Exception {
        try (Stream<Path> files = Files.list(metadataDir)) {
            return files.filter(file -> file.getFileName().toString().endsWith(".checkpoint")).sorted().toList();
        }
    }

    @Test
    void aNodeSnapshotsItsMetadataDropsTheLogBeforeItAndRestartsFromIt() throws Exception {
        Map<String, String> settings = Map.of("metadata.log.max.record.bytes.between.snapshots", "2000");
        Path metadataDir = dataDir.resolve("__cluster_metadata-0");
        try (TestBroker broker = new TestBroker(dataDir, settings)) {
            for (int i = 0; i < 20; i++) {
                broker.createTopic("topic-" + i, 3, Map.of("retention.ms", Integer.toString(60_000 + i)));
            }
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (snapshots(metadataDir).isEmpty() || broker.server().quorum().highWatermark() <= 0
                || broker.server().metadataLogStartOffset() == 0) {
                assertThat(System.nanoTime()).as("a snapshot is written and the log before it dropped").isLessThan(deadline);
                Thread.sleep(10);
            }
        }
        List<Path> written = snapshots(metadataDir);
        assertThat(written).isNotEmpty();
        assertThat(written.get(written.size() - 1).getFileName().toString()).matches("\\d{20}-\\d{10}\\.checkpoint");
        try (TestBroker restarted = new TestBroker(dataDir, settings)) {
            assertThat(restarted.server().metadataLogStartOffset()).as("the log starts at a snapshot").isPositive();
            var image = restarted.server().metadata().image();
            for (int i = 0; i < 20; i++) {
                assertThat(image.topic("topic-" + i)).as("topic-" + i).isNotNull();
                assertThat(image.topic("topic-" + i).partitionCount()).isEqualTo(3);
                assertThat(image.configs(io.strata.metadata.ConfigResource.topic("topic-" + i))).containsEntry("retention.ms",
                    Integer.toString(60_000 + i));
            }
            restarted.createTopic("after-restart", 1, Map.of());
            assertThat(restarted.server().metadata().image().topic("after-restart")).isNotNull();
        }
    }
}
