package io.strata.storage;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One appender thread, several lookup threads. Forbidden outcomes, any of which is recorded as a
 * failure:
 * <ul>
 *   <li>a lookup returning an entry whose position does not belong to its offset (a torn or
 *       half-published entry);</li>
 *   <li>a lookup returning an offset above its target;</li>
 *   <li>a lookup at or below {@code lastOffset()} (read before the lookup) that misses the entry
 *       the appender had already published;</li>
 *   <li>any exception.</li>
 * </ul>
 * Positions encode their own relative offset ({@code position = relativeOffset * 16 + generation})
 * so a reader can check any entry it sees; each truncation starts a new generation with a
 * different offset spacing, so a slot rewritten after truncation holds different values.
 */
class OffsetIndexConcurrencyTest {
    private static final int READERS = 2;
    private static final int GENERATIONS = 60;
    private static final int APPENDS_PER_GENERATION = 2000;

    @TempDir
    Path dir;

    private final AtomicLong truncationsStarted = new AtomicLong();
    private final AtomicLong truncationsFinished = new AtomicLong();

    @Test
    void lookupsConcurrentWithAppendsAndTruncationsOnlySeeWholePublishedEntries() throws Exception {
        try (OffsetIndex index = new OffsetIndex(dir.resolve("concurrent.index"), 0, 8 * 200_000, true)) {
            AtomicBoolean done = new AtomicBoolean();
            AtomicLong lookups = new AtomicLong();
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            List<Thread> readers = new ArrayList<>();
            for (int r = 0; r < READERS; r++) {
                Random random = new Random(r);
                Thread reader = new Thread(() -> readUntilDone(index, done, lookups, failures, random), "reader-" + r);
                readers.add(reader);
                reader.start();
            }
            try {
                appendAndTruncate(index);
            } finally {
                done.set(true);
                for (Thread reader : readers) {
                    reader.join();
                }
            }
            assertThat(failures).isEmpty();
            assertThat(lookups.get()).isPositive();
        }
    }

    private void appendAndTruncate(OffsetIndex index) {
        Random random = new Random(42);
        for (int generation = 1; generation <= GENERATIONS; generation++) {
            int spacing = 1 + generation % 7;
            for (int i = 0; i < APPENDS_PER_GENERATION; i++) {
                long offset = index.lastOffset() + spacing;
                index.append(offset, positionFor(offset, generation));
            }
            truncationsStarted.incrementAndGet();
            index.truncateTo(random.nextInt((int) index.lastOffset() + 1));
            truncationsFinished.incrementAndGet();
        }
    }

    private static int positionFor(long relativeOffset, int generation) {
        return (int) (relativeOffset * 16 + generation % 16);
    }

    private void readUntilDone(OffsetIndex index, AtomicBoolean done, AtomicLong lookups,
                               ConcurrentLinkedQueue<String> failures, Random random) {
        try {
            while (!done.get() && failures.isEmpty()) {
                long finishedBefore = truncationsFinished.get();
                long published = index.lastOffset();
                long target = (long) (random.nextDouble() * (published + 10));
                OffsetPosition found = index.lookup(target);
                boolean noTruncationOverlapped = truncationsStarted.get() == finishedBefore;
                check(target, published, noTruncationOverlapped, found, failures);
                lookups.incrementAndGet();
            }
        } catch (Throwable t) {
            failures.add("reader threw " + t);
        }
    }

    private static void check(long target, long published, boolean noTruncationOverlapped, OffsetPosition found,
                              ConcurrentLinkedQueue<String> failures) {
        if (found.offset() > target) {
            failures.add("lookup(" + target + ") returned a larger offset " + found);
        }
        if (found.position() >>> 4 != found.offset()) {
            failures.add("lookup(" + target + ") returned a torn entry " + found);
        }
        if (noTruncationOverlapped && target >= published && found.offset() < published) {
            failures.add("lookup(" + target + ") missed the published entry at lastOffset=" + published + ": found " + found);
        }
    }
}
