package io.strata.server.api;

import io.strata.server.network.Request;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Tells the active controller when a connection that carried broker heartbeats closes (the
 * dead-broker fast path, {@code strata.broker.disconnect.fence.ms}, a Strata addition). A
 * heartbeat handler calls {@link #watch} <em>after</em> handing the heartbeat to the
 * controller; the first heartbeat of a connection registers one close observer for it, so a
 * connection costs one set entry and one observer however many heartbeats it carries, and the
 * entry goes when it closes (memory is bounded by the open connections).
 *
 * <p>Ordering, which the controller relies on: a close is reported after the heartbeat whose
 * {@code watch} saw the connection, because {@code watch} follows the heartbeat's submission and
 * an observer registered on a closed connection runs at once. A heartbeat handed over after
 * an earlier observer already removed the entry registers a new observer, which then reports
 * the close again (reports are idempotent for the controller).
 *
 * <p>Thread-safe: handler threads call {@link #watch}; observers run on event loops.
 */
final class HeartbeatConnectionWatcher {
    private final Set<String> watched = ConcurrentHashMap.newKeySet();
    private final Consumer<String> onClosed;

    /** @param onClosed given a closed connection's id; must not block (it runs on an event loop) */
    HeartbeatConnectionWatcher(Consumer<String> onClosed) {
        this.onClosed = onClosed;
    }

    /** Watches the connection {@code request} came on, unless it is watched already. */
    void watch(Request request) {
        String connection = request.connectionId();
        if (watched.add(connection)) {
            request.whenConnectionClosed(() -> {
                watched.remove(connection);
                onClosed.accept(connection);
            });
        }
    }

    /** How many connections are watched now (tests). */
    int watchedCount() {
        return watched.size();
    }
}
