package io.strata.storage;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Where every log operation that hit an {@link IOException} in a data directory reports it
 * (Kafka's LogDirFailureChannel, KIP-112). The first report of a directory marks it offline for
 * the rest of the process's life, logs the cause at ERROR and queues the directory once for the
 * broker's failure handler, which takes it ({@link #takeNextOfflineLogDir}) and closes the
 * directory's logs, takes its replicas offline and tells the controller, or halts the broker.
 * Later reports of the same directory are logged at most at DEBUG: the first one carries the cause.
 *
 * <p>Directories are compared as normalised absolute paths. An offline directory comes back
 * only with a restart (after the operator freed space or replaced the disk): nothing here ever
 * removes one.
 *
 * <p>Bound: the queue holds each directory at most once, so its capacity is the number of
 * directories. Thread-safe.
 */
public final class LogDirFailureChannel {
    private static final Logger LOG = LoggerFactory.getLogger(LogDirFailureChannel.class);

    private final Set<Path> offline = ConcurrentHashMap.newKeySet();
    private final BlockingQueue<Path> pending;

    /** @param directoryCount how many directories may fail (log.dirs plus a separate metadata.log.dir) */
    public LogDirFailureChannel(int directoryCount) {
        if (directoryCount < 1) {
            throw new IllegalArgumentException("a log dir failure channel needs at least one directory: directoryCount=" + directoryCount);
        }
        this.pending = new ArrayBlockingQueue<>(directoryCount);
    }

    /**
     * Reports an I/O failure in data directory {@code dir}; the first one marks it offline and
     * queues it for the failure handler.
     *
     * @return whether this call took the directory offline (false: it already was)
     */
    public boolean maybeAddOfflineLogDir(Path dir, String message, Throwable cause) {
        Path normalized = normalize(dir);
        if (!offline.add(normalized)) {
            LOG.debug("Log directory {} is already offline; another failure: {}", normalized, message, cause);
            return false;
        }
        LOG.error("Log directory {} failed and goes offline: {}", normalized, message, cause);
        if (!pending.offer(normalized)) {
            // The queue is sized for every directory, each queued once: a refusal is a bug.
            throw new IllegalStateException("The log dir failure queue is full: dir=" + normalized + ", offline=" + offline);
        }
        return true;
    }

    /** Whether {@code dir} was reported failed. */
    public boolean hasOfflineLogDir(Path dir) {
        return offline.contains(normalize(dir));
    }

    /** The directories reported failed so far (normalised absolute paths). */
    public Set<Path> offlineLogDirs() {
        return Set.copyOf(offline);
    }

    /** The next directory that went offline, waiting up to {@code timeoutMs}; null if none came. */
    public Path takeNextOfflineLogDir(long timeoutMs) throws InterruptedException {
        return pending.poll(timeoutMs, TimeUnit.MILLISECONDS);
    }

    static Path normalize(Path dir) {
        return dir.toAbsolutePath().normalize();
    }
}
