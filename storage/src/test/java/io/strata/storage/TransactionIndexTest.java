package io.strata.storage;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TransactionIndexTest {
    private static final long START_OFFSET = 100;

    @TempDir
    Path dir;

    private Path file() {
        return dir.resolve("00000000000000000100.txnindex");
    }

    private TransactionIndex newIndex() throws IOException {
        return new TransactionIndex(START_OFFSET, file());
    }

    @Test
    void theFileIsCreatedByTheFirstAppendOnly() throws IOException {
        try (TransactionIndex index = newIndex()) {
            assertThat(Files.exists(file())).isFalse();
            assertThat(index.allAbortedTxns()).isEmpty();
            assertThat(index.collectAbortedTxns(0, 1000)).isEqualTo(new TxnIndexSearchResult(List.of(), false));
            index.sanityCheck();
            index.flush();
            index.truncateTo(0);
            assertThat(Files.exists(file())).isFalse();

            index.append(new AbortedTxn(7, 100, 110, 100));
            assertThat(Files.size(file())).isEqualTo(34);
        }
    }

    @Test
    void entriesAreStoredInKafkasByteLayoutAndSurviveReopening() throws IOException {
        AbortedTxn first = new AbortedTxn(0x0102030405060708L, 100, 120, 95);
        AbortedTxn second = new AbortedTxn(42, 110, 130, 121);
        try (TransactionIndex index = newIndex()) {
            index.append(first);
            index.append(second);
        }
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file()));
        assertThat(bytes.remaining()).isEqualTo(68);
        assertThat(bytes.getShort()).isEqualTo((short) 0);
        assertThat(bytes.getLong()).isEqualTo(0x0102030405060708L);
        assertThat(bytes.getLong()).isEqualTo(100);
        assertThat(bytes.getLong()).isEqualTo(120);
        assertThat(bytes.getLong()).isEqualTo(95);
        assertThat(bytes.getShort()).isEqualTo((short) 0);

        try (TransactionIndex reopened = newIndex()) {
            reopened.sanityCheck();
            assertThat(reopened.allAbortedTxns()).containsExactly(first, second);
            assertThatThrownBy(() -> reopened.append(new AbortedTxn(1, 125, 130, 125)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lastOffset=130");
            reopened.append(new AbortedTxn(1, 125, 131, 125));
            assertThat(reopened.allAbortedTxns()).hasSize(3);
        }
    }

    @Test
    void appendRejectsOutOfOrderOrInvertedTransactions() throws IOException {
        try (TransactionIndex index = newIndex()) {
            index.append(new AbortedTxn(1, 100, 150, 100));
            assertThatThrownBy(() -> index.append(new AbortedTxn(2, 100, 149, 100)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lastOffset=149").hasMessageContaining("lastOffset=150");
            assertThatThrownBy(() -> index.append(new AbortedTxn(2, 170, 160, 100)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("firstOffset=170");
            assertThat(index.allAbortedTxns()).hasSize(1);
        }
    }

    @Test
    void collectReturnsTransactionsOverlappingTheFetchRange() throws IOException {
        AbortedTxn a = new AbortedTxn(1, 100, 109, 100);
        AbortedTxn b = new AbortedTxn(2, 105, 130, 110);
        AbortedTxn c = new AbortedTxn(3, 140, 150, 131);
        try (TransactionIndex index = newIndex()) {
            index.append(a);
            index.append(b);
            index.append(c);

            assertThat(index.collectAbortedTxns(110, 140).abortedTransactions()).containsExactly(b);
            assertThat(index.collectAbortedTxns(109, 141).abortedTransactions()).containsExactly(a, b, c);
            assertThat(index.collectAbortedTxns(151, 200).abortedTransactions()).isEmpty();
            assertThat(index.collectAbortedTxns(0, 100).abortedTransactions()).isEmpty();
            assertThat(index.collectAbortedTxns(0, 101).abortedTransactions()).containsExactly(a);
        }
    }

    @Test
    void searchIsCompleteOnceAnEntryIsStableBeyondTheUpperBound() throws IOException {
        try (TransactionIndex index = newIndex()) {
            index.append(new AbortedTxn(1, 100, 109, 100));
            index.append(new AbortedTxn(2, 105, 130, 110));
            index.append(new AbortedTxn(3, 140, 150, 131));

            assertThat(index.collectAbortedTxns(100, 110).isComplete()).isTrue();
            assertThat(index.collectAbortedTxns(100, 111).isComplete()).isTrue();
            TxnIndexSearchResult result = index.collectAbortedTxns(100, 125);
            assertThat(result.isComplete()).isTrue();
            assertThat(result.abortedTransactions()).hasSize(2);
            assertThat(index.collectAbortedTxns(100, 132).isComplete()).isFalse();
        }
    }

    /**
     * Producer 1's abort marker at 130 is past the upper bound 120, but producer 2's transaction
     * started at 115 and was still open (LSO 101 at marker 130). Its marker may be in a later
     * segment, so the search must not be reported complete.
     */
    @Test
    void aMarkerPastTheUpperBoundDoesNotCompleteTheSearchWhileOtherTransactionsAreOpen() throws IOException {
        try (TransactionIndex index = newIndex()) {
            index.append(new AbortedTxn(1, 101, 130, 101));
            TxnIndexSearchResult result = index.collectAbortedTxns(100, 120);
            assertThat(result.abortedTransactions()).containsExactly(new AbortedTxn(1, 101, 130, 101));
            assertThat(result.isComplete()).isFalse();
        }
    }

    @Test
    void truncateToDropsEntriesWhoseLastOffsetIsAtOrAboveTheOffset() throws IOException {
        AbortedTxn a = new AbortedTxn(1, 100, 110, 100);
        AbortedTxn b = new AbortedTxn(2, 105, 120, 111);
        AbortedTxn c = new AbortedTxn(3, 115, 130, 121);
        try (TransactionIndex index = newIndex()) {
            index.append(a);
            index.append(b);
            index.append(c);

            index.truncateTo(131);
            assertThat(index.allAbortedTxns()).containsExactly(a, b, c);
            index.truncateTo(120);
            assertThat(index.allAbortedTxns()).containsExactly(a);
            assertThat(Files.size(file())).isEqualTo(34);
            index.append(new AbortedTxn(4, 111, 115, 111));
            assertThat(index.allAbortedTxns()).containsExactly(a, new AbortedTxn(4, 111, 115, 111));
            index.truncateTo(0);
            assertThat(index.allAbortedTxns()).isEmpty();
            index.append(a);
        }
    }

    @Test
    void resetRemovesEveryEntry() throws IOException {
        try (TransactionIndex index = newIndex()) {
            index.append(new AbortedTxn(1, 100, 110, 100));
            index.reset();
            assertThat(index.allAbortedTxns()).isEmpty();
            assertThat(Files.size(file())).isZero();
            index.append(new AbortedTxn(1, 100, 105, 100));
            assertThat(index.allAbortedTxns()).hasSize(1);
        }
    }

    @Test
    void sanityCheckRejectsAnEntryEndingBeforeTheSegmentStarts() throws IOException {
        try (TransactionIndex index = new TransactionIndex(0, file())) {
            index.append(new AbortedTxn(1, 10, 50, 10));
        }
        try (TransactionIndex index = newIndex()) {
            assertThatThrownBy(index::sanityCheck).isInstanceOf(CorruptIndexException.class)
                .hasMessageContaining("startOffset=100");
        }
    }

    @Test
    void aPartialTrailingEntryIsIgnoredByReadsAndReportedBySanityCheck() throws IOException {
        AbortedTxn a = new AbortedTxn(1, 100, 110, 100);
        try (TransactionIndex index = newIndex()) {
            index.append(a);
        }
        Files.write(file(), new byte[] {0, 0, 1}, StandardOpenOption.APPEND);
        try (TransactionIndex index = newIndex()) {
            assertThat(index.allAbortedTxns()).containsExactly(a);
            assertThatThrownBy(index::sanityCheck).isInstanceOf(CorruptIndexException.class).hasMessageContaining("lengthBytes=37");
            index.truncateTo(Long.MAX_VALUE);
            index.sanityCheck();
            assertThat(Files.size(file())).isEqualTo(34);
        }
    }

    @Test
    void anUnknownEntryVersionIsReportedAsCorrupt() throws IOException {
        Files.write(file(), ByteBuffer.allocate(34).putShort((short) 1).putLong(1).putLong(100).putLong(110).putLong(100).array());
        try (TransactionIndex index = newIndex()) {
            assertThatThrownBy(index::allAbortedTxns).isInstanceOf(CorruptIndexException.class).hasMessageContaining("version=1");
            assertThatThrownBy(index::sanityCheck).isInstanceOf(CorruptIndexException.class);
        }
    }

    @Test
    void closedIndexRejectsUseButCanBeRenamedAndDeleted() throws IOException {
        Path renamed = dir.resolve("00000000000000000100.txnindex.deleted");
        TransactionIndex index = newIndex();
        index.append(new AbortedTxn(1, 100, 110, 100));
        index.close();
        index.close();
        assertThatThrownBy(index::allAbortedTxns).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThatThrownBy(() -> index.append(new AbortedTxn(1, 100, 120, 100))).isInstanceOf(IllegalStateException.class);
        index.renameTo(renamed);
        assertThat(index.file()).isEqualTo(renamed);
        assertThat(Files.exists(renamed)).isTrue();
        assertThat(index.deleteIfExists()).isTrue();
        assertThat(index.deleteIfExists()).isFalse();
    }

    @Test
    void renameKeepsAnOpenIndexUsable() throws IOException {
        Path renamed = dir.resolve("renamed.txnindex");
        try (TransactionIndex index = newIndex()) {
            index.append(new AbortedTxn(1, 100, 110, 100));
            index.renameTo(renamed);
            index.append(new AbortedTxn(1, 111, 120, 111));
            assertThat(index.allAbortedTxns()).hasSize(2);
        }
        assertThat(Files.size(renamed)).isEqualTo(68);
    }

    @Test
    void anInterruptedReaderDoesNotBreakTheIndexForOthers() throws Exception {
        try (TransactionIndex index = newIndex()) {
            for (int i = 0; i < 200; i++) {
                index.append(new AbortedTxn(i, 100 + 10L * i, 105 + 10L * i, 100));
            }
            Thread reader = new Thread(() -> {
                Thread.currentThread().interrupt();
                try {
                    index.allAbortedTxns();
                } catch (RuntimeException expected) {
                    // an interrupted read may fail; it must not poison the index
                }
            });
            reader.start();
            reader.join();
            assertThat(index.allAbortedTxns()).hasSize(200);
            index.append(new AbortedTxn(1, 5000, 5005, 100));
            assertThat(index.allAbortedTxns()).hasSize(201);
        }
    }
}
