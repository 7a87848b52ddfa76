package io.strata.server.network;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RequestMemoryPoolTest {
    /** Records its grants; a reservation is granted at most once. */
    private static final class RecordingWaiter implements RequestMemoryPool.Waiter {
        final String name;
        final List<String> log;
        int grantedBytes = -1;

        RecordingWaiter(String name, List<String> log) {
            this.name = name;
            this.log = log;
        }

        @Override
        public void onGranted(int bytes) {
            assertThat(grantedBytes).as("granted twice: %s", name).isEqualTo(-1);
            grantedBytes = bytes;
            log.add(name);
        }
    }

    @Test
    void grantsWhileReservationsFitAndQueuesTheRest() {
        RequestMemoryPool pool = RequestMemoryPool.bounded(100, 60);
        List<String> log = new ArrayList<>();
        assertThat(pool.tryReserve(60, new RecordingWaiter("a", log))).isTrue();
        assertThat(pool.tryReserve(40, new RecordingWaiter("b", log))).isTrue();
        RecordingWaiter c = new RecordingWaiter("c", log);
        assertThat(pool.tryReserve(1, c)).isFalse();
        assertThat(pool.usedBytes()).isEqualTo(100);
        assertThat(pool.availableBytes()).isZero();
        assertThat(pool.waitingCount()).isEqualTo(1);

        pool.release(40);
        assertThat(c.grantedBytes).isEqualTo(1);
        assertThat(pool.usedBytes()).isEqualTo(61);
        assertThat(pool.waitingCount()).isZero();
        pool.release(60);
        pool.release(1);
        assertThat(pool.usedBytes()).isZero();
        assertThat(pool.peakUsedBytes()).isEqualTo(100);
        assertThat(pool.waitsTotal()).isEqualTo(1);
    }

    @Test
    void waitersAreGrantedInArrivalOrderSoALargeRequestIsNotStarvedBySmallOnes() {
        RequestMemoryPool pool = RequestMemoryPool.bounded(100, 100);
        List<String> log = new ArrayList<>();
        assertThat(pool.tryReserve(90, new RecordingWaiter("first", log))).isTrue();
        RecordingWaiter large = new RecordingWaiter("large", log);
        RecordingWaiter small = new RecordingWaiter("small", log);
        assertThat(pool.tryReserve(100, large)).isFalse();
        // 10 bytes are free, but the large reservation is ahead: the small one waits behind it.
        assertThat(pool.tryReserve(5, small)).isFalse();
        assertThat(log).isEmpty();

        pool.release(90);
        assertThat(log).containsExactly("large");
        pool.release(100);
        assertThat(log).containsExactly("large", "small");
        pool.release(5);
        assertThat(pool.usedBytes()).isZero();
    }

    @Test
    void oneReleaseGrantsEveryWaiterThatNowFits() {
        RequestMemoryPool pool = RequestMemoryPool.bounded(100, 100);
        List<String> log = new ArrayList<>();
        assertThat(pool.tryReserve(100, new RecordingWaiter("all", log))).isTrue();
        for (String name : List.of("w1", "w2", "w3")) {
            assertThat(pool.tryReserve(30, new RecordingWaiter(name, log))).isFalse();
        }
        assertThat(pool.tryReserve(30, new RecordingWaiter("w4", log))).isFalse();
        pool.release(100);
        assertThat(log).containsExactly("w1", "w2", "w3");
        assertThat(pool.usedBytes()).isEqualTo(90);
        assertThat(pool.waitingCount()).isEqualTo(1);
    }

    @Test
    void aCancelledWaiterIsNeverGrantedAndACancelAfterTheGrantSaysSo() {
        RequestMemoryPool pool = RequestMemoryPool.bounded(10, 10);
        List<String> log = new ArrayList<>();
        assertThat(pool.tryReserve(10, new RecordingWaiter("holder", log))).isTrue();
        RecordingWaiter cancelled = new RecordingWaiter("cancelled", log);
        RecordingWaiter granted = new RecordingWaiter("granted", log);
        assertThat(pool.tryReserve(10, cancelled)).isFalse();
        assertThat(pool.tryReserve(10, granted)).isFalse();

        assertThat(pool.cancel(cancelled)).isTrue();
        pool.release(10);
        assertThat(log).containsExactly("granted");
        // Too late: the bytes are the waiter's now, and it must give them back.
        assertThat(pool.cancel(granted)).isFalse();
        assertThat(pool.usedBytes()).isEqualTo(10);
        pool.release(10);
        assertThat(pool.usedBytes()).isZero();
    }

    @Test
    void zeroByteReservationsAreGrantedEvenWhenFull() {
        RequestMemoryPool pool = RequestMemoryPool.bounded(10, 10);
        List<String> log = new ArrayList<>();
        assertThat(pool.tryReserve(10, new RecordingWaiter("holder", log))).isTrue();
        assertThat(pool.tryReserve(0, new RecordingWaiter("empty", log))).isTrue();
        pool.release(0);
        pool.release(10);
        assertThat(pool.usedBytes()).isZero();
    }

    @Test
    void misuseFailsFastWithTheValuesInvolved() {
        assertThatThrownBy(() -> RequestMemoryPool.bounded(99, 100)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("capacityBytes=99").hasMessageContaining("maxReservationBytes=100");
        assertThatThrownBy(() -> RequestMemoryPool.bounded(0, 0)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("capacityBytes=0");
        RequestMemoryPool pool = RequestMemoryPool.bounded(100, 50);
        RecordingWaiter waiter = new RecordingWaiter("w", new ArrayList<>());
        assertThatThrownBy(() -> pool.tryReserve(51, waiter)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bytes=51");
        assertThatThrownBy(() -> pool.tryReserve(-1, waiter)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bytes=-1");
        assertThat(pool.tryReserve(20, waiter)).isTrue();
        assertThatThrownBy(() -> pool.release(21)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("bytes=21").hasMessageContaining("usedBytes=20");
    }

    @Test
    void anUnboundedPoolNeverWaitsAndStillCounts() {
        RequestMemoryPool pool = RequestMemoryPool.unbounded(1 << 20);
        RecordingWaiter waiter = new RecordingWaiter("w", new ArrayList<>());
        for (int i = 0; i < 1000; i++) {
            assertThat(pool.tryReserve(1 << 20, waiter)).isTrue();
        }
        assertThat(pool.isBounded()).isFalse();
        assertThat(pool.usedBytes()).isEqualTo(1000L << 20);
        assertThat(pool.availableBytes()).isEqualTo(Long.MAX_VALUE - (1000L << 20));
        for (int i = 0; i < 1000; i++) {
            pool.release(1 << 20);
        }
        assertThat(pool.usedBytes()).isZero();
    }

    @Test
    void aWaiterThatThrowsGetsItsBytesTakenBackAndTheNextWaiterIsStillGranted() {
        RequestMemoryPool pool = RequestMemoryPool.bounded(10, 10);
        List<String> log = new ArrayList<>();
        assertThat(pool.tryReserve(10, new RecordingWaiter("holder", log))).isTrue();
        assertThat(pool.tryReserve(10, bytes -> {
            throw new IllegalStateException("broken waiter");
        })).isFalse();
        RecordingWaiter next = new RecordingWaiter("next", log);
        assertThat(pool.tryReserve(10, next)).isFalse();
        pool.release(10);
        assertThat(next.grantedBytes).isEqualTo(10);
        assertThat(pool.usedBytes()).isEqualTo(10);
    }

    /**
     * Threads reserve (waiting for the grant when it does not fit), hold briefly and release, at
     * random sizes. Forbidden outcomes: the pool ever holding more than its capacity, a grant lost
     * (its thread waits forever), given twice or of the wrong size, bytes left reserved at the end.
     */
    @Test
    void concurrentReservationsNeverExceedTheCapacityAndEveryWaiterIsGranted() throws Exception {
        int capacity = 1000;
        int maxReservation = 400;
        RequestMemoryPool pool = RequestMemoryPool.bounded(capacity, maxReservation);
        int threads = 6;
        int rounds = 5000;
        AtomicLong overdrawn = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            long seed = 42 + t;
            Thread thread = new Thread(() -> {
                Random random = new Random(seed);
                try {
                    for (int i = 0; i < rounds; i++) {
                        int bytes = random.nextInt(maxReservation + 1);
                        CountDownLatch granted = new CountDownLatch(1);
                        boolean now = pool.tryReserve(bytes, grantedBytes -> {
                            if (grantedBytes != bytes || granted.getCount() == 0) {
                                failure.compareAndSet(null, new AssertionError("bad grant " + grantedBytes + " for " + bytes));
                            }
                            granted.countDown();
                        });
                        if (!now && !granted.await(30, TimeUnit.SECONDS)) {
                            throw new AssertionError("grant lost: " + pool);
                        }
                        if (pool.usedBytes() > capacity) {
                            overdrawn.incrementAndGet();
                        }
                        for (int spin = random.nextInt(20); spin > 0; spin--) {
                            Thread.yield();
                        }
                        pool.release(bytes);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                } finally {
                    done.countDown();
                }
            }, "pool-stress-" + t);
            thread.start();
        }
        assertThat(done.await(120, TimeUnit.SECONDS)).as("stress threads finished: %s", pool).isTrue();
        assertThat(failure.get()).isNull();
        assertThat(overdrawn.get()).isZero();
        assertThat(pool.peakUsedBytes()).isLessThanOrEqualTo(capacity);
        assertThat(pool.waitsTotal()).as("the stress made reservations wait").isPositive();
        assertThat(pool.usedBytes()).isZero();
        assertThat(pool.waitingCount()).isZero();
    }
}
