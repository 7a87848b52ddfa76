package io.strata.chaos.history;

import java.io.Closeable;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Streams the ops of a history file written by {@link HistoryWriter}, one op per line, in file order,
 * without holding the file in memory.
 *
 * <p>Crash rule: the last line, if it does not end with a newline and does not parse, is the op a crash
 * cut short: it is skipped with a warning. Any other malformed line (including a complete last line) is a
 * {@link HistoryFormatException} naming its 1-based line number. Blank lines are not allowed.
 *
 * <p>Not thread-safe; one consumer iterates once.
 */
public final class HistoryReader implements Closeable, Iterable<Op> {
    private static final Logger LOG = LoggerFactory.getLogger(HistoryReader.class);
    private static final int BUFFER_CHARS = 64 * 1024;

    private final Reader in;
    private final String source;
    private final Map<String, String> strings = OpJson.newStringTable();
    private final char[] buffer = new char[BUFFER_CHARS];
    private int bufferPosition;
    private int bufferLimit;
    private boolean endOfInput;
    private long lineNumber;
    private boolean iterated;

    private HistoryReader(Reader in, String source) {
        this.in = in;
        this.source = source;
    }

    /** Opens a file. */
    public static HistoryReader open(Path file) throws IOException {
        return new HistoryReader(Files.newBufferedReader(file, StandardCharsets.UTF_8), file.toString());
    }

    /** Reads from a caller-supplied reader (closed by {@link #close()}). */
    public static HistoryReader from(Reader in, String source) {
        return new HistoryReader(in, source);
    }

    /**
     * @return the ops; I/O errors surface as {@link UncheckedIOException}
     * @throws IllegalStateException on a second call
     */
    @Override
    public Iterator<Op> iterator() {
        if (iterated) {
            throw new IllegalStateException("a history reader iterates once: " + source);
        }
        iterated = true;
        return new Iterator<>() {
            private Op next = advance();

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public Op next() {
                if (next == null) {
                    throw new NoSuchElementException();
                }
                Op result = next;
                next = advance();
                return result;
            }
        };
    }

    private Op advance() {
        try {
            StringBuilder line = new StringBuilder(160);
            boolean terminated = readLine(line);
            if (!terminated && line.length() == 0) {
                return null;
            }
            lineNumber++;
            try {
                return OpJson.decode(line.toString(), strings);
            } catch (IllegalArgumentException e) {
                if (!terminated) {
                    LOG.warn("{}: ignoring truncated last line {} (a crash cut it short): {}", source, lineNumber,
                            e.getMessage());
                    return null;
                }
                throw new HistoryFormatException(lineNumber, source + ": " + e.getMessage(), e);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + source + " after line " + lineNumber, e);
        }
    }

    /** Appends the next line's characters; @return whether it ended with a newline. */
    private boolean readLine(StringBuilder line) throws IOException {
        while (true) {
            if (bufferPosition == bufferLimit) {
                if (endOfInput) {
                    return false;
                }
                int read = in.read(buffer, 0, buffer.length);
                if (read < 0) {
                    endOfInput = true;
                    return false;
                }
                bufferPosition = 0;
                bufferLimit = read;
            }
            int start = bufferPosition;
            while (bufferPosition < bufferLimit) {
                if (buffer[bufferPosition] == '\n') {
                    line.append(buffer, start, bufferPosition - start);
                    bufferPosition++;
                    return true;
                }
                bufferPosition++;
            }
            line.append(buffer, start, bufferPosition - start);
        }
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
