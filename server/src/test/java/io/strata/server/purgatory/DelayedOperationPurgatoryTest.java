package io.strata.server.purgatory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.MockTime;
import io.strata.common.Time;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/** The purgatory under a mock clock, a direct timer executor and no reaper, unless a test says otherwise. */
class DelayedOperationPurgatoryTest {
    private static final long FUTURE_TIMEOUT_SECONDS = 60;

    private final MockTime time = new MockTime();
    private final AtomicBoolean ready = new AtomicBoolean(false);
    private final ExecutorService threads = Executors.newFixedThreadPool(5);
    private DelayedOperationPurgatory<TestOperation> purgatory = newPurgatory(1_000);

    @AfterEach
    void tearDown() {
        purgatory.shutdown();
        threads.shutdownNow();
    }

    private DelayedOperationPurgatory<TestOperation> newPurgatory(int purgeIntervalRequests) {
        return new DelayedOperationPurgatory<>("test", new SystemTimer(time, 1, 20, Runnable::run),
            purgeIntervalRequests, false);
    }

    @Test
    void operationWhoseConditionAlreadyHoldsCompletesAtOnceWithoutBeingWatchedOrTimed() {
        ready.set(true);
        TestOperation operation = new TestOperation(100, ready);

        assertThat(purgatory.tryCompleteElseWatch(operation, List.of("a", "b"))).isTrue();

        assertThat(operation.completions).hasValue(1);
        assertThat(purgatory.watched()).isZero();
        assertThat(purgatory.numDelayed()).isZero();
    }

    @Test
    void pendingOperationIsWatchedUnderEveryKeyAndTimed() {
        TestOperation operation = new TestOperation(100, ready);

        assertThat(purgatory.tryCompleteElseWatch(operation, List.of("a", "b", "c"))).isFalse();

        assertThat(operation.isCompleted()).isFalse();
        assertThat(purgatory.watched()).isEqualTo(3);
        assertThat(purgatory.numDelayed()).isEqualTo(1);
    }

    @Test
    void checkOnAnyOneKeyCompletesTheOperationOnceAndStopsItsTimer() throws InterruptedException {
        TestOperation operation = new TestOperation(100, ready);
        purgatory.tryCompleteElseWatch(operation, List.of("a", "b", "c"));
        assertThat(purgatory.checkAndComplete("a")).isZero();

        ready.set(true);
        assertThat(purgatory.checkAndComplete("b")).isEqualTo(1);
        assertThat(purgatory.checkAndComplete("c")).isZero();

        assertThat(operation.completions).hasValue(1);
        assertThat(purgatory.numDelayed()).isZero();
        advance(1_000);
        assertThat(operation.expirations).hasValue(0);
        assertThat(purgatory.numExpired()).isZero();
    }

    @Test
    void checkOnAKeyNobodyWatchesCompletesNothing() {
        assertThat(purgatory.checkAndComplete("nobody")).isZero();
    }

    @Test
    void operationThatTimesOutCompletesThenExpiresExactlyOnce() throws InterruptedException {
        TestOperation operation = new TestOperation(100, ready);
        purgatory.tryCompleteElseWatch(operation, List.of("a"));

        advance(99);
        assertThat(operation.isCompleted()).isFalse();
        advance(1);

        assertThat(operation.callbacks).containsExactly("complete", "expire");
        assertThat(purgatory.numExpired()).isEqualTo(1);
        assertThat(purgatory.numDelayed()).isZero();
        ready.set(true);
        assertThat(purgatory.checkAndComplete("a")).isZero();
        advance(1_000);
        assertThat(operation.callbacks).containsExactly("complete", "expire");
    }

    @Test
    void purgeDropsOperationsCompletedThroughAnotherKeySoWatchedShrinks() throws InterruptedException {
        purgatory.shutdown();
        purgatory = newPurgatory(0);
        TestOperation operation = new TestOperation(100, ready);
        purgatory.tryCompleteElseWatch(operation, List.of("a", "b"));
        ready.set(true);

        assertThat(purgatory.checkAndComplete("a")).isEqualTo(1);
        assertThat(purgatory.watched()).as("still on the list of key b").isEqualTo(1);

        purgatory.advanceClock(0);
        assertThat(purgatory.watched()).isZero();
    }

