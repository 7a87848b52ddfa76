package io.strata.storage.cleaner;

import io.strata.common.MockTime;
import io.strata.storage.TopicPartition;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Kafka's Throttler semantics on a clock the test moves. */
class ThrottlerTest {
    private static final TopicPartition TP = new TopicPartition("compacted", 0);
    private final MockTime time = new MockTime();

    @Test
    void sleepsJustLongEnoughToBringThePeriodDownToTheDesiredRate() throws InterruptedException {
        Throttler throttler = new Throttler(1000, time);
        assertThat(throttler.maybeThrottle(600, Cleaner.AbortCheck.NEVER, TP)).as("the period has not ended").isZero();
        time.advance(Throttler.CHECK_INTERVAL_MS);
        assertThat(throttler.maybeThrottle(0, Cleaner.AbortCheck.NEVER, TP)).as("a period ends only after the interval").isZero();
        time.advance(1);
        long startMs = time.milliseconds();
        // 600 bytes at 1,000 B/s take 600 ms; 301 ms have passed.
        assertThat(throttler.maybeThrottle(0, Cleaner.AbortCheck.NEVER, TP)).isEqualTo(299);
        assertThat(time.milliseconds() - startMs).isEqualTo(299);
        // A new period began: the next bytes are not charged for the old ones.
        assertThat(throttler.maybeThrottle(100, Cleaner.AbortCheck.NEVER, TP)).isZero();
    }

    @Test
    void aSlowerRateThanDesiredNeverSleepsAndTheDefaultNeverSleeps() throws InterruptedException {
        Throttler throttler = new Throttler(1000, time);
        time.advance(1000);
        assertThat(throttler.maybeThrottle(900, Cleaner.AbortCheck.NEVER, TP)).isZero();
        Throttler unlimited = Throttler.unlimited(time);
        time.advance(1000);
        assertThat(unlimited.maybeThrottle(1e12, Cleaner.AbortCheck.NEVER, TP)).isZero();
    }

    @Test
    void anAbortEndsALongSleepWithinOneSliceAndTheRateCanChangeAtRuntime() throws InterruptedException {
        Throttler throttler = new Throttler(1, time);
        time.advance(Throttler.CHECK_INTERVAL_MS + 1);
        long startMs = time.milliseconds();
        assertThatThrownBy(() -> throttler.maybeThrottle(1_000_000, topicPartition -> {
            throw new LogCleaningAbortedException("aborted");
        }, TP)).isInstanceOf(LogCleaningAbortedException.class);
        assertThat(time.milliseconds() - startMs).isEqualTo(Throttler.SLEEP_SLICE_MS);

        throttler.updateDesiredRatePerSec(1e9);
        time.advance(Throttler.CHECK_INTERVAL_MS + 1);
        assertThat(throttler.maybeThrottle(1_000_000, Cleaner.AbortCheck.NEVER, TP)).isZero();
        assertThatThrownBy(() -> throttler.updateDesiredRatePerSec(0)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("ratePerSec=0");
    }
}
