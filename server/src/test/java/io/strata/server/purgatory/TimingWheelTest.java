package io.strata.server.purgatory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.MockTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Replays the placement rules and the worked example of {@link TimingWheel}'s javadoc, one bucket at a time. */
class TimingWheelTest {
    private final MockTime time = new MockTime();
    private final AtomicInteger taskCounter = new AtomicInteger();
    private final BucketQueue bucketQueue = new BucketQueue(time);
    private final TimingWheel wheel = new TimingWheel(1, 20, 0, taskCounter, bucketQueue);
    private final List<TimerTaskEntry> due = new ArrayList<>();

    @Test
    void deadlineWithinTheCurrentTickIsRejectedAsAlreadyDue() {
        assertThat(wheel.add(entryAt(0))).isFalse();
        assertThat(taskCounter).hasValue(0);
    }

    @Test
    void cancelledEntryIsRejected() {
        TimerTaskEntry entry = entryAt(5);
        entry.task.cancel();

        assertThat(wheel.add(entry)).isFalse();
    }

    @Test
    void overflowLevelsAreCreatedOnlyWhenADeadlineNeedsThem() {
        assertThat(wheel.add(entryAt(19))).isTrue();
        assertThat(wheel.levelCount()).isEqualTo(1);

        assertThat(wheel.add(entryAt(20))).isTrue();
        assertThat(wheel.levelCount()).isEqualTo(2);

        assertThat(wheel.add(entryAt(8_000))).isTrue();
        assertThat(wheel.levelCount()).isEqualTo(4);
        assertThat(taskCounter).hasValue(3);
    }

    @Test
    void nearDeadlineSitsInABottomBucketExpiringAtTheDeadline() {
        TimerTaskEntry seven = entryAt(7);
        wheel.add(seven);

        assertThat(processBucketsUntil(7)).containsExactly(7L);
        assertThat(due).containsExactly(seven);
    }

    @Test
    void deadline25WaitsInTheLevel1BucketOf20ThenInTheBottomBucketOf25() {
        TimerTaskEntry twentyFive = entryAt(25);
        wheel.add(twentyFive);

        assertThat(processBucketsUntil(25)).containsExactly(20L, 25L);
        assertThat(due).containsExactly(twentyFive);
        assertThat(wheel.currentTimeMs()).isEqualTo(25);
    }

    @Test
    void deadline450CascadesThroughBuckets400And440To450() {
        TimerTaskEntry fourFifty = entryAt(450);
        wheel.add(fourFifty);
        assertThat(wheel.levelCount()).isEqualTo(3);

        assertThat(processBucketsUntil(449)).containsExactly(400L, 440L);
        assertThat(due).isEmpty();
        assertThat(processBucketsUntil(450)).containsExactly(450L);
        assertThat(due).containsExactly(fourFifty);
    }

    @Test
    void rejectsConfigurationsThatCannotWork() {
        assertThatThrownBy(() -> new TimingWheel(0, 20, 0, taskCounter, bucketQueue))
            .hasMessageContaining("tickMs=0");
        assertThatThrownBy(() -> new TimingWheel(1, 1, 0, taskCounter, bucketQueue))
            .hasMessageContaining("wheelSize=1");
    }

    /**
     * Moves the mock clock one millisecond at a time up to {@code endMs}, doing what
     * {@link SystemTimer#advanceClock} does for each bucket that falls due.
     *
     * @return the expirations of the buckets that fell due, in order
     */
    private List<Long> processBucketsUntil(long endMs) {
        List<Long> expirations = new ArrayList<>();
        while (time.hiResClockMs() < endMs) {
            time.advance(1);
            BucketQueue.ScheduledBucket bucket;
            while ((bucket = bucketQueue.pollDue()) != null) {
                expirations.add(bucket.expirationMs());
                wheel.advanceClock(bucket.expirationMs());
                bucket.bucket().flush(this::reinsert);
            }
        }
        return expirations;
    }

    private void reinsert(TimerTaskEntry entry) {
        if (!wheel.add(entry) && entry.task.claim(entry)) {
            due.add(entry);
        }
    }

    private static TimerTaskEntry entryAt(long expirationMs) {
        TimerTask task = new TimerTask(expirationMs) {
            @Override
            public void run() {
            }
        };
        TimerTaskEntry entry = new TimerTaskEntry(task, expirationMs);
        task.link(entry);
        return entry;
    }
}
