package io.strata.storage.checkpoint;

import io.strata.storage.EpochEntry;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;

/**
 * The {@code leader-epoch-checkpoint} file of a partition directory: the start offset of each
 * leader epoch, in Kafka's checkpoint format version 0.
 * <pre>
 *   0
 *   2
 *   0 0
 *   3 1520
 * </pre>
 * Each entry line is {@code <epoch> <startOffset>}, both non-negative. Written atomically; read
 * strictly (see {@link CheckpointFile}). Ordering is the {@code LeaderEpochFileCache}'s concern:
 * it writes entries in epoch order and re-validates them when loading.
 *
 * <p>Thread contract: as {@link CheckpointFile}; the cache serialises writers.
 */
public final class LeaderEpochCheckpointFile {
    public static final String FILE_NAME = "leader-epoch-checkpoint";
    public static final int CURRENT_VERSION = 0;

    private static final CheckpointFile.EntryFormat<EpochEntry> FORMAT = new CheckpointFile.EntryFormat<>() {
        @Override
        public String format(EpochEntry entry) {
            return entry.epoch() + " " + entry.startOffset();
        }

        @Override
        public EpochEntry parse(String line) {
            String[] fields = CheckpointFile.splitFields(line, 2);
            return new EpochEntry(CheckpointFile.parseNonNegativeInt(fields[0], "epoch"),
                CheckpointFile.parseNonNegativeLong(fields[1], "startOffset"));
        }
    };

    private final CheckpointFile<EpochEntry> checkpoint;

    public LeaderEpochCheckpointFile(Path file) {
        this.checkpoint = new CheckpointFile<>(file, CURRENT_VERSION, FORMAT);
    }

    public Path file() {
        return checkpoint.file();
    }

    /** Atomically replaces the file with {@code entries}, in the given order. */
    public void write(Collection<EpochEntry> entries) throws IOException {
        checkpoint.write(entries);
    }

    /** The entries in file order; empty when the file does not exist. */
    public List<EpochEntry> read() throws IOException {
        return checkpoint.read();
    }
}
