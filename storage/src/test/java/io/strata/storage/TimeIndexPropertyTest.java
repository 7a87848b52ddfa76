package io.strata.storage;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random {@code maybeAppend}s (timestamps that go up, stay or go down), lookups, truncations and
 * reopenings against a list model. Checks the monotonicity invariant (timestamps strictly
 * increase, offsets never decrease) and every lookup.
 */
class TimeIndexPropertyTest {

    sealed interface Op permits Append, Lookup, Truncate, Reopen {
    }

    record Append(long timestampDelta, int offsetGap) implements Op {
    }

    record Lookup(long timestampDelta) implements Op {
    }

    record Truncate(long offsetDelta) implements Op {
    }

    record Reopen() implements Op {
    }

    @Provide
    Arbitrary<List<Op>> operations() {
        Arbitrary<Op> append = Arbitraries.longs().between(-20, 50)
            .flatMap(delta -> Arbitraries.integers().between(0, 20).map(gap -> new Append(delta, gap)));
        Arbitrary<Op> lookup = Arbitraries.longs().between(-2000, 20).map(Lookup::new);
        Arbitrary<Op> truncate = Arbitraries.longs().between(-500, 5).map(Truncate::new);
        return Arbitraries.frequencyOf(
            Tuple.of(60, append),
            Tuple.of(25, lookup),
            Tuple.of(6, truncate),
            Tuple.of(3, Arbitraries.just(new Reopen()))
        ).list().ofMaxSize(600);
    }

    @Property(tries = 200)
    void timeIndexAgreesWithAListOfEntries(@ForAll("operations") List<Op> ops) throws IOException {
        long baseOffset = 10_000;
        int maxEntries = 3000;
        try (ScratchDirectory dir = new ScratchDirectory()) {
            TimeIndex index = new TimeIndex(dir.resolve("t.timeindex"), baseOffset, maxEntries * TimeIndex.ENTRY_SIZE_BYTES, true);
            List<TimestampOffset> model = new ArrayList<>();
            long timestamp = 1_000;
            long offset = baseOffset;
            try {
                for (Op op : ops) {
                    if (op instanceof Append append) {
                        timestamp += append.timestampDelta();
                        offset += append.offsetGap();
                        index.maybeAppend(timestamp, offset);
                        if (model.isEmpty() ? timestamp > TimeIndex.NO_TIMESTAMP : timestamp > last(model).timestamp()) {
                            model.add(new TimestampOffset(timestamp, offset));
                        }
                    } else if (op instanceof Lookup lookup) {
                        long target = timestamp + lookup.timestampDelta();
                        assertThat(index.lookup(target)).as("lookup(%d)", target).isEqualTo(expectedLookup(model, target, baseOffset));
                    } else if (op instanceof Truncate truncate) {
                        long target = offset + truncate.offsetDelta();
                        index.truncateTo(target);
                        model.removeIf(entry -> entry.offset() >= target);
                        offset = Math.max(baseOffset, Math.min(offset, target));
                    } else {
                        index.close();
                        index = new TimeIndex(dir.resolve("t.timeindex"), baseOffset, maxEntries * TimeIndex.ENTRY_SIZE_BYTES, true);
                        index.sanityCheck();
                    }
                    assertThat(index.entries()).isEqualTo(model.size());
                    assertThat(index.lastEntry()).isEqualTo(model.isEmpty() ? new TimestampOffset(-1, baseOffset) : last(model));
                }
                for (int slot = 0; slot < model.size(); slot++) {
                    assertThat(index.entry(slot)).isEqualTo(model.get(slot));
                    if (slot > 0) {
                        assertThat(model.get(slot).timestamp()).isGreaterThan(model.get(slot - 1).timestamp());
                        assertThat(model.get(slot).offset()).isGreaterThanOrEqualTo(model.get(slot - 1).offset());
                    }
                }
            } finally {
                index.close();
            }
        }
    }

    private static TimestampOffset last(List<TimestampOffset> model) {
        return model.get(model.size() - 1);
    }

    private static TimestampOffset expectedLookup(List<TimestampOffset> model, long target, long baseOffset) {
        TimestampOffset found = new TimestampOffset(TimeIndex.NO_TIMESTAMP, baseOffset);
        for (TimestampOffset entry : model) {
            if (entry.timestamp() <= target) {
                found = entry;
            }
        }
        return found;
    }
}
