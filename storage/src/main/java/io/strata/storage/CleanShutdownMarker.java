package io.strata.storage;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code .kafka_cleanshutdown} file of a data directory: its presence says the logs in the
 * directory were closed cleanly (no recovery needed); its content, as Kafka 3.7+ writes it
 * (CleanShutdownFileHandler, KIP-966), the broker epoch of the run that wrote it:
 * <pre>
 *   {"version":0,"brokerEpoch":42}
 * </pre>
 * One JSON object on one line, no trailing newline. Older Strata versions (and Kafka before 3.7)
 * wrote an empty file: it still marks a clean shutdown but names no epoch. A file that does not
 * parse, or has another version, names no epoch either (logged, never fatal: the epoch only lets
 * the controller tell a clean restart from an unclean one).
 *
 * <p>Written with an fsync of the file, as Kafka does, so a marker that exists is complete.
 * Stateless and thread-safe; callers serialise writers of one directory.
 */
public final class CleanShutdownMarker {
    private static final Logger LOG = LoggerFactory.getLogger(CleanShutdownMarker.class);
    /** "No epoch known": the value Kafka sends as PreviousBrokerEpoch then. */
    public static final long NO_BROKER_EPOCH = -1L;
    public static final int CURRENT_VERSION = 0;
    /** Far above any valid content; a larger file is not a marker this code wrote. */
    private static final long MAX_MARKER_BYTES = 4096;
    private static final Pattern VERSION = Pattern.compile("\"version\"\\s*:\\s*(-?\\d{1,10})");
    private static final Pattern BROKER_EPOCH = Pattern.compile("\"brokerEpoch\"\\s*:\\s*(-?\\d{1,19})");

    private CleanShutdownMarker() {
    }

    /** Kafka's content for {@code brokerEpoch}. */
    static String content(long brokerEpoch) {
        return "{\"version\":" + CURRENT_VERSION + ",\"brokerEpoch\":" + brokerEpoch + "}";
    }

    /** Writes (replacing) the marker at {@code file} with {@code brokerEpoch} and fsyncs it. */
    public static void write(Path file, long brokerEpoch) throws IOException {
        byte[] bytes = content(brokerEpoch).getBytes(StandardCharsets.UTF_8);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buffer = ByteBuffer.wrap(bytes);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            channel.force(true);
        }
    }

    /**
     * The non-negative broker epoch the marker at {@code file} names; empty when the file is
     * empty (an older writer), unreadable, of another version or names no epoch (or -1).
     */
    public static OptionalLong readBrokerEpoch(Path file) {
        try {
            if (Files.size(file) > MAX_MARKER_BYTES) {
                LOG.warn("Clean shutdown marker {} is {} bytes, more than a marker holds; it names no broker epoch", file, Files.size(file));
                return OptionalLong.empty();
            }
            String content = Files.readString(file, StandardCharsets.UTF_8).trim();
            if (content.isEmpty()) {
                return OptionalLong.empty();
            }
            return parse(content, file);
        } catch (IOException | RuntimeException e) {
            LOG.warn("Cannot read the broker epoch from clean shutdown marker {}: {}", file, e.toString());
            return OptionalLong.empty();
        }
    }

    private static OptionalLong parse(String content, Path file) {
        Matcher version = VERSION.matcher(content);
        Matcher epoch = BROKER_EPOCH.matcher(content);
        if (!content.startsWith("{") || !content.endsWith("}") || !version.find() || !epoch.find()) {
            LOG.warn("Clean shutdown marker {} is not of the form {}: {}", file, content(42), content);
            return OptionalLong.empty();
        }
        int foundVersion = Integer.parseInt(version.group(1));
        if (foundVersion != CURRENT_VERSION) {
            LOG.warn("Clean shutdown marker {} has version {}, not {}; it names no broker epoch", file, foundVersion, CURRENT_VERSION);
            return OptionalLong.empty();
        }
        long brokerEpoch = Long.parseLong(epoch.group(1));
        return brokerEpoch >= 0 ? OptionalLong.of(brokerEpoch) : OptionalLong.empty();
    }
}
