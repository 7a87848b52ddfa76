package io.strata.chaos.nemesis;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Every nemesis event of a run, kept in memory (for the summary and tests) and, when given a file, appended to
 * it one {@link NemesisEvent#line()} each and flushed at once, so a run that dies still leaves what its nemeses
 * did. A separate file, since the history format has no place for faults. Thread-safe.
 */
public final class NemesisLog implements Closeable {
    private static final Logger log = LoggerFactory.getLogger(NemesisLog.class);

    private final Writer out;
    private final List<NemesisEvent> events = new ArrayList<>();

    private NemesisLog(Writer out) {
        this.out = out;
    }

    /** A log written to {@code file} (created or truncated). */
    public static NemesisLog create(Path file) throws IOException {
        return new NemesisLog(Files.newBufferedWriter(file, StandardCharsets.UTF_8));
    }

    /** A log kept in memory only. */
    public static NemesisLog inMemory() {
        return new NemesisLog(null);
    }

    public synchronized void add(NemesisEvent event) {
        events.add(event);
        log.info("nemesis {}", event.line());
        if (out != null) {
            try {
                out.write(event.line());
                out.write('\n');
                out.flush();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write nemesis.log: " + event.line(), e);
            }
        }
    }

    public synchronized List<NemesisEvent> events() {
        return List.copyOf(events);
    }

    public synchronized long count(NemesisEvent.Type type) {
        return events.stream().filter(event -> event.type() == type).count();
    }

    @Override
    public synchronized void close() throws IOException {
        if (out != null) {
            out.close();
        }
    }
}
