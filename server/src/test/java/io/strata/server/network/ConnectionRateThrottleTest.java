package io.strata.server.network;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The token bucket of max.connection.creation.rate, on a clock the test moves. */
class ConnectionRateThrottleTest {
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final AtomicInteger rate = new AtomicInteger(Integer.MAX_VALUE);
    private final ConnectionRateThrottle throttle = new ConnectionRateThrottle(rate::get, nanos::get);

    private void advanceMs(long ms) {
        nanos.addAndGet(ms * 1_000_000L);
    }

    @Test
    void kafkasDefaultNeverThrottles() {
        for (int i = 0; i < 10_000; i++) {
            assertThat(throttle.recordAndGetThrottleMs()).isZero();
        }
    }

    @Test
    void aSecondsBurstThenOneConnectionPerIntervalAndTheDeficitRefills() {
        rate.set(4);
        for (int i = 0; i < 4; i++) {
            assertThat(throttle.recordAndGetThrottleMs()).isZero();
        }
        // The fifth is accepted but the next must wait a quarter of a second; a sixth in the same read loop doubles the wait.
        assertThat(throttle.recordAndGetThrottleMs()).isEqualTo(250);
        assertThat(throttle.recordAndGetThrottleMs()).isEqualTo(500);
        advanceMs(300);
        assertThat(throttle.remainingThrottleMs()).isEqualTo(200);
        advanceMs(200);
        assertThat(throttle.remainingThrottleMs()).isZero();
        advanceMs(10_000);
        // Refilled to the burst, never past it.
        for (int i = 0; i < 4; i++) {
            assertThat(throttle.recordAndGetThrottleMs()).isZero();
        }
        assertThat(throttle.recordAndGetThrottleMs()).isPositive();
    }

    @Test
    void aNewRateStartsWithAFullBurstAndLiftingItEndsTheWait() {
        rate.set(1);
        throttle.recordAndGetThrottleMs();
        assertThat(throttle.recordAndGetThrottleMs()).isEqualTo(1000);
        rate.set(2);
        assertThat(throttle.remainingThrottleMs()).isZero();
        rate.set(Integer.MAX_VALUE);
        assertThat(throttle.recordAndGetThrottleMs()).isZero();
    }
}
