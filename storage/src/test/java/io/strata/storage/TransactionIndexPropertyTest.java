package io.strata.storage;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random aborted transactions (increasing markers, first offsets up to 50 before the marker,
 * non-decreasing LSOs not past the marker) checked against a list model for
 * {@code collectAbortedTxns} over random ranges and for {@code truncateTo}, across a reopen.
 */
class TransactionIndexPropertyTest {

    record Shape(int markerGap, int length, int lsoLag) {
    }

    @Provide
    Arbitrary<List<Shape>> transactions() {
        return Arbitraries.integers().between(1, 20)
            .flatMap(gap -> Arbitraries.integers().between(0, 50)
                .flatMap(length -> Arbitraries.integers().between(0, 60).map(lag -> new Shape(gap, length, lag))))
            .list().ofMaxSize(300);
    }

    @Property(tries = 200)
    void collectAndTruncateAgreeWithAListModel(@ForAll("transactions") List<Shape> shapes,
                                               @ForAll @LongRange(min = 0, max = 3000) long fetchOffset,
                                               @ForAll @LongRange(min = 0, max = 400) long rangeLength,
                                               @ForAll @LongRange(min = 0, max = 3000) long truncateOffset) throws IOException {
        List<AbortedTxn> model = build(shapes);
        try (ScratchDirectory dir = new ScratchDirectory()) {
            try (TransactionIndex index = new TransactionIndex(0, dir.resolve("t.txnindex"))) {
                for (AbortedTxn txn : model) {
                    index.append(txn);
                }
            }
            try (TransactionIndex index = new TransactionIndex(0, dir.resolve("t.txnindex"))) {
                index.sanityCheck();
                assertThat(index.allAbortedTxns()).isEqualTo(model);
                long upperBound = fetchOffset + rangeLength;
                assertThat(index.collectAbortedTxns(fetchOffset, upperBound)).isEqualTo(expectedCollect(model, fetchOffset, upperBound));

                index.truncateTo(truncateOffset);
                model.removeIf(txn -> txn.lastOffset() >= truncateOffset);
                assertThat(index.allAbortedTxns()).isEqualTo(model);
            }
        }
    }

    private static List<AbortedTxn> build(List<Shape> shapes) {
        List<AbortedTxn> txns = new ArrayList<>();
        long marker = 0;
        long lastStableOffset = 0;
        for (int i = 0; i < shapes.size(); i++) {
            Shape shape = shapes.get(i);
            marker += shape.markerGap();
            long firstOffset = Math.max(0, marker - shape.length());
            lastStableOffset = Math.max(lastStableOffset, Math.max(0, marker - shape.lsoLag()));
            txns.add(new AbortedTxn(i, firstOffset, marker, lastStableOffset));
        }
        return txns;
    }

    private static TxnIndexSearchResult expectedCollect(List<AbortedTxn> model, long fetchOffset, long upperBound) {
        List<AbortedTxn> overlapping = new ArrayList<>();
        for (AbortedTxn txn : model) {
            boolean overlaps = !(txn.lastOffset() < fetchOffset || txn.firstOffset() >= upperBound);
            if (overlaps) {
                overlapping.add(txn);
            }
            if (txn.lastStableOffset() >= upperBound) {
                return new TxnIndexSearchResult(overlapping, true);
            }
        }
        return new TxnIndexSearchResult(overlapping, false);
    }
}
