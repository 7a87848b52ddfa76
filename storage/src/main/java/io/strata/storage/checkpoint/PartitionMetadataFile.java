package io.strata.storage.checkpoint;

import io.strata.protocol.Uuids;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * The {@code partition.metadata} file of a partition directory, recording the topic id, exactly
 * as Kafka writes it:
 * <pre>
 *   version: 0\n
 *   topic_id: &lt;22-character URL-safe base64 of the 16 id bytes, unpadded&gt;\n
 * </pre>
 * Written atomically by {@link #record}; a new log defers the write as Kafka defers the flush, but
 * writes it before its first record ({@code UnifiedLog.assignTopicIdDeferred}). Read strictly: another version, other keys, a
 * malformed or zero id, or any further line throw {@link CorruptCheckpointException}.
 *
 * <p>Thread contract: no state besides the path; the caller serialises writers.
 */
public final class PartitionMetadataFile {
    public static final String FILE_NAME = "partition.metadata";
    public static final int CURRENT_VERSION = 0;
    /** Far above the ~45 bytes of a valid file. */
    private static final long MAX_SIZE_BYTES = 4096;
    private static final String VERSION_PREFIX = "version: ";
    private static final String TOPIC_ID_PREFIX = "topic_id: ";

    private final Path file;

    /** @param partitionDir the partition's log directory, which holds the file */
    public PartitionMetadataFile(Path partitionDir) {
        this.file = Objects.requireNonNull(partitionDir, "partitionDir").resolve(FILE_NAME);
    }

    public Path file() {
        return file;
    }

    public boolean exists() {
        return Files.exists(file);
    }

    /**
     * Atomically writes {@code topicId} to the file, replacing any previous content.
     *
     * @throws IllegalArgumentException if {@code topicId} is the zero UUID, which Kafka reserves for "none"
     */
    public void record(UUID topicId) throws IOException {
        Objects.requireNonNull(topicId, "topicId");
        if (topicId.equals(Uuids.ZERO)) {
            throw new IllegalArgumentException("topic id must not be the zero UUID: file=" + file);
        }
        AtomicFiles.write(file, VERSION_PREFIX + CURRENT_VERSION + "\n" + TOPIC_ID_PREFIX + Uuids.toBase64(topicId) + "\n");
    }

    /** The recorded topic id; empty when the file does not exist. */
    public Optional<UUID> read() throws IOException {
        Optional<List<String>> maybeLines = AtomicFiles.readLines(file, MAX_SIZE_BYTES);
        if (maybeLines.isEmpty()) {
            return Optional.empty();
        }
        List<String> lines = maybeLines.get();
        if (lines.size() != 2) {
            throw new CorruptCheckpointException(file, 0, "expected 2 lines (version, topic_id), found " + lines.size());
        }
        String versionText = valueAfter(lines.get(0), VERSION_PREFIX, 1);
        if (!versionText.equals(Integer.toString(CURRENT_VERSION))) {
            throw new CorruptCheckpointException(file, 1, "unsupported version '" + versionText + "', expected " + CURRENT_VERSION);
        }
        return Optional.of(parseTopicId(valueAfter(lines.get(1), TOPIC_ID_PREFIX, 2)));
    }

    private String valueAfter(String line, String prefix, int lineNumber) throws CorruptCheckpointException {
        if (!line.startsWith(prefix)) {
            throw new CorruptCheckpointException(file, lineNumber, "expected '" + prefix + "<value>', found '" + line + "'");
        }
        return line.substring(prefix.length());
    }

    private UUID parseTopicId(String text) throws CorruptCheckpointException {
        UUID topicId;
        try {
            topicId = Uuids.fromBase64(text);
        } catch (IllegalArgumentException e) {
            throw new CorruptCheckpointException(file, 2, "malformed topic id '" + text + "': " + e.getMessage());
        }
        if (topicId.equals(Uuids.ZERO) || !Uuids.toBase64(topicId).equals(text)) {
            throw new CorruptCheckpointException(file, 2, "topic id '" + text + "' is zero or not in canonical form");
        }
        return topicId;
    }
}
