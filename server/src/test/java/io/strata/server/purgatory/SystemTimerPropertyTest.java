package io.strata.server.purgatory;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.MockTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * For any tick, wheel size and schedule: each task runs once, never before its deadline,
 * at the first clock advance past its deadline rounded up to the tick.
 */
class SystemTimerPropertyTest {
    /** A case a random run found (tick 1 ms, wheel size 2): a task ran one advance late. */
    @net.jqwik.api.Example
    void foundByARandomRun() throws InterruptedException {
        everyTaskRunsOnceNoEarlierThanItsDeadlineAndAtTheFirstAdvancePastItsTick(1, 2, -89);
    }

    @Property(tries = 40)
    void everyTaskRunsOnceNoEarlierThanItsDeadlineAndAtTheFirstAdvancePastItsTick(
        @ForAll @IntRange(min = 1, max = 10) int tickMs,
        @ForAll @IntRange(min = 2, max = 32) int wheelSize,
        @ForAll long seed) throws InterruptedException {
        MockTime time = new MockTime();
        time.advance(new Random(seed).nextInt(1_000));
        SystemTimer timer = new SystemTimer(time, tickMs, wheelSize, Runnable::run);
        Random random = new Random(seed);
        int taskCount = 500;
        long[] deadlinesMs = new long[taskCount];
        long[] runAtMs = new long[taskCount];
        int[] runCounts = new int[taskCount];
        List<Long> observedMs = new ArrayList<>(List.of(time.hiResClockMs()));

        int added = 0;
        while (added < taskCount || timer.size() > 0) {
            for (int batch = random.nextInt(5); batch > 0 && added < taskCount; batch--, added++) {
                int id = added;
                long delayMs = random.nextInt(20_000);
                deadlinesMs[id] = time.hiResClockMs() + delayMs;
                timer.add(new TimerTask(delayMs) {
                    @Override
                    public void run() {
                        runAtMs[id] = time.hiResClockMs();
                        runCounts[id]++;
                    }
                });
            }
            time.advance(1 + random.nextInt(3 * tickMs + 50));
            timer.advanceClock(0);
            observedMs.add(time.hiResClockMs());
        }

        long[] observed = observedMs.stream().mapToLong(Long::longValue).toArray();
        for (int id = 0; id < taskCount; id++) {
            long roundedDeadlineMs = Math.floorDiv(deadlinesMs[id] + tickMs - 1, tickMs) * tickMs;
            assertThat(runCounts[id]).isEqualTo(1);
            assertThat(runAtMs[id]).isGreaterThanOrEqualTo(deadlinesMs[id]);
            assertThat(runAtMs[id]).isEqualTo(firstAtOrAfter(observed, roundedDeadlineMs));
        }
    }

    private static long firstAtOrAfter(long[] sortedMs, long targetMs) {
        int index = Arrays.binarySearch(sortedMs, targetMs);
        return sortedMs[index >= 0 ? index : -index - 1];
    }
}
