package io.strata.server.metrics;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HistogramTest {
    @Test
    void observationsLandInTheFirstBucketWhoseBoundCoversThem() {
        Histogram histogram = new Histogram(new long[] {1, 5, 10});
        for (long value : new long[] {0, 1, 3, 12}) {
            histogram.record(value);
        }
        Histogram.Snapshot snapshot = histogram.snapshot();
        assertThat(snapshot.counts()).containsExactly(2, 1, 0, 1);
        assertThat(snapshot.count()).isEqualTo(4);
        assertThat(snapshot.sum()).isEqualTo(16);
        assertThat(snapshot.cumulative(1)).isEqualTo(3);
        assertThat(snapshot.cumulative(3)).isEqualTo(4);
    }

    @Test
    void boundsAreInclusiveAtEveryEdge() {
        Histogram histogram = Histogram.latency();
        long[] bounds = histogram.snapshot().bounds();
        for (int i = 0; i < bounds.length; i++) {
            assertThat(histogram.bucketIndex(bounds[i])).isEqualTo(i);
            assertThat(histogram.bucketIndex(bounds[i] + 1)).isEqualTo(i + 1);
        }
        assertThat(histogram.bucketIndex(Long.MAX_VALUE)).isEqualTo(bounds.length);
    }

    @Test
    void aNegativeDurationCountsAsZero() {
        Histogram histogram = new Histogram(new long[] {1});
        histogram.record(-5);
        assertThat(histogram.snapshot().counts()).containsExactly(1, 0);
        assertThat(histogram.snapshot().sum()).isZero();
    }

    @Test
    void boundsMustIncrease() {
        assertThatThrownBy(() -> new Histogram(new long[] {5, 5})).hasMessageContaining("increase strictly");
        assertThatThrownBy(() -> new Histogram(new long[0])).hasMessageContaining("1 to");
    }

    @Test
    void concurrentObservationsAreAllCounted() throws Exception {
        Histogram histogram = Histogram.latency();
        int threads = 4;
        int perThread = 100_000;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int seed = t;
            Thread worker = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    histogram.record((long) (i % 1000) * 1_000 + seed);
                }
            });
            worker.start();
            workers.add(worker);
        }
        start.countDown();
        for (Thread worker : workers) {
            worker.join();
        }
        Histogram.Snapshot snapshot = histogram.snapshot();
        assertThat(snapshot.count()).isEqualTo((long) threads * perThread);
        assertThat(snapshot.cumulative(snapshot.counts().length - 1)).isEqualTo(snapshot.count());
    }
}