    @Test
    void purgeWaitsUntilMoreThanPurgeIntervalCompletedOperationsLinger() throws InterruptedException {
        purgatory.shutdown();
        purgatory = newPurgatory(3);
        TestOperation pending = new TestOperation(100, new AtomicBoolean(false));
        purgatory.tryCompleteElseWatch(pending, List.of("pending"));
        List<TestOperation> finished = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            TestOperation operation = new TestOperation(100, ready);
            purgatory.tryCompleteElseWatch(operation, List.of("k" + i));
            finished.add(operation);
        }

        for (int i = 0; i < 3; i++) {
            finished.get(i).forceComplete();
        }
        purgatory.advanceClock(0);
        assertThat(purgatory.watched()).as("3 lingering is not more than 3").isEqualTo(5);

        finished.get(3).forceComplete();
        purgatory.advanceClock(0);
        assertThat(purgatory.watched()).as("only the pending operation is left").isEqualTo(1);
    }

    @Test
    void cancelForKeyReturnsItsOperationsAndTakesThemOffTheTimerWithoutCompletingThem() throws InterruptedException {
        TestOperation first = new TestOperation(100, ready);
        TestOperation second = new TestOperation(200, ready);
        purgatory.tryCompleteElseWatch(first, List.of("a"));
        purgatory.tryCompleteElseWatch(second, List.of("a"));

        assertThat(purgatory.cancelForKey("a")).containsExactly(first, second);

        assertThat(purgatory.watched()).isZero();
        assertThat(purgatory.numDelayed()).isZero();
        advance(1_000);
        assertThat(first.callbacks).isEmpty();
        assertThat(second.callbacks).isEmpty();
        assertThat(purgatory.cancelForKey("a")).isEmpty();
    }

    @Test
    void tryCompleteAlwaysRunsUnderTheSharedGroupLock() throws InterruptedException {
        ReentrantLock groupLock = new ReentrantLock();
        TestOperation first = new TestOperation(100, ready, groupLock);
        TestOperation second = new TestOperation(100, ready, groupLock);
        purgatory.tryCompleteElseWatch(first, List.of("group"));
        purgatory.tryCompleteElseWatch(second, List.of("group"));

        ready.set(true);
        assertThat(purgatory.checkAndComplete("group")).isEqualTo(2);

        assertThat(first.tryCompleteRanWithoutLock).isFalse();
        assertThat(second.tryCompleteRanWithoutLock).isFalse();
        assertThat(groupLock.isLocked()).isFalse();
    }

    @Test
    void emptyWatchKeyListIsRejected() {
        assertThatThrownBy(() -> purgatory.tryCompleteElseWatch(new TestOperation(1, ready), List.of()))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("purgatory=test");
    }

    @Test
    void negativePurgeIntervalIsRejected() {
        assertThatThrownBy(() -> newPurgatory(-1)).hasMessageContaining("purgeIntervalRequests=-1");
    }

    @RepeatedTest(10)
    void forceCompleteFromManyThreadsHasExactlyOneWinner() throws Exception {
        TestOperation operation = new TestOperation(100, ready);
        CyclicBarrier start = new CyclicBarrier(4);
        List<Future<Boolean>> results = new ArrayList<>();
        for (int thread = 0; thread < 4; thread++) {
            results.add(threads.submit(() -> {
                start.await();
                return operation.forceComplete();
            }));
        }

        int winners = 0;
        for (Future<Boolean> result : results) {
            winners += result.get(FUTURE_TIMEOUT_SECONDS, TimeUnit.SECONDS) ? 1 : 0;
        }
        assertThat(winners).isEqualTo(1);
        assertThat(operation.completions).hasValue(1);
    }

    @RepeatedTest(20)
    void concurrentChecksAndExpiryCompleteEachOperationExactlyOnce() throws Exception {
        int operationCount = 1_000;
        List<String> keys = List.of("k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "all");
        AtomicInteger completedTotal = new AtomicInteger();
        List<TestOperation> operations = new ArrayList<>();
        for (int i = 0; i < operationCount; i++) {
            TestOperation operation = new CountingOperation(1 + i % 50, ready, completedTotal);
            purgatory.tryCompleteElseWatch(operation, List.of(keys.get(i % 8), "all"));
            operations.add(operation);
        }

        CyclicBarrier start = new CyclicBarrier(5);
        AtomicInteger completedByChecks = new AtomicInteger();
        List<Callable<Void>> actors = new ArrayList<>();
        for (int checker = 0; checker < 3; checker++) {
            int offset = checker * 3;
            actors.add(() -> {
                start.await();
                for (int round = 0; completedTotal.get() < operationCount; round++) {
                    if (Thread.currentThread().isInterrupted()) {
                        throw new InterruptedException("checker gave up at round " + round);
                    }
                    String key = keys.get((offset + round) % keys.size());
                    completedByChecks.addAndGet(purgatory.checkAndComplete(key));
                }
                return null;
            });
        }
        actors.add(() -> {
            start.await();
            for (int stepMs = 0; stepMs < 50; stepMs++) {
                advance(1);
            }
            return null;
        });
        actors.add(() -> {
            start.await();
            ready.set(true);
            return null;
        });

        for (Future<Void> actor : threads.invokeAll(actors, FUTURE_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            actor.get();
        }

        int expiredCount = 0;
        for (TestOperation operation : operations) {
            assertThat(operation.completions).hasValue(1);
            assertThat(operation.expirations.get()).isBetween(0, 1);
            assertThat(operation.tryCompleteRanWithoutLock).isFalse();
            expiredCount += operation.expirations.get();
        }
        assertThat(purgatory.numExpired()).isEqualTo(expiredCount);
        assertThat(completedByChecks.get() + expiredCount).isEqualTo(operationCount);
        assertThat(purgatory.numDelayed()).isZero();
    }

    @RepeatedTest(5)
    void completionSignalledWhileTheOperationIsBeingWatchedIsNeverMissed() throws Exception {
        for (int round = 0; round < 200; round++) {
            AtomicBoolean roundReady = new AtomicBoolean(false);
            TestOperation operation = new TestOperation(10_000, roundReady);
            CyclicBarrier start = new CyclicBarrier(2);
            Future<Boolean> watcher = threads.submit(() -> {
                start.await();
                return purgatory.tryCompleteElseWatch(operation, List.of("p"));
            });
            Future<Integer> signaller = threads.submit(() -> {
                start.await();
                roundReady.set(true);
                return purgatory.checkAndComplete("p");
            });

            boolean completedByWatch = watcher.get(FUTURE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            int completedByCheck = signaller.get(FUTURE_TIMEOUT_SECONDS, TimeUnit.SECONDS);

            assertThat(operation.completions).as("round %d", round).hasValue(1);
            assertThat((completedByWatch ? 1 : 0) + completedByCheck).as("round %d", round).isEqualTo(1);
        }
        assertThat(purgatory.numDelayed()).isZero();
    }

    @Test
    void reaperThreadExpiresOperationsWithoutManualClockAdvanceAndStopsOnShutdown() throws InterruptedException {
        DelayedOperationPurgatory<TestOperation> reaped =
            new DelayedOperationPurgatory<>("reaped", Time.SYSTEM, 1_000);
        CountDownLatch expired = new CountDownLatch(1);
        try {
            reaped.tryCompleteElseWatch(new TestOperation(5, ready) {
                @Override
                protected void onExpiration() {
                    super.onExpiration();
                    expired.countDown();
                }
            }, List.of("a"));

            assertThat(expired.await(FUTURE_TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(reaped.numExpired()).isEqualTo(1);
        } finally {
            reaped.shutdown();
        }
        assertThat(Thread.getAllStackTraces().keySet())
            .noneMatch(thread -> thread.getName().equals("ExpirationReaper-reaped") && thread.isAlive());
    }

    private void advance(long ms) throws InterruptedException {
        time.advance(ms);
        purgatory.advanceClock(0);
    }

    /** Also counts completions across all operations, so racing threads know when to stop. */
    private static final class CountingOperation extends TestOperation {
        private final AtomicInteger completedTotal;

        CountingOperation(long delayMs, AtomicBoolean ready, AtomicInteger completedTotal) {
            super(delayMs, ready);
            this.completedTotal = completedTotal;
        }

        @Override
        protected void onComplete() {
            super.onComplete();
            completedTotal.incrementAndGet();
        }
    }
}
