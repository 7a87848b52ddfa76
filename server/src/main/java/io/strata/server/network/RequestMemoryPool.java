package io.strata.server.network;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The broker-wide budget of request bytes read from sockets and not yet answered
 * ({@code queued.max.request.bytes}; Kafka's SocketServer memory pool). A connection reserves
 * a frame's size here as soon as it has read the frame's length prefix, before it buffers any
 * of the frame, and the bytes come back when the request is answered or dropped. Reservations
 * that do not fit wait in arrival order; a connection whose frame waits stops reading.
 *
 * <p>Strict, unlike Kafka's pool: {@link #usedBytes()} never exceeds {@link #capacityBytes()}.
 * (Kafka grants a request whenever any byte is free, so it overshoots by up to one request.)
 *
 * <p>Liveness: the capacity holds at least one request of the largest size accepted
 * ({@code socket.request.max.bytes}, checked at construction), and waiting reservations are
 * granted first come, first served, each as soon as it fits. Reserved bytes belong to a request
 * being answered (handlers answer every request, whatever the pool does), to a frame waiting for
 * its connection's request in flight to be answered, or to a frame whose bytes are arriving. So
 * the oldest waiter is granted once the requests ahead of it are answered, and a small request
 * cannot starve a large one. A peer that announces a frame and then sends its bytes slowly holds
 * its reservation until it finishes or {@code connections.max.idle.ms} closes it, as in Kafka.
 *
 * <p>Thread-safe: reservations come from the event loops, releases from the event loops (on
 * behalf of handler and purgatory threads, which answer through them). {@link Waiter#onGranted}
 * runs on the releasing thread, outside the pool's lock.
 */
public final class RequestMemoryPool {
    private static final Logger LOG = LoggerFactory.getLogger(RequestMemoryPool.class);
    /** The capacity reported by an unbounded pool, as Kafka's {@code MemoryPool.NONE} reports it. */
    public static final long UNBOUNDED_CAPACITY_BYTES = Long.MAX_VALUE;

    /** Told when a waiting reservation is granted; the granted bytes are then the waiter's to release. */
    interface Waiter {
        /** Must not block or throw; runs on whichever thread released the bytes that made room. */
        void onGranted(int bytes);
    }

    private record Waiting(Waiter waiter, int bytes) {
    }

    private final long capacityBytes;
    private final int maxReservationBytes;
    // Guarded by this.
    private long usedBytes;
    private long peakUsedBytes;
    private long waitsTotal;
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();

    private RequestMemoryPool(long capacityBytes, int maxReservationBytes) {
        if (maxReservationBytes < 0) {
            throw new IllegalArgumentException("largest reservation must not be negative: maxReservationBytes=" + maxReservationBytes);
        }
        if (capacityBytes < maxReservationBytes) {
            // A reservation of the largest size could never be granted: its connection would stop for good.
            throw new IllegalArgumentException("capacity must hold one request of the largest size: capacityBytes=" + capacityBytes
                + " maxReservationBytes=" + maxReservationBytes);
        }
        this.capacityBytes = capacityBytes;
        this.maxReservationBytes = maxReservationBytes;
    }

    /** A pool of {@code capacityBytes} for requests of at most {@code maxRequestBytes} each. */
    public static RequestMemoryPool bounded(long capacityBytes, int maxRequestBytes) {
        if (capacityBytes <= 0) {
            throw new IllegalArgumentException("capacity must be positive: capacityBytes=" + capacityBytes);
        }
        return new RequestMemoryPool(capacityBytes, maxRequestBytes);
    }

    /** A pool that grants every reservation at once and only counts (queued.max.request.bytes &le; 0, Kafka's default). */
    public static RequestMemoryPool unbounded(int maxRequestBytes) {
        return new RequestMemoryPool(UNBOUNDED_CAPACITY_BYTES, maxRequestBytes);
    }

    /**
     * Reserves {@code bytes} now if they fit and nobody waits ahead, and returns true. Otherwise
     * queues {@code waiter}, returns false, and later calls {@link Waiter#onGranted} once with the
     * bytes reserved, unless {@link #cancel} removes it first.
     *
     * @throws IllegalArgumentException if {@code bytes} is negative or above the largest request
     *                                  size: callers refuse such frames before reserving
     * @throws IllegalStateException    if {@code waiter} is already waiting (one reservation at a time)
     */
    boolean tryReserve(int bytes, Waiter waiter) {
        if (bytes < 0 || bytes > maxReservationBytes) {
            throw new IllegalArgumentException("reservation out of range: bytes=" + bytes + " maxReservationBytes=" + maxReservationBytes);
        }
        synchronized (this) {
            if (waiting.isEmpty() && bytes <= capacityBytes - usedBytes) {
                add(bytes);
                return true;
            }
            assert waiting.stream().noneMatch(entry -> entry.waiter() == waiter) : "waiter already waiting: " + waiter;
            waiting.add(new Waiting(waiter, bytes));
            waitsTotal++;
            return false;
        }
    }

    /**
     * Removes a waiting reservation. True if it was waiting (it will not be granted); false if it
     * was granted already, in which case its {@link Waiter#onGranted} has run or is about to, and
     * the waiter must release those bytes.
     */
    synchronized boolean cancel(Waiter waiter) {
        return waiting.removeIf(entry -> entry.waiter() == waiter);
    }

    /** Returns {@code bytes} reserved earlier and grants the waiters that now fit, oldest first. */
    void release(int bytes) {
        List<Waiting> granted;
        synchronized (this) {
            if (bytes < 0 || bytes > usedBytes) {
                throw new IllegalStateException("released more than reserved: bytes=" + bytes + " usedBytes=" + usedBytes);
            }
            usedBytes -= bytes;
            granted = grantWaiters();
        }
        for (Waiting entry : granted) {
            try {
                entry.waiter().onGranted(entry.bytes());
            } catch (RuntimeException e) {
                // A bug in the waiter; taking the bytes back keeps the others going.
                LOG.error("Granting {} request bytes to {} failed; returning them to the pool", entry.bytes(), entry.waiter(), e);
                release(entry.bytes());
            }
        }
    }

    private List<Waiting> grantWaiters() {
        List<Waiting> granted = List.of();
        while (!waiting.isEmpty() && waiting.peek().bytes() <= capacityBytes - usedBytes) {
            Waiting entry = waiting.poll();
            add(entry.bytes());
            if (granted.isEmpty()) {
                granted = new ArrayList<>(2);
            }
            granted.add(entry);
        }
        return granted;
    }

    private void add(int bytes) {
        usedBytes += bytes;
        peakUsedBytes = Math.max(peakUsedBytes, usedBytes);
        assert usedBytes <= capacityBytes : "pool overdrawn: usedBytes=" + usedBytes + " capacityBytes=" + capacityBytes;
    }

    /** {@link #UNBOUNDED_CAPACITY_BYTES} when unbounded. */
    public long capacityBytes() {
        return capacityBytes;
    }

    public boolean isBounded() {
        return capacityBytes != UNBOUNDED_CAPACITY_BYTES;
    }

    /** Bytes reserved by requests buffered or in flight. */
    public synchronized long usedBytes() {
        return usedBytes;
    }

    /** Capacity minus used ({@link #UNBOUNDED_CAPACITY_BYTES} minus used when unbounded, as in Kafka). */
    public synchronized long availableBytes() {
        return capacityBytes - usedBytes;
    }

    /** The most bytes ever reserved at once. */
    public synchronized long peakUsedBytes() {
        return peakUsedBytes;
    }

    /** Connections whose next frame waits for memory (they are not reading). */
    public synchronized int waitingCount() {
        return waiting.size();
    }

    /** Reservations that had to wait, since start. */
    public synchronized long waitsTotal() {
        return waitsTotal;
    }

    @Override
    public synchronized String toString() {
        return "RequestMemoryPool(usedBytes=" + usedBytes + ", capacityBytes=" + capacityBytes + ", waiting=" + waiting.size() + ")";
    }
}
