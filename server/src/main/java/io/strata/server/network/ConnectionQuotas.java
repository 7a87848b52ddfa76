package io.strata.server.network;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts open connections in total and per client address ({@code max.connections}, {@code max.connections.per.ip}). Thread-safe. */
final class ConnectionQuotas {
    private final int maxConnections;
    private final int maxConnectionsPerIp;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<InetAddress, Integer> perAddress = new ConcurrentHashMap<>();

    ConnectionQuotas(int maxConnections, int maxConnectionsPerIp) {
        this.maxConnections = maxConnections;
        this.maxConnectionsPerIp = maxConnectionsPerIp;
    }

    /** Registers a connection; false if a limit is reached (nothing is counted then). */
    boolean tryAcquire(InetAddress address) {
        if (total.incrementAndGet() > maxConnections) {
            total.decrementAndGet();
            return false;
        }
        boolean[] admitted = {false};
        // compute() runs atomically per key, so the per-address count never races with release().
        perAddress.compute(address, (key, count) -> {
            int current = count == null ? 0 : count;
            if (current >= maxConnectionsPerIp) {
                return count;
            }
            admitted[0] = true;
            return current + 1;
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
