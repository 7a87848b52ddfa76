package io.strata.server.replica;

import io.strata.storage.LogDirFailureChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;

/**
 * The thread that acts on log directories going offline (Kafka's LogDirFailureHandler): it takes
 * each directory from the {@link LogDirFailureChannel} once and hands it to
 * {@link ReplicaManager#handleLogDirFailure}, which takes the directory's replicas offline or
 * halts the broker. A failure of the handling itself halts the broker too: a directory half taken
 * offline must not keep serving.
 */
public final class LogDirFailureHandler implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogDirFailureHandler.class);
    /** How long one wait for the next failed directory lasts before the thread checks that it should go on. */
    private static final long POLL_MS = 500L;

    private final LogDirFailureChannel channel;
    private final ReplicaManager replicaManager;
    private final Halter halter;
    private final Thread thread;
    private volatile boolean running = true;

    public LogDirFailureHandler(LogDirFailureChannel channel, ReplicaManager replicaManager, Halter halter) {
        this.channel = channel;
        this.replicaManager = replicaManager;
        this.halter = halter;
        this.thread = new Thread(this::run, "strata-log-dir-failure-handler");
        thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    private void run() {
        while (running) {
            Path dir;
            try {
                dir = channel.takeNextOfflineLogDir(POLL_MS);
            } catch (InterruptedException e) {
                continue;
            }
            if (dir == null) {
                continue;
            }
            try {
                replicaManager.handleLogDirFailure(dir);
            } catch (Throwable e) {
                String reason = "Handling the failure of log directory " + dir + " failed; halting the broker";
                LOG.error(reason, e);
                halter.halt(Halter.LOG_DIR_FAILURE_STATUS, reason);
            }
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
