package io.strata.storage.checkpoint;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A checkpoint file whose content does not parse. It is an {@link IOException} because, like a
 * failed read, it means the file cannot be used; the caller decides whether to fall back (for
 * example to recovering every segment) or to fail the log directory. Never thrown for a file
 * that is merely missing.
 */
public class CorruptCheckpointException extends IOException {
    private final Path file;
    private final int lineNumber;

    /**
     * @param lineNumber the 1-based line at fault, or 0 when the fault is not in one line
     */
    public CorruptCheckpointException(Path file, int lineNumber, String detail) {
        super("corrupt checkpoint file " + file + (lineNumber > 0 ? " at line " + lineNumber : "") + ": " + detail);
        this.file = file;
        this.lineNumber = lineNumber;
    }

    public Path file() {
        return file;
    }

    /** The 1-based line at fault, or 0 when the fault is not in one line. */
    public int lineNumber() {
        return lineNumber;
    }
}
