package io.strata.server.replica;

import io.strata.common.Time;
import io.strata.protocol.ErrorCode;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The partition leader's retry of a transactions-v2 implicit add (Produce v12): while the
 * coordinator answers CONCURRENT_TRANSACTIONS, the producer's previous transaction is still
 * writing its markers, typically for a few milliseconds. Kafka's leader asks again every
 * {@code add.partitions.to.txn.retry.backoff.ms} (20 ms) for up to
 * {@code add.partitions.to.txn.retry.backoff.max.ms} (100 ms) before passing the error on; without
 * that the client backs off for its own 100 ms {@code retry.backoff.ms}, which made a commit
 * followed at once by the next transaction's first send take 100 ms.
 */
final class AddPartitionsRetry {
    /** Kafka's {@code add.partitions.to.txn.retry.backoff.ms} default. */
    static final long BACKOFF_MS = 20;
    /** Kafka's {@code add.partitions.to.txn.retry.backoff.max.ms} default. */
    static final long MAX_MS = 100;

    private AddPartitionsRetry() {
    }

    /**
     * Runs {@code attempt}, and again after {@code backoffMs} while it answers
     * CONCURRENT_TRANSACTIONS and another attempt still fits in {@code maxMs} from now; completes
     * with the last answer (or failure). Retries run on {@code scheduler}; if it refuses (the
     * broker is stopping) the current answer is passed on.
     */
    static CompletableFuture<ErrorCode> add(Supplier<CompletableFuture<ErrorCode>> attempt, Time time, ScheduledExecutorService scheduler,
                                            long backoffMs, long maxMs) {
        CompletableFuture<ErrorCode> result = new CompletableFuture<>();
        run(attempt, time, scheduler, backoffMs, time.hiResClockMs() + maxMs, result);
        return result;
    }

    private static void run(Supplier<CompletableFuture<ErrorCode>> attempt, Time time, ScheduledExecutorService scheduler, long backoffMs,
                            long deadlineMs, CompletableFuture<ErrorCode> result) {
        attempt.get().whenComplete((error, failure) -> {
            if (failure == null && error == ErrorCode.CONCURRENT_TRANSACTIONS && time.hiResClockMs() + backoffMs <= deadlineMs) {
                try {
                    scheduler.schedule(() -> run(attempt, time, scheduler, backoffMs, deadlineMs, result), backoffMs, TimeUnit.MILLISECONDS);
                    return;
                } catch (RejectedExecutionException stopping) {
                    // fall through: answer with what the coordinator said
                }
            }
            if (failure != null) {
                result.completeExceptionally(failure);
            } else {
                result.complete(error);
            }
        });
    }
}
