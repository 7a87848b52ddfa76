package io.strata.chaos.net;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LatencyTest {
    @Test
    void sameSeedGivesSameDelaysWithinBounds() {
        Latency latency = new Latency(20, 10);
        Random first = new Random(42);
        Random second = new Random(42);
        boolean varied = false;
        long previous = -1;
        for (int i = 0; i < 1000; i++) {
            long nanos = latency.nextNanos(first);
            assertThat(latency.nextNanos(second)).isEqualTo(nanos);
            assertThat(nanos).isBetween(20_000_000L, 30_000_000L);
            varied |= previous != -1 && previous != nanos;
            previous = nanos;
        }
        assertThat(varied).as("jitter varies the delay").isTrue();
    }

    @Test
    void otherSeedGivesOtherDelays() {
        Latency latency = new Latency(0, 100);
        assertThat(latency.nextNanos(new Random(1))).isNotEqualTo(latency.nextNanos(new Random(2)));
    }

    @Test
    void refusesNegativeOrHugeLatency() {
        assertThatThrownBy(() -> new Latency(-1, 0)).hasMessageContaining("delayMs=-1");
        assertThatThrownBy(() -> new Latency(Latency.DELAY_MS_MAX, 1)).hasMessageContaining("jitterMs=1");
    }
}
