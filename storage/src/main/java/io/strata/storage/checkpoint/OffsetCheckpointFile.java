package io.strata.storage.checkpoint;

import io.strata.storage.TopicPartition;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A per-log-directory map from partition to offset, in Kafka's checkpoint format version 0; used
 * for {@code recovery-point-offset-checkpoint}, {@code log-start-offset-checkpoint} and
 * {@code replication-offset-checkpoint}.
 * <pre>
 *   0
 *   2
 *   orders 0 1520
 *   orders 1 1311
 * </pre>
 * Each entry line is {@code <topic> <partition> <offset>}. Written atomically; read strictly,
 * with a partition listed twice also rejected (see {@link CheckpointFile}). Entries are written
 * sorted by topic, then partition, so the file is stable for a given map.
 *
 * <p>Thread contract: as {@link CheckpointFile}; the caller serialises writers.
 */
public final class OffsetCheckpointFile {
    public static final int CURRENT_VERSION = 0;

    private record PartitionOffset(TopicPartition partition, long offset) {
    }

    private static final CheckpointFile.EntryFormat<PartitionOffset> FORMAT = new CheckpointFile.EntryFormat<>() {
        @Override
        public String format(PartitionOffset entry) {
            return entry.partition().topic() + " " + entry.partition().partition() + " " + entry.offset();
        }

        @Override
        public PartitionOffset parse(String line) {
            String[] fields = CheckpointFile.splitFields(line, 3);
            int partition = CheckpointFile.parseNonNegativeInt(fields[1], "partition");
            return new PartitionOffset(new TopicPartition(fields[0], partition), CheckpointFile.parseLong(fields[2], "offset"));
        }
    };

    private final CheckpointFile<PartitionOffset> checkpoint;

    public OffsetCheckpointFile(Path file) {
        this.checkpoint = new CheckpointFile<>(file, CURRENT_VERSION, FORMAT);
    }

    public Path file() {
        return checkpoint.file();
    }

    /** Atomically replaces the file with {@code offsets}. */
    public void write(Map<TopicPartition, Long> offsets) throws IOException {
        List<PartitionOffset> entries = new ArrayList<>(offsets.size());
        offsets.forEach((partition, offset) -> entries.add(new PartitionOffset(partition, offset)));
        entries.sort(Comparator.comparing((PartitionOffset entry) -> entry.partition().topic())
            .thenComparingInt(entry -> entry.partition().partition()));
        checkpoint.write(entries);
    }

    /** The offsets in the file; empty when the file does not exist. */
    public Map<TopicPartition, Long> read() throws IOException {
        List<PartitionOffset> entries = checkpoint.read();
        Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        for (int index = 0; index < entries.size(); index++) {
            PartitionOffset entry = entries.get(index);
            if (offsets.putIfAbsent(entry.partition(), entry.offset()) != null) {
                throw new CorruptCheckpointException(file(), index + 3, "partition " + entry.partition() + " is listed twice");
            }
        }
        return offsets;
    }
}
