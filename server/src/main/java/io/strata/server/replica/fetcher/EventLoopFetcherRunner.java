package io.strata.server.replica.fetcher;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.strata.common.BackgroundErrors;
import io.strata.common.Time;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one {@link ReplicaFetcher} on the event loop of its {@link LeaderEndpoint}: the same job as
 * {@link ReplicaFetcherThread}, without a thread of its own. Polling where the connection lives
 * means a Fetch is written to the socket from the poll that built it and its answer is handled by
 * the poll that the answer schedules, on the same thread: no wake-up of another thread on either
 * side of a round trip (two context switches per fetch with a separate thread, which on a 2-core
 * machine under acks=all load cost about a sixth of the brokers' CPU).
 *
 * <p>Scheduling: a poll runs when the fetcher wakes the runner (a request completed — on this loop —
 * or partitions changed, from any thread) or when the time the last poll asked for comes (at most
 * {@link ReplicaFetcherThread#MAX_IDLE_WAIT_MS} later). Wake-ups coalesce: one poll task is queued
 * at a time. The thread is renamed after the fetcher ({@code ReplicaFetcherThread-<id>-<leader>},
 * Kafka's name) on the first poll.
 *
 * <p>Never dies silently: an exception escaping poll is logged with the fetcher's name, counted in
 * {@link BackgroundErrors} under {@link ReplicaFetcherThread#TASK}, and the next poll comes after
 * {@code replica.fetch.backoff.ms}. Blocking work in poll (a log append) delays only this fetcher's
 * own connection.
 *
 * <p>Thread-safety: {@link #start}, {@link #close} and {@link #isAlive} from any thread; everything
 * else runs on the loop.
 */
public final class EventLoopFetcherRunner implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventLoopFetcherRunner.class);

    private final ReplicaFetcher fetcher;
    private final EventLoop loop;
    private final Time time;
    private final BackgroundErrors errors;
    private final long errorBackoffMs;
    /** A poll task is queued (set by whoever queues it, cleared by the task as it starts). */
    private final AtomicBoolean queued = new AtomicBoolean();
    private volatile boolean running = true;
    /** The timer of the next poll the last poll asked for; loop only. */
    private ScheduledFuture<?> timer;
    private boolean named;

    public EventLoopFetcherRunner(ReplicaFetcher fetcher, EventLoop loop, Time time, BackgroundErrors errors, long errorBackoffMs) {
        this.fetcher = fetcher;
        this.loop = loop;
        this.time = time;
        this.errors = errors;
        this.errorBackoffMs = errorBackoffMs;
        fetcher.setWakeup(this::wakeUp);
    }

    public void start() {
        LOG.info("{} started", fetcher.name());
        wakeUp();
    }

    private void wakeUp() {
        if (running && queued.compareAndSet(false, true)) {
            try {
                loop.execute(this::runOnce);
            } catch (RejectedExecutionException e) {
                queued.set(false);
                if (running) {
                    LOG.warn("{}: its event loop refused a poll (shutting down?)", fetcher.name());
                }
            }
        }
    }

    private void runOnce() {
        queued.set(false);
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        if (!running) {
            return;
        }
        if (!named) {
            named = true;
            Thread.currentThread().setName(fetcher.name());
        }
        long waitMs;
        try {
            long nowMs = time.hiResClockMs();
            long nextPollMs = fetcher.poll(nowMs);
            waitMs = Math.min(ReplicaFetcherThread.MAX_IDLE_WAIT_MS, nextPollMs - nowMs);
        } catch (Throwable e) {
            errors.record(ReplicaFetcherThread.TASK);
            LOG.error("{} failed to poll; retrying in {} ms", fetcher.name(), errorBackoffMs, e);
            waitMs = errorBackoffMs;
        }
        if (!running) {
            return;
        }
        if (waitMs <= 0) {
            wakeUp();
        } else if (!queued.get()) {
            timer = loop.schedule(this::wakeUp, waitMs, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Stops polling and waits until a poll under way has returned (unless called on the loop); the
     * fetcher and its endpoint, which owns the loop, are closed by their owner afterwards.
     */
    @Override
    public void close() {
        running = false;
        if (loop.inEventLoop()) {
            return;
        }
        CountDownLatch drained = new CountDownLatch(1);
        try {
            loop.execute(drained::countDown);
        } catch (RejectedExecutionException e) {
            return;
        }
        try {
            if (!drained.await(ReplicaFetcherThread.JOIN_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                LOG.warn("{} did not stop within {} ms", fetcher.name(), ReplicaFetcherThread.JOIN_TIMEOUT_MS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LOG.info("{} stopped", fetcher.name());
    }

    /** False once the loop has ended while the runner was still meant to run (a bug: Kafka's DeadThreadCount). */
    public boolean isAlive() {
        return !loop.isShutdown() || !running;
    }
}
