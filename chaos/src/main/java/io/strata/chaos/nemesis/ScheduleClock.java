package io.strata.chaos.nemesis;

/** Time for the {@link NemesisSchedule}: the system's, or a fake that tests advance without waiting. */
public interface ScheduleClock {

    long nanoTime();

    long wallMs();

    /** Waits {@code nanos}; the period lengths are the schedule's own seeded choice, not a wait for a condition. */
    void sleepNanos(long nanos) throws InterruptedException;

    /** The system clocks. */
    ScheduleClock SYSTEM = new ScheduleClock() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public long wallMs() {
            return System.currentTimeMillis();
        }

        @Override
        public void sleepNanos(long nanos) throws InterruptedException {
            if (nanos > 0) {
                Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
            }
        }
    };
}
