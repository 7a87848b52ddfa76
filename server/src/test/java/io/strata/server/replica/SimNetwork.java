package io.strata.server.replica;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The simulated network between brokers and the controller: every message is delivered after a
 * seeded delay, or dropped (the caller's future fails, as a lost connection does), and links can be
 * cut in both directions. A request is handled when it arrives and its answer travels back with a
 * second delay. Node ids: brokers are their ids, the controller is {@link #CONTROLLER}.
 * Not thread-safe: driven by the simulation's single thread.
 */
final class SimNetwork {
    static final int CONTROLLER = -100;
    /** Longest one-way delay; kept below the fetcher's and the controller's timeouts. */
    static final int MAX_DELAY_MS = 20;

    private final SimScheduler scheduler;
    private final Random random;
    private final Set<Long> cut = new HashSet<>();
    /** Percent of messages dropped. */
    int dropPercent;

    SimNetwork(SimScheduler scheduler, Random random) {
        this.scheduler = scheduler;
        this.random = random;
    }

    private static long link(int a, int b) {
        return ((long) Math.min(a, b) << 32) ^ (Math.max(a, b) & 0xffffffffL);
    }

    void cut(int a, int b) {
        cut.add(link(a, b));
    }

    void heal(int a, int b) {
        cut.remove(link(a, b));
    }

    void healAll() {
        cut.clear();
    }

    boolean connected(int a, int b) {
        return !cut.contains(link(a, b));
    }

    private boolean lost(int from, int to) {
        return !connected(from, to) || (dropPercent > 0 && random.nextInt(100) < dropPercent);
    }

    private long delay() {
        return 1 + random.nextInt(MAX_DELAY_MS);
    }

    /** A one-way message: {@code action} runs at the receiver after a delay unless the message is lost. */
    void send(int from, int to, String what, Runnable action) {
        boolean lost = lost(from, to);
        scheduler.schedule(delay(), what + " " + from + "->" + to, () -> {
            if (!lost && connected(from, to)) {
                action.run();
            }
        });
    }

    /**
     * A request/response exchange: {@code handler} runs at the receiver when the request arrives, its
     * answer completes the returned future one delay later (a null answer: the receiver is down); a lost request or answer fails it.
     */
    <T> CompletableFuture<T> request(int from, int to, String what, Supplier<T> handler) {
        CompletableFuture<T> future = new CompletableFuture<>();
        boolean requestLost = lost(from, to);
        scheduler.schedule(delay(), what + " " + from + "->" + to, () -> {
            if (requestLost || !connected(from, to)) {
                future.completeExceptionally(new java.io.IOException("simulated: " + what + " lost " + from + "->" + to));
                return;
            }
            T answer = handler.get();
            if (answer == null) {
                future.completeExceptionally(new java.io.IOException("simulated: " + what + " not answered by " + to));
                return;
            }
            boolean answerLost = lost(to, from);
            scheduler.schedule(delay(), what + " answer " + to + "->" + from, () -> {
                if (answerLost || !connected(from, to)) {
                    future.completeExceptionally(new java.io.IOException("simulated: answer to " + what + " lost " + to + "->" + from));
                } else {
                    future.complete(answer);
                }
            });
        });
        return future;
    }
}
