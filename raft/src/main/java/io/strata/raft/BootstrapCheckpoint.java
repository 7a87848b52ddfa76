package io.strata.raft;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The bootstrap checkpoint of a dynamic quorum (KIP-853): the snapshot {@code 0-0}
 * ({@code 00000000000000000000-0000000000.checkpoint} in {@code __cluster_metadata-0}) that
 * {@code strata format} writes, as {@code kafka-storage format} does. It holds the header, one
 * control batch with the KRaftVersionRecord (kraft.version 1) and, for {@code --standalone} or
 * {@code --initial-controllers}, the VotersRecord of the first voters, and the footer; no data.
 *
 * <p>A replica reads it at start like any snapshot: its voter set is in effect "before offset
 * 0". The first leader copies it into the log (KRaftVersionRecord and VotersRecord right after
 * its LEADER_CHANGE), so that replicas that start from an empty log learn it by fetching.
 */
public final class BootstrapCheckpoint {
    public static final OffsetAndEpoch ID = new OffsetAndEpoch(0, 0);

    private BootstrapCheckpoint() {
    }

    public static Path file(Path metadataLogDirectory) {
        return metadataLogDirectory.resolve(FileSnapshots.fileName(ID));
    }

    /**
     * Writes the checkpoint into {@code metadataLogDirectory} (created if missing), durably.
     *
     * @throws IllegalStateException if one is there already
     */
    public static void write(Path metadataLogDirectory, VoterSet initialVoters, long timestampMs) {
        try {
            Files.createDirectories(metadataLogDirectory);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + metadataLogDirectory, e);
        }
        if (Files.exists(file(metadataLogDirectory))) {
            throw new IllegalStateException("a bootstrap checkpoint exists already: " + file(metadataLogDirectory));
        }
        FileSnapshots.Writer raw = new FileSnapshots.Writer(metadataLogDirectory, ID, () -> { });
        try (RecordsSnapshotWriter writer = new RecordsSnapshotWriter(raw, timestampMs, VoterSet.KRAFT_VERSION_MAX, initialVoters)) {
            writer.freeze(timestampMs);
        }
    }

    /** The voter set and kraft.version a bootstrap checkpoint in {@code metadataLogDirectory} holds, if there is one. */
    public static Optional<VoterSet> read(Path metadataLogDirectory) {
        if (!Files.exists(file(metadataLogDirectory))) {
            return Optional.empty();
        }
        VoterSetHistory history = VoterSetHistory.dynamic();
        history.loadSnapshot(new FileSnapshots.Reader(metadataLogDirectory, ID));
        return Optional.of(history.latest());
    }
}
