package io.strata.storage;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Random appends, lookups, truncations, trims and reopenings against a sorted map. After every
 * step the index must agree with the model on every lookup the step makes and on its size.
 */
class OffsetIndexPropertyTest {

    sealed interface Op permits Append, BulkAppend, Lookup, Truncate, Reopen, Trim {
    }

    /** Many appends at once, so that indexes grow past the warm section (1024 entries). */
    record BulkAppend(int count, int seed) implements Op {
    }

    /** Appends at lastOffset + gap; gap 0 must be refused as out of order. */
    record Append(int gap, int positionGap) implements Op {
    }

    /** Looks up lastOffset + delta (delta may be negative). */
    record Lookup(long delta) implements Op {
    }

    record Truncate(long delta) implements Op {
    }

    record Reopen(boolean writable) implements Op {
    }

    record Trim() implements Op {
    }

    @Provide
    Arbitrary<List<Op>> operations() {
        Arbitrary<Op> append = Arbitraries.integers().between(0, 50)
            .flatMap(gap -> Arbitraries.integers().between(1, 5000).map(positionGap -> new Append(gap, positionGap)));
        Arbitrary<Op> lookup = Arbitraries.longs().between(-3000, 100).map(Lookup::new);
        Arbitrary<Op> truncate = Arbitraries.longs().between(-2000, 10).map(Truncate::new);
        Arbitrary<Op> reopen = Arbitraries.of(true, false).map(Reopen::new);
        Arbitrary<Op> trim = Arbitraries.just(new Trim());
        Arbitrary<Op> bulk = Arbitraries.integers().between(1, 1500)
            .flatMap(count -> Arbitraries.integers().map(seed -> new BulkAppend(count, seed)));
        return Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(60, append),
            net.jqwik.api.Tuple.of(25, lookup),
            net.jqwik.api.Tuple.of(5, truncate),
            net.jqwik.api.Tuple.of(3, reopen),
            net.jqwik.api.Tuple.of(2, trim),
            net.jqwik.api.Tuple.of(1, bulk)
        ).list().ofMaxSize(400);
    }

    @Property(tries = 200)
    void indexAgreesWithASortedMap(@ForAll("operations") List<Op> ops,
                                   @ForAll("baseOffsets") long baseOffset,
                                   @ForAll("maxEntries") int maxEntries) throws IOException {
        try (ScratchDirectory dir = new ScratchDirectory()) {
            Model model = new Model(dir.resolve("segment.index"), baseOffset, maxEntries * OffsetIndex.ENTRY_SIZE_BYTES);
            try {
                for (Op op : ops) {
                    model.apply(op);
                    model.checkSize();
                }
                model.checkEveryLookup();
            } finally {
                model.index.close();
            }
        }
    }

    @Provide
    Arbitrary<Long> baseOffsets() {
        return Arbitraries.oneOf(Arbitraries.just(0L), Arbitraries.longs().between(0, 1L << 50));
    }

    @Provide
    Arbitrary<Integer> maxEntries() {
        return Arbitraries.oneOf(Arbitraries.integers().between(1, 20), Arbitraries.integers().between(1000, 3000));
    }

    private static final class Model {
        final Path file;
        final long baseOffset;
        final int maxIndexSizeBytes;
        final TreeMap<Long, Integer> entries = new TreeMap<>();
        OffsetIndex index;
        boolean writable = true;

        Model(Path file, long baseOffset, int maxIndexSizeBytes) throws IOException {
            this.file = file;
            this.baseOffset = baseOffset;
            this.maxIndexSizeBytes = maxIndexSizeBytes;
            this.index = new OffsetIndex(file, baseOffset, maxIndexSizeBytes, true);
        }

        long lastOffset() {
            return entries.isEmpty() ? baseOffset : entries.lastKey();
        }

        int lastPosition() {
            return entries.isEmpty() ? 0 : entries.lastEntry().getValue();
        }

        void apply(Op op) throws IOException {
            if (op instanceof Append append) {
                append(append);
            } else if (op instanceof BulkAppend bulk) {
                java.util.Random random = new java.util.Random(bulk.seed());
                for (int i = 0; i < bulk.count(); i++) {
                    append(new Append(1 + random.nextInt(3), 1 + random.nextInt(100)));
                }
            } else if (op instanceof Lookup lookup) {
                checkLookup(lastOffset() + lookup.delta());
            } else if (op instanceof Truncate truncate) {
                long target = lastOffset() + truncate.delta();
                if (writable) {
                    index.truncateTo(target);
                    entries.tailMap(target, true).clear();
                } else {
                    assertThatThrownBy(() -> index.truncateTo(target)).isInstanceOf(IllegalStateException.class);
                }
            } else if (op instanceof Reopen reopen) {
                index.close();
                assertThat(Files.size(file)).isEqualTo((long) entries.size() * OffsetIndex.ENTRY_SIZE_BYTES);
                writable = reopen.writable();
                index = new OffsetIndex(file, baseOffset, maxIndexSizeBytes, writable);
                index.sanityCheck();
            } else if (op instanceof Trim && writable) {
                index.trimToValidSize();
                assertThat(index.isFull()).isTrue();
                index.resize(maxIndexSizeBytes);
            }
        }

        private void append(Append append) {
            long offset = entries.isEmpty() ? baseOffset + append.gap() : lastOffset() + append.gap();
            int position = lastPosition() + append.positionGap();
            int maxEntries = Math.max(maxIndexSizeBytes / OffsetIndex.ENTRY_SIZE_BYTES, entries.size());
            if (!writable) {
                assertThatThrownBy(() -> index.append(offset, position)).isInstanceOf(IllegalStateException.class);
            } else if (entries.size() >= maxEntries) {
                assertThat(index.isFull()).isTrue();
                assertThatThrownBy(() -> index.append(offset, position)).isInstanceOf(IllegalStateException.class);
            } else if (!entries.isEmpty() && append.gap() == 0) {
                assertThatThrownBy(() -> index.append(offset, position)).isInstanceOf(InvalidOffsetException.class);
            } else {
                index.append(offset, position);
                entries.put(offset, position);
            }
        }

        void checkLookup(long target) {
            Map.Entry<Long, Integer> floor = entries.floorEntry(target);
            OffsetPosition expected = floor == null ? new OffsetPosition(baseOffset, 0) : new OffsetPosition(floor.getKey(), floor.getValue());
            assertThat(index.lookup(target)).as("lookup(%d)", target).isEqualTo(expected);
        }

        void checkSize() {
            assertThat(index.entries()).isEqualTo(entries.size());
            assertThat(index.lastOffset()).isEqualTo(lastOffset());
            assertThat(index.sizeInBytes()).isEqualTo(entries.size() * OffsetIndex.ENTRY_SIZE_BYTES);
        }

        void checkEveryLookup() {
            checkLookup(Long.MIN_VALUE);
            checkLookup(Long.MAX_VALUE);
            int slot = 0;
            for (Map.Entry<Long, Integer> entry : entries.entrySet()) {
                assertThat(index.entry(slot++)).isEqualTo(new OffsetPosition(entry.getKey(), entry.getValue()));
                checkLookup(entry.getKey() - 1);
                checkLookup(entry.getKey());
                checkLookup(entry.getKey() + 1);
            }
        }
    }
}
