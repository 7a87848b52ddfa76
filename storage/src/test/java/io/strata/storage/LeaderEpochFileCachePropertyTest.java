package io.strata.storage;

import io.strata.storage.checkpoint.LeaderEpochCheckpointFile;
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
 * Random assigns and truncations against a plain list model. After every step: the cache equals
 * the model, the invariant holds (epochs and start offsets strictly increase), the checkpoint
 * file holds the same entries, and {@code endOffsetFor} agrees with a linear-scan reference for
 * every epoch in range.
 */
class LeaderEpochFileCachePropertyTest {

    sealed interface Op permits Assign, TruncateFromEnd, TruncateFromStart {
    }

    record Assign(int epoch, long startOffset) implements Op {
    }

    record TruncateFromEnd(long endOffset) implements Op {
    }

    record TruncateFromStart(long startOffset) implements Op {
    }

    @Provide
    Arbitrary<List<Op>> operations() {
        Arbitrary<Op> assign = Arbitraries.integers().between(0, 30)
            .flatMap(epoch -> Arbitraries.longs().between(0, 300).map(offset -> new Assign(epoch, offset)));
        Arbitrary<Op> fromEnd = Arbitraries.longs().between(-1, 300).map(TruncateFromEnd::new);
        Arbitrary<Op> fromStart = Arbitraries.longs().between(0, 300).map(TruncateFromStart::new);
        return Arbitraries.frequencyOf(Tuple.of(80, assign), Tuple.of(10, fromEnd), Tuple.of(10, fromStart)).list().ofMaxSize(60);
    }

    @Property(tries = 300)
    void cacheAgreesWithAListModel(@ForAll("operations") List<Op> ops) throws IOException {
        try (ScratchDirectory dir = new ScratchDirectory()) {
            LeaderEpochCheckpointFile checkpoint = new LeaderEpochCheckpointFile(dir.resolve("leader-epoch-checkpoint"));
            LeaderEpochFileCache cache = new LeaderEpochFileCache(new TopicPartition("t", 0), checkpoint);
            List<EpochEntry> model = new ArrayList<>();
            for (Op op : ops) {
                apply(cache, model, op);
                assertThat(cache.epochEntries()).isEqualTo(model);
                assertThat(checkpoint.read()).isEqualTo(model);
                checkInvariant(model);
                for (int epoch = -1; epoch <= 32; epoch++) {
                    assertThat(cache.endOffsetFor(epoch, 1000)).as("endOffsetFor(%d)", epoch).isEqualTo(expectedEndOffset(model, epoch, 1000));
                }
            }
            assertThat(new LeaderEpochFileCache(new TopicPartition("t", 0), checkpoint).epochEntries()).isEqualTo(model);
        }
    }

    private static void apply(LeaderEpochFileCache cache, List<EpochEntry> model, Op op) {
        if (op instanceof Assign assign) {
            cache.assign(assign.epoch(), assign.startOffset());
            modelAssign(model, new EpochEntry(assign.epoch(), assign.startOffset()));
        } else if (op instanceof TruncateFromEnd end) {
            cache.truncateFromEnd(end.endOffset());
            if (end.endOffset() >= 0) {
                model.removeIf(entry -> entry.startOffset() >= end.endOffset());
            }
        } else if (op instanceof TruncateFromStart start) {
            cache.truncateFromStart(start.startOffset());
            modelTruncateFromStart(model, start.startOffset());
        }
    }

    private static void modelAssign(List<EpochEntry> model, EpochEntry entry) {
        EpochEntry latest = model.isEmpty() ? null : model.get(model.size() - 1);
        if (latest != null && latest.epoch() == entry.epoch() && entry.startOffset() >= latest.startOffset()) {
            return;
        }
        while (!model.isEmpty()) {
            EpochEntry last = model.get(model.size() - 1);
            if (last.epoch() < entry.epoch() && last.startOffset() < entry.startOffset()) {
                break;
            }
            model.remove(model.size() - 1);
        }
        model.add(entry);
    }

    private static void modelTruncateFromStart(List<EpochEntry> model, long startOffset) {
        EpochEntry lastBefore = null;
        while (!model.isEmpty() && model.get(0).startOffset() <= startOffset) {
            lastBefore = model.remove(0);
        }
        if (lastBefore != null) {
            model.add(0, new EpochEntry(lastBefore.epoch(), startOffset));
        }
    }

    private static void checkInvariant(List<EpochEntry> model) {
        for (int i = 1; i < model.size(); i++) {
            assertThat(model.get(i).epoch()).isGreaterThan(model.get(i - 1).epoch());
            assertThat(model.get(i).startOffset()).isGreaterThan(model.get(i - 1).startOffset());
        }
    }

    /** Reference answer by linear scan. */
    private static EpochOffset expectedEndOffset(List<EpochEntry> model, int requestedEpoch, long logEndOffset) {
        if (requestedEpoch == LeaderEpochFileCache.UNDEFINED_EPOCH || model.isEmpty()) {
            return EpochOffset.UNDEFINED;
        }
        EpochEntry latest = model.get(model.size() - 1);
        if (latest.epoch() == requestedEpoch) {
            return new EpochOffset(requestedEpoch, logEndOffset);
        }
        if (requestedEpoch > latest.epoch()) {
            return EpochOffset.UNDEFINED;
        }
        int floorEpoch = requestedEpoch;
        for (int i = 0; i < model.size(); i++) {
            EpochEntry entry = model.get(i);
            if (entry.epoch() > requestedEpoch) {
                return new EpochOffset(floorEpoch, entry.startOffset());
            }
            floorEpoch = entry.epoch();
        }
        throw new AssertionError("unreachable: latest epoch is above the requested one");
    }
}
