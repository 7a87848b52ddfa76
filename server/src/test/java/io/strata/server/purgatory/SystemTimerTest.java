package io.strata.server.purgatory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.MockTime;
import io.strata.common.Time;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Drives a {@link SystemTimer} with a mock clock and a direct executor, so every due task
 * has run when advanceClock returns.
 */
class SystemTimerTest {
    private final MockTime time = new MockTime();
    private final SystemTimer timer = new SystemTimer(time, 1, 20, Runnable::run);

    @Test
    void taskRunsWhenItsDelayHasPassedAndNotBefore() throws InterruptedException {
        CountingTask task = new CountingTask(time, 10);
        timer.add(task);
        assertThat(timer.size()).isEqualTo(1);

        advance(9);
        assertThat(task.runCount).isZero();

        advance(1);
        assertThat(task.runCount).isEqualTo(1);
        assertThat(task.lastRunAtMs).isEqualTo(10);
        assertThat(timer.size()).isZero();
    }

    @Test
    void taskWithZeroDelayRunsDuringAdd() {
        CountingTask task = new CountingTask(time, 0);
        timer.add(task);

        assertThat(task.runCount).isEqualTo(1);
        assertThat(timer.size()).isZero();
    }

    @Test
    void advanceClockReportsWhetherAnyBucketFellDue() throws InterruptedException {
        assertThat(timer.advanceClock(0)).isFalse();
        timer.add(new CountingTask(time, 3));

        time.advance(2);
        assertThat(timer.advanceClock(0)).isFalse();
        time.advance(1);
        assertThat(timer.advanceClock(0)).isTrue();
    }

    @Test
    void farDeadlinesCascadeThroughOverflowWheelsAndRunExactlyOnTimeAfterClockJumps() throws InterruptedException {
        long[] delaysMs = {25, 450, 8_500, 200_000, 3_600_000};
        List<CountingTask> tasks = new ArrayList<>();
        for (long delayMs : delaysMs) {
            CountingTask task = new CountingTask(time, delayMs);
            tasks.add(task);
            timer.add(task);
        }
        assertThat(timer.levelCount()).isEqualTo(6);

        for (CountingTask task : tasks) {
            advance(task.delayMs() - 1 - time.hiResClockMs());
            assertThat(task.runCount).as("task %d ms at %d ms", task.delayMs(), time.hiResClockMs()).isZero();
            advance(1);
            assertThat(task.runCount).as("task %d ms", task.delayMs()).isEqualTo(1);
            assertThat(task.lastRunAtMs).isEqualTo(task.delayMs());
        }
        assertThat(timer.size()).isZero();
    }

    @Test
    void oneLargeClockJumpRunsEverythingDueAndNothingElse() throws InterruptedException {
        CountingTask soon = new CountingTask(time, 30);
        CountingTask atJump = new CountingTask(time, 5_000);
        CountingTask later = new CountingTask(time, 5_001);
        List.of(soon, atJump, later).forEach(timer::add);

        advance(5_000);

        assertThat(soon.runCount).isEqualTo(1);
        assertThat(atJump.runCount).isEqualTo(1);
        assertThat(later.runCount).isZero();
        assertThat(timer.size()).isEqualTo(1);
    }

    @Test
    void cancelledTasksNeverRunWhetherInTheBottomWheelOrAnOverflowWheel() throws InterruptedException {
        CountingTask near = new CountingTask(time, 5);
        CountingTask far = new CountingTask(time, 50_000);
        timer.add(near);
        timer.add(far);

        near.cancel();
        far.cancel();
        assertThat(timer.size()).isZero();

        advance(100_000);
        assertThat(near.runCount).isZero();
        assertThat(far.runCount).isZero();
    }

    @Test
    void cancellingAfterTheTaskRanIsHarmless() throws InterruptedException {
        CountingTask task = new CountingTask(time, 1);
        timer.add(task);
        advance(1);

        task.cancel();

        assertThat(task.runCount).isEqualTo(1);
        assertThat(timer.size()).isZero();
    }

    @Test
    void readdingAPendingTaskMovesItToTheNewDeadline() throws InterruptedException {
        CountingTask task = new CountingTask(time, 10);
        timer.add(task);
        advance(5);

        timer.add(task);
        assertThat(timer.size()).isEqualTo(1);

        advance(5);
        assertThat(task.runCount).isZero();
        advance(5);
        assertThat(task.runCount).isEqualTo(1);
        assertThat(task.lastRunAtMs).isEqualTo(15);
    }

    @Test
    void readdingATaskThatRanSchedulesItAgain() throws InterruptedException {
        CountingTask task = new CountingTask(time, 10);
        timer.add(task);
        advance(10);

        timer.add(task);
        advance(9);
        assertThat(task.runCount).isEqualTo(1);
        advance(1);
        assertThat(task.runCount).isEqualTo(2);
        assertThat(task.lastRunAtMs).isEqualTo(20);
    }

