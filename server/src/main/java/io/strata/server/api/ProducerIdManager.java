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

    public synchronized long nextProducerId() throws ExecutionException, InterruptedException {
        if (next >= blockEnd) {
            BrokerRegistration current = registration.get();
            long first = controller.allocateProducerIds(brokerId, current == null ? -1 : current.epoch()).get();
            next = first;
            blockEnd = first + ControllerApi.PRODUCER_ID_BLOCK_SIZE;
        }
        return next++;
    }
}
