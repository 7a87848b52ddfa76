package io.strata.server.replica;

import io.strata.common.Time;
import io.strata.protocol.ErrorCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AddPartitionsRetryTest {
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    private static java.util.function.Supplier<CompletableFuture<ErrorCode>> answers(AtomicInteger calls, ErrorCode... codes) {
        Deque<ErrorCode> queue = new ArrayDeque<>(List.of(codes));
        return () -> {
            calls.incrementAndGet();
            ErrorCode next = queue.size() > 1 ? queue.poll() : queue.peek();
            return CompletableFuture.completedFuture(next);
        };
    }

    @Test
    void concurrentTransactionsIsRetriedUntilTheCoordinatorAccepts() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        ErrorCode result = AddPartitionsRetry.add(answers(calls, ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.CONCURRENT_TRANSACTIONS,
            ErrorCode.NONE), Time.SYSTEM, scheduler, 20, 100).get(10, TimeUnit.SECONDS);
        assertThat(result).isEqualTo(ErrorCode.NONE);
        assertThat(calls).hasValue(3);
    }

    @Test
    void afterTheRetryWindowTheErrorIsPassedOn() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        long start = System.nanoTime();
        ErrorCode result = AddPartitionsRetry.add(answers(calls, ErrorCode.CONCURRENT_TRANSACTIONS), Time.SYSTEM, scheduler, 20, 100)
            .get(10, TimeUnit.SECONDS);
        assertThat(result).isEqualTo(ErrorCode.CONCURRENT_TRANSACTIONS);
        assertThat(calls.get()).isBetween(2, 6); // the first attempt plus at most 100 / 20 retries
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(20);
    }

    @Test
    void otherAnswersAreNotRetried() throws Exception {
        for (ErrorCode code : List.of(ErrorCode.NONE, ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_TXN_STATE, ErrorCode.COORDINATOR_NOT_AVAILABLE)) {
            AtomicInteger calls = new AtomicInteger();
            assertThat(AddPartitionsRetry.add(answers(calls, code), Time.SYSTEM, scheduler, 20, 100).get(10, TimeUnit.SECONDS)).isEqualTo(code);
            assertThat(calls).hasValue(1);
        }
    }

    @Test
    void aStoppedSchedulerPassesTheAnswerOnAndAFailureStaysAFailure() {
        scheduler.shutdownNow();
        AtomicInteger calls = new AtomicInteger();
        assertThat(AddPartitionsRetry.add(answers(calls, ErrorCode.CONCURRENT_TRANSACTIONS), Time.SYSTEM, scheduler, 20, 100))
            .isCompletedWithValue(ErrorCode.CONCURRENT_TRANSACTIONS);
        CompletableFuture<ErrorCode> failed = AddPartitionsRetry.add(() -> CompletableFuture.failedFuture(new IllegalStateException("down")),
            Time.SYSTEM, scheduler, 20, 100);
        assertThatThrownBy(() -> failed.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class);
    }
}
