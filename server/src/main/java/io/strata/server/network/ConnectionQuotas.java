package io.strata.server.network;

import java.net.InetAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts open connections in total and per client address against {@code max.connections},
 * {@code max.connections.per.ip} and {@code max.connections.per.ip.overrides}, and holds the
 * {@code max.connection.creation.rate} that {@link ConnectionRateThrottle} enforces. The limits can
 * change while connections are open ({@link #reconfigure}): as in Kafka, a lower limit refuses
 * new connections past it and leaves the open ones alone.
 *
 * <p>Thread-safe: event loops acquire and release concurrently; the limits are one immutable
 * {@link Limits} published through a volatile field, so a connection is checked against one
 * consistent set of them.
 */
final class ConnectionQuotas {
    /** One consistent set of limits; {@code perAddressOverrides} holds resolved addresses. */
    record Limits(int maxConnections, int maxConnectionsPerIp, Map<InetAddress, Integer> perAddressOverrides, int maxConnectionCreationRate) {
        Limits {
            perAddressOverrides = Map.copyOf(perAddressOverrides);
        }

        int limitFor(InetAddress address) {
            return perAddressOverrides.getOrDefault(address, maxConnectionsPerIp);
        }
    }

    private volatile Limits limits;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<InetAddress, Integer> perAddress = new ConcurrentHashMap<>();

    ConnectionQuotas(int maxConnections, int maxConnectionsPerIp) {
        this(new Limits(maxConnections, maxConnectionsPerIp, Map.of(), Integer.MAX_VALUE));
    }

    ConnectionQuotas(Limits limits) {
        this.limits = limits;
    }

    /** Replaces the limits; connections already open are kept even if they are now over a limit. */
    void reconfigure(Limits newLimits) {
        this.limits = newLimits;
    }

    Limits limits() {
        return limits;
    }

    /** Registers a connection; false if a limit is reached (nothing is counted then). */
    boolean tryAcquire(InetAddress address) {
        Limits current = limits;
        if (total.incrementAndGet() > current.maxConnections()) {
            total.decrementAndGet();
            return false;
        }
        int limit = current.limitFor(address);
        boolean[] admitted = {false};
        // compute() runs atomically per key, so the per-address count never races with release().
        perAddress.compute(address, (key, count) -> {
            int open = count == null ? 0 : count;
            if (open >= limit) {
                return count;
            }
            admitted[0] = true;
            return open + 1;
        });
        if (!admitted[0]) {
            total.decrementAndGet();
        }
        return admitted[0];
    }

    void release(InetAddress address) {
        total.decrementAndGet();
        perAddress.computeIfPresent(address, (key, count) -> count <= 1 ? null : count - 1);
    }

    int total() {
        return total.get();
    }
}
