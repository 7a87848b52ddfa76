package io.strata.server.api;

import io.strata.metadata.Controller;

import java.util.concurrent.ExecutionException;

/**
 * Hands out producer ids from blocks the controller records in the metadata log, so an id
 * is never reused, even across restarts (a restart abandons the rest of the current block).
 *
 * <p>Thread-safe.
 */
public final class ProducerIdManager {
    private final Controller controller;
    private long next;
    private long blockEnd;

    public ProducerIdManager(Controller controller) {
        this.controller = controller;
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
            long first = controller.allocateProducerIds(Controller.PRODUCER_ID_BLOCK_SIZE).get();
            next = first;
            blockEnd = first + Controller.PRODUCER_ID_BLOCK_SIZE;
        }
        return next++;
    }
}
