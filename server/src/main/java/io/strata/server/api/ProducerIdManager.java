package io.strata.server.api;

import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.ControllerApi;

import java.util.concurrent.ExecutionException;

/**
 * Hands out producer ids from blocks the controller records in the metadata log, so an id
 * is never reused, even across restarts (a restart abandons the rest of the current block).
 *
 * <p>Thread-safe.
 */
public final class ProducerIdManager {
    private final ControllerApi controller;
    private final int brokerId;
    private final java.util.function.Supplier<BrokerRegistration> registration;
    private long next;
    private long blockEnd;
    /** The next block, asked for before the current one runs out. */
    private java.util.concurrent.CompletableFuture<Long> prefetch;

    /** @param registration this broker's current registration (its epoch goes with the request), or null before it registered */
    public ProducerIdManager(ControllerApi controller, int brokerId, java.util.function.Supplier<BrokerRegistration> registration) {
        this.controller = controller;
        this.brokerId = brokerId;
        this.registration = registration;
    }

    /** {@link #nextProducerId()} for callers that cannot handle checked exceptions. */
    public long nextProducerIdUnchecked() {
        try {
            return nextProducerId();
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not allocate a producer id block", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while allocating a producer id block", e);
        }
    }

    /**
     * The next id. The next block is asked for in the background once 90% of the current one is
     * handed out (as Kafka's brokers do), so a caller waits for the controller only when ids run
     * out faster than a round trip to it.
     */
    public synchronized long nextProducerId() throws ExecutionException, InterruptedException {
        if (next >= blockEnd) {
            if (prefetch == null) {
                prefetch = requestBlock();
            }
            long first;
            try {
                first = prefetch.get();
            } finally {
                prefetch = null; // a failed request is asked again by the next caller
            }
            next = first;
            blockEnd = first + ControllerApi.PRODUCER_ID_BLOCK_SIZE;
        }
        long id = next++;
        if (prefetch == null && blockEnd - next <= ControllerApi.PRODUCER_ID_BLOCK_SIZE / 10) {
            prefetch = requestBlock();
        }
        return id;
    }

    private java.util.concurrent.CompletableFuture<Long> requestBlock() {
        BrokerRegistration current = registration.get();
        return controller.allocateProducerIds(brokerId, current == null ? -1 : current.epoch());
    }
}
