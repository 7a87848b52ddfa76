package io.strata.storage.checkpoint;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Kafka's versioned text checkpoint format, shared by the offset and leader-epoch checkpoints:
 * <pre>
 *   &lt;version&gt;\n          e.g. 0
 *   &lt;entry count&gt;\n      e.g. 2
 *   &lt;entry&gt;\n            one line per entry, fields separated by one space
 *   ...
 * </pre>
 * Numbers are canonical decimals (no sign on non-negative values, no leading zeros), UTF-8, and
 * every line, the last included, ends in '\n'.
 *
 * <p>Writes replace the file atomically (see {@link AtomicFiles}). Reads are strict: an unknown
 * version, a count that differs from the number of entry lines, a malformed line, a missing
 * final newline or an empty file throw {@link CorruptCheckpointException}, never partial data.
 * A missing file reads as no entries.
 *
 * <p>Thread contract: no state besides the path; concurrent writers of the same file must be
 * serialised by the caller (they would race on the temporary file).
 *
 * @param <T> the entry type
 */
public final class CheckpointFile<T> {
    /**
     * Largest file read. Ten times a checkpoint of 100,000 partitions at ~60 bytes a line; a
     * bigger file is not one we wrote.
     */
    public static final long MAX_SIZE_BYTES = 64L * 1024 * 1024;

    private static final Pattern CANONICAL_NON_NEGATIVE = Pattern.compile("0|[1-9][0-9]*");
    private static final Pattern CANONICAL_INTEGER = Pattern.compile("0|-?[1-9][0-9]*");

    /** How one entry maps to one line. */
    public interface EntryFormat<T> {
        /** The line for {@code entry}, without the newline. */
        String format(T entry);

        /** The entry on {@code line}. @throws IllegalArgumentException describing what is wrong */
        T parse(String line);
    }

    private final Path file;
    private final int version;
    private final EntryFormat<T> format;

    public CheckpointFile(Path file, int version, EntryFormat<T> format) {
        this.file = Objects.requireNonNull(file, "file");
        this.version = version;
        this.format = Objects.requireNonNull(format, "format");
    }

    public Path file() {
        return file;
    }

    /**
     * Atomically replaces the file with {@code entries}. Each entry is checked to read back as
     * itself first, so a value the format cannot carry (say a topic name with a space) is refused
     * before anything is written.
     *
     * @throws IllegalArgumentException naming the entry that does not round-trip
     */
    public void write(Collection<T> entries) throws IOException {
        StringBuilder content = new StringBuilder();
        content.append(version).append('\n').append(entries.size()).append('\n');
        for (T entry : entries) {
            String line = format.format(entry);
            requireRoundTrip(entry, line);
            content.append(line).append('\n');
        }
        AtomicFiles.write(file, content.toString());
    }

    private void requireRoundTrip(T entry, String line) {
        T parsed;
        try {
            parsed = line.indexOf('\n') >= 0 ? null : format.parse(line);
        } catch (IllegalArgumentException e) {
            parsed = null;
        }
        if (!entry.equals(parsed)) {
            throw new IllegalArgumentException("entry cannot be written to a checkpoint: entry=" + entry + ", line=" + line + ", file=" + file);
        }
    }

    /** The entries in file order; empty when the file does not exist. */
    public List<T> read() throws IOException {
        Optional<List<String>> maybeLines = AtomicFiles.readLines(file, MAX_SIZE_BYTES);
        if (maybeLines.isEmpty()) {
            return List.of();
        }
        List<String> lines = maybeLines.get();
        if (lines.isEmpty()) {
            throw new CorruptCheckpointException(file, 1, "file is empty; expected the version line");
        }
        int readVersion = parseHeaderNumber(lines.get(0), 1, "version");
        if (readVersion != version) {
            throw new CorruptCheckpointException(file, 1, "unsupported version=" + readVersion + ", expected " + version);
        }
        if (lines.size() < 2) {
            throw new CorruptCheckpointException(file, 2, "missing the entry count line");
        }
        int expectedCount = parseHeaderNumber(lines.get(1), 2, "entry count");
        int actualCount = lines.size() - 2;
        if (actualCount != expectedCount) {
            throw new CorruptCheckpointException(file, 2, "entry count=" + expectedCount + " but the file has " + actualCount + " entry lines");
        }
        return parseEntries(lines);
    }

    private List<T> parseEntries(List<String> lines) throws CorruptCheckpointException {
        List<T> entries = new ArrayList<>(lines.size() - 2);
        for (int index = 2; index < lines.size(); index++) {
            String line = lines.get(index);
            try {
                entries.add(format.parse(line));
            } catch (IllegalArgumentException e) {
                throw new CorruptCheckpointException(file, index + 1, "malformed entry '" + line + "': " + e.getMessage());
            }
        }
        return entries;
    }

    private int parseHeaderNumber(String line, int lineNumber, String what) throws CorruptCheckpointException {
        try {
            return parseNonNegativeInt(line, what);
        } catch (IllegalArgumentException e) {
            throw new CorruptCheckpointException(file, lineNumber, e.getMessage());
        }
    }

    // ---------------------------------------------------------------- field parsing for formats

    /**
     * Splits {@code line} on single spaces into exactly {@code fieldCount} non-empty fields.
     *
     * @throws IllegalArgumentException otherwise
     */
    public static String[] splitFields(String line, int fieldCount) {
        String[] fields = line.split(" ", -1);
        if (fields.length != fieldCount) {
            throw new IllegalArgumentException("expected " + fieldCount + " space-separated fields, found " + fields.length);
        }
        for (String field : fields) {
            if (field.isEmpty()) {
                throw new IllegalArgumentException("empty field");
            }
        }
        return fields;
    }

    /** A canonical non-negative decimal int. @throws IllegalArgumentException otherwise */
    public static int parseNonNegativeInt(String text, String what) {
        long value = parseNonNegativeLong(text, what);
        if (value > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(what + " does not fit an int: " + text);
        }
        return (int) value;
    }

    /** A canonical non-negative decimal long. @throws IllegalArgumentException otherwise */
    public static long parseNonNegativeLong(String text, String what) {
        if (!CANONICAL_NON_NEGATIVE.matcher(text).matches()) {
            throw new IllegalArgumentException(what + " is not a canonical non-negative integer: '" + text + "'");
        }
        return parseLong(text, what);
    }

    /** A canonical decimal long, possibly negative. @throws IllegalArgumentException otherwise */
    public static long parseLong(String text, String what) {
        if (!CANONICAL_INTEGER.matcher(text).matches()) {
            throw new IllegalArgumentException(what + " is not a canonical integer: '" + text + "'");
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " does not fit a long: " + text, e);
        }
    }
}
