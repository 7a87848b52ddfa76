package io.strata.raft;

import io.strata.storage.checkpoint.AtomicFiles;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code quorum-state} file in the metadata log directory, in Kafka's layout (data
 * version 1, KIP-853): one JSON object
 * <pre>
 *   {"leaderId":2,"leaderEpoch":7,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}
 * </pre>
 * followed by a newline. Replaced atomically (temp file, fsync, rename, directory fsync), so
 * after a crash it holds the old or the new state, never a mix. A file that does not parse is
 * an error, not an empty state: forgetting a vote could elect two leaders in one epoch.
 *
 * <p>Not thread-safe: used by the quorum's thread.
 */
public final class FileQuorumStateStore implements QuorumStateStore {
    public static final String FILE_NAME = "quorum-state";
    static final int DATA_VERSION = 1;
    private static final long MAX_SIZE_BYTES = 4096;
    private static final String NO_DIRECTORY = "AAAAAAAAAAAAAAAAAAAAAA";
    private static final Pattern FORMAT = Pattern.compile("\\{\"leaderId\":(-?\\d+),\"leaderEpoch\":(\\d+),\"votedId\":(-?\\d+),"
        + "\"votedDirectoryId\":\"([A-Za-z0-9_-]{22})\",\"data_version\":(\\d+)}");

    private final Path file;

    public FileQuorumStateStore(Path metadataLogDirectory) {
        this.file = metadataLogDirectory.resolve(FILE_NAME);
    }

    public Path file() {
        return file;
    }

    @Override
    public ElectionState read() throws IOException {
        Optional<List<String>> lines = AtomicFiles.readLines(file, MAX_SIZE_BYTES);
        if (lines.isEmpty()) {
            return null;
        }
        if (lines.get().size() != 1) {
            throw new IOException(file + ": expected one line, found " + lines.get().size());
        }
        Matcher matcher = FORMAT.matcher(lines.get().get(0).trim());
        if (!matcher.matches()) {
            throw new IOException(file + ": not a quorum state: " + lines.get().get(0));
        }
        int dataVersion = Integer.parseInt(matcher.group(5));
        if (dataVersion != DATA_VERSION) {
            throw new IOException(file + ": unsupported data_version " + dataVersion + " (expected " + DATA_VERSION + ")");
        }
        try {
            return new ElectionState(Integer.parseInt(matcher.group(2)), Integer.parseInt(matcher.group(1)), Integer.parseInt(matcher.group(3)));
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": invalid quorum state: " + e.getMessage(), e);
        }
    }

    @Override
    public void write(ElectionState state) throws IOException {
        AtomicFiles.write(file, "{\"leaderId\":" + state.leaderId() + ",\"leaderEpoch\":" + state.epoch() + ",\"votedId\":" + state.votedId()
            + ",\"votedDirectoryId\":\"" + NO_DIRECTORY + "\",\"data_version\":" + DATA_VERSION + "}\n");
    }
}
