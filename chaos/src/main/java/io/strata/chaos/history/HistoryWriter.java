package io.strata.chaos.history;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Appends ops to a history file, one JSON line each ({@link OpJson} gives the format), flushed to the
 * operating system after every op: a run whose JVM crashes still leaves every op written before the crash,
 * and at most the last line truncated (which {@link HistoryReader} ignores). Not fsynced: an operating-
 * system crash may lose the tail.
 *
 * <p>Thread-safe: workload threads call {@link #write} concurrently; each line is written whole, in the
 * order the calls take the lock, which is the history order.
 */
public final class HistoryWriter implements Closeable {
    private final Writer out;
    private boolean closed;

    private HistoryWriter(Writer out) {
        this.out = out;
    }

    /** Creates (or truncates) the file. */
    public static HistoryWriter create(Path file) throws IOException {
        return new HistoryWriter(new OutputStreamWriter(Files.newOutputStream(file, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE), StandardCharsets.UTF_8));
    }

    /** Writes to a caller-owned writer (closed by {@link #close()}). */
    public static HistoryWriter to(Writer out) {
        return new HistoryWriter(out);
    }

    /**
     * Appends one op and flushes it.
     *
     * @throws IllegalStateException if closed
     */
    public synchronized void write(Op op) throws IOException {
        if (closed) {
            throw new IllegalStateException("history writer is closed; op=" + op);
        }
        String line = OpJson.encode(op);
        out.write(line);
        out.write('\n');
        out.flush();
    }

    @Override
    public synchronized void close() throws IOException {
        if (!closed) {
            closed = true;
            out.close();
        }
    }
}