    @Test
    void coarseTickRoundsDeadlinesUpSoNoTaskRunsEarly() throws InterruptedException {
        SystemTimer coarse = new SystemTimer(time, 10, 8, Runnable::run);
        CountingTask task = new CountingTask(time, 21);
        coarse.add(task);

        time.advance(29);
        coarse.advanceClock(0);
        assertThat(task.runCount).isZero();
        time.advance(1);
        coarse.advanceClock(0);
        assertThat(task.lastRunAtMs).isEqualTo(30);
    }

    @Test
    void hundredThousandRandomTasksAddedWhileTheClockMovesEachRunOnceAtTheFirstAdvancePastTheirDeadline()
        throws InterruptedException {
        int taskCount = 100_000;
        Random random = new Random(20_240_601L);
        long[] deadlinesMs = new long[taskCount];
        long[] runAtMs = new long[taskCount];
        int[] runCounts = new int[taskCount];
        List<Long> observedMs = new ArrayList<>(List.of(time.hiResClockMs()));

        int added = 0;
        while (added < taskCount || timer.size() > 0) {
            for (int batch = random.nextInt(40); batch > 0 && added < taskCount; batch--, added++) {
                long delayMs = random.nextInt(30_000);
                deadlinesMs[added] = time.hiResClockMs() + delayMs;
                addRecordingTask(added, delayMs, runAtMs, runCounts);
            }
            advance(1 + random.nextInt(3));
            observedMs.add(time.hiResClockMs());
        }

        long[] observed = observedMs.stream().mapToLong(Long::longValue).toArray();
        for (int id = 0; id < taskCount; id++) {
            int firstAtOrAfter = Arrays.binarySearch(observed, deadlinesMs[id]);
            long expectedMs = observed[firstAtOrAfter >= 0 ? firstAtOrAfter : -firstAtOrAfter - 1];
            assertThat(runCounts[id]).as("runs of task %d", id).isEqualTo(1);
            assertThat(runAtMs[id]).as("run time of task %d, deadline %d", id, deadlinesMs[id]).isEqualTo(expectedMs);
        }
    }

    @Test
    void ownedExecutorThreadRunsDueTasks() throws Exception {
        SystemTimer threaded = new SystemTimer("test", time);
        try {
            CountDownLatch ran = new CountDownLatch(1);
            AtomicReference<String> threadName = new AtomicReference<>();
            threaded.add(new TimerTask(5) {
                @Override
                public void run() {
                    threadName.set(Thread.currentThread().getName());
                    ran.countDown();
                }
            });
            time.advance(5);
            threaded.advanceClock(0);

            assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(threadName.get()).isEqualTo("executor-test");
        } finally {
            threaded.close();
        }
    }

    @Test
    void waitingAdvanceClockWakesForATaskAddedDuringTheWait() throws Exception {
        SystemTimer realTime = new SystemTimer(Time.SYSTEM, 1, 20, Runnable::run);
        ExecutorService reaper = Executors.newSingleThreadExecutor();
        try {
            CountDownLatch ran = new CountDownLatch(1);
            Future<Boolean> advanced = reaper.submit(() -> realTime.advanceClock(60_000));
            realTime.add(new TimerTask(1) {
                @Override
                public void run() {
                    ran.countDown();
                }
            });

            assertThat(advanced.get(30, TimeUnit.SECONDS)).isTrue();
            assertThat(ran.getCount()).isZero();
        } finally {
            reaper.shutdownNow();
        }
    }

    @Test
    void rejectsDelaysOutsideTheSupportedRange() {
        assertThatThrownBy(() -> new CountingTask(time, -1)).hasMessageContaining("delayMs=-1");
        assertThatThrownBy(() -> new CountingTask(time, TimerTask.MAX_DELAY_MS + 1))
            .hasMessageContaining("delayMs=" + (TimerTask.MAX_DELAY_MS + 1));
    }

    private void addRecordingTask(int id, long delayMs, long[] runAtMs, int[] runCounts) {
        timer.add(new TimerTask(delayMs) {
            @Override
            public void run() {
                runAtMs[id] = time.hiResClockMs();
                runCounts[id]++;
            }
        });
    }

    private void advance(long ms) throws InterruptedException {
        time.advance(ms);
        timer.advanceClock(0);
    }

    /** Counts its runs and remembers when it last ran; runs on the test thread only. */
    static final class CountingTask extends TimerTask {
        private final Time time;
        int runCount;
        long lastRunAtMs = -1;

        CountingTask(Time time, long delayMs) {
            super(delayMs);
            this.time = time;
        }

        @Override
        public void run() {
            runCount++;
            lastRunAtMs = time.hiResClockMs();
        }
    }
}
