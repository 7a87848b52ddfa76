package io.strata.server;

import io.strata.coordinator.CoordinatorPlacement;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.PartitionRegistration;
import io.strata.metadata.TopicImage;
import io.strata.storage.TopicPartition;
import io.strata.server.api.InternalTopic;
import io.strata.server.replica.Partition;
import io.strata.server.replica.ReplicaManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The one-time move of coordinator state to Kafka's placement ({@link CoordinatorPlacement}) on
 * a data directory written by an earlier Strata, run at start-up before either coordinator
 * loads a partition. A marker file in the first log directory records that it is done (a new
 * directory gets it at its first start, with nothing to move); until then every start looks
 * again, so a start that crashed half-way finishes at the next.
 *
 * <p>It needs every partition of the topic on this node, as a single node has them; a node of a
 * cluster (which no earlier release could form) has nothing of the old placement and only
 * writes the marker.
 */
final class CoordinatorPlacementUpgrade {
    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorPlacementUpgrade.class);
    static final String MARKER_FILE = ".strata-coordinator-placement";
    private static final String MARKER_CONTENT = "kafka\n";

    private final Path marker;
    private final boolean done;
    /** Whether a topic's move had to be left for a later start (a partition had no leader here). */
    private boolean deferred;

    CoordinatorPlacementUpgrade(Path firstLogDir) {
        this.marker = firstLogDir.resolve(MARKER_FILE);
        this.done = Files.exists(marker);
    }

    /**
     * Moves {@code topic}'s ids found in their legacy partition; nothing if already done or the
     * topic does not exist. A node of a cluster (another node leads a partition) has nothing of
     * the old placement; a single node whose partition has no leader at the moment leaves the
     * move, and the marker, to its next start.
     */
    void relocate(InternalTopic topic, MetadataImage image, int nodeId, ReplicaManager replicaManager, long nowMs) throws Exception {
        TopicImage hosted = image.topic(topic.name());
        if (done || hosted == null) {
            return;
        }
        for (PartitionRegistration partition : hosted.partitions().values()) {
            if (partition.leader() < 0) {
                LOG.warn("{} has a partition without a leader: its ids' move to Kafka's placement waits for the next start", topic.name());
                deferred = true;
                return;
            }
            if (partition.leader() != nodeId) {
                return;
            }
        }
        CoordinatorPlacement.Flusher flusher = partition -> {
            Partition local = replicaManager.partition(new TopicPartition(topic.name(), partition));
            if (local != null) {
                local.log().flush(local.log().logEndOffset());
            }
        };
        CoordinatorPlacement.Result result = CoordinatorPlacement.relocate(topic.name(), topic, hosted.partitions().size(), nowMs, flusher);
        if (result.movedAnything()) {
            LOG.info("Moved the state of {} ids of {} to the partitions Kafka places them in (Strata's earlier placement differed for "
                + "ids with a negative hash code): {}", result.idsMoved().size(), topic.name(), result.idsMoved());
        }
        if (!result.openTransactionIds().isEmpty()) {
            LOG.warn("Ids of {} with a transaction still open in their earlier partition: {}. Offsets such a transaction commits from now "
                + "on apply to the copy left there, not to the group; commit them again after the transaction ends.", topic.name(),
                result.openTransactionIds());
        }
    }

    /** Records that the move is done, durably, so later starts skip it (unless a topic's move was deferred). */
    void finish() throws IOException {
        if (done || deferred) {
            return;
        }
        Path temporary = marker.resolveSibling(MARKER_FILE + ".tmp");
        try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
            channel.write(java.nio.ByteBuffer.wrap(MARKER_CONTENT.getBytes(StandardCharsets.US_ASCII)));
            channel.force(true);
        }
        Files.move(temporary, marker, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel directory = FileChannel.open(marker.getParent(), StandardOpenOption.READ)) {
            directory.force(true);
        }
    }
}
