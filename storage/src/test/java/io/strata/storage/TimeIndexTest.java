package io.strata.storage;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TimeIndexTest {
    private static final long BASE_OFFSET = 500;
    private static final int MAX_INDEX_SIZE_BYTES = 12 * 6;

    @TempDir
    Path dir;

    private Path file() {
        return dir.resolve("00000000000000000500.timeindex");
    }

    private TimeIndex newIndex() throws IOException {
        return new TimeIndex(file(), BASE_OFFSET, MAX_INDEX_SIZE_BYTES, true);
    }

    @Test
    void emptyIndexAnswersNoTimestampAndBaseOffset() throws IOException {
        try (TimeIndex index = newIndex()) {
            assertThat(index.lastEntry()).isEqualTo(new TimestampOffset(TimeIndex.NO_TIMESTAMP, BASE_OFFSET));
            assertThat(index.lookup(Long.MAX_VALUE)).isEqualTo(new TimestampOffset(-1, BASE_OFFSET));
            assertThat(Files.size(file())).isEqualTo(MAX_INDEX_SIZE_BYTES);
        }
    }

    @Test
    void onlyAGrowingTimestampAddsAnEntry() throws IOException {
        try (TimeIndex index = newIndex()) {
            index.maybeAppend(1000, 500);
            index.maybeAppend(1000, 510);
            index.maybeAppend(900, 520);
            index.maybeAppend(1200, 520);
            index.maybeAppend(1300, 520);

            assertThat(index.entries()).isEqualTo(3);
            assertThat(index.entry(0)).isEqualTo(new TimestampOffset(1000, 500));
            assertThat(index.entry(1)).isEqualTo(new TimestampOffset(1200, 520));
            assertThat(index.entry(2)).isEqualTo(new TimestampOffset(1300, 520));
            assertThat(index.lastEntry()).isEqualTo(new TimestampOffset(1300, 520));
            assertThat(index.lastOffset()).isEqualTo(520);
        }
    }

    @Test
    void negativeTimestampsAreNeverIndexed() throws IOException {
        try (TimeIndex index = newIndex()) {
            index.maybeAppend(-1, 500);
            index.maybeAppend(-5, 501);
            assertThat(index.entries()).isZero();
        }
    }

    @Test
    void aDecreasingOffsetIsRejected() throws IOException {
        try (TimeIndex index = newIndex()) {
            index.maybeAppend(1000, 510);
            assertThatThrownBy(() -> index.maybeAppend(2000, 509))
                .isInstanceOf(InvalidOffsetException.class).hasMessageContaining("offset=509").hasMessageContaining("lastOffset=510");
        }
    }

    @Test
    void lookupReturnsTheEntryWithTheLargestTimestampAtOrBelowTheTarget() throws IOException {
        try (TimeIndex index = newIndex()) {
            index.maybeAppend(100, 500);
            index.maybeAppend(200, 505);
            index.maybeAppend(300, 520);

            assertThat(index.lookup(99)).isEqualTo(new TimestampOffset(-1, BASE_OFFSET));
            assertThat(index.lookup(100)).isEqualTo(new TimestampOffset(100, 500));
            assertThat(index.lookup(250)).isEqualTo(new TimestampOffset(200, 505));
            assertThat(index.lookup(300)).isEqualTo(new TimestampOffset(300, 520));
            assertThat(index.lookup(Long.MAX_VALUE)).isEqualTo(new TimestampOffset(300, 520));
        }
    }

    @Test
    void theLastSlotIsReservedForTheEntryWrittenOnRoll() throws IOException {
        try (TimeIndex index = newIndex()) {
            for (int i = 0; i < 5; i++) {
                assertThat(index.isFull()).isFalse();
                index.maybeAppend(100 + i, 500 + i);
            }
            assertThat(index.isFull()).isTrue();
            assertThat(index.entries()).isEqualTo(5);
            assertThatThrownBy(() -> index.maybeAppend(200, 600)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("entries=5");

            index.maybeAppend(200, 600, true);
            assertThat(index.entries()).isEqualTo(6);
            assertThatThrownBy(() -> index.maybeAppend(300, 700, true)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("maxEntries=6");
        }
    }

    @Test
    void truncateToRemovesEntriesAtOrAboveTheOffsetEvenWhenOffsetsRepeat() throws IOException {
        try (TimeIndex index = newIndex()) {
            index.maybeAppend(100, 500);
            index.maybeAppend(200, 510);
            index.maybeAppend(300, 510);
            index.maybeAppend(400, 520);

            index.truncateTo(511);
            assertThat(index.entries()).isEqualTo(3);
            assertThat(index.lastEntry()).isEqualTo(new TimestampOffset(300, 510));
            index.truncateTo(510);
            assertThat(index.entries()).isEqualTo(1);
            assertThat(index.lastEntry()).isEqualTo(new TimestampOffset(100, 500));
            index.maybeAppend(150, 505);
            assertThat(index.lookup(1000)).isEqualTo(new TimestampOffset(150, 505));
            index.truncateTo(BASE_OFFSET);
            assertThat(index.entries()).isZero();
            assertThat(index.lastEntry()).isEqualTo(new TimestampOffset(-1, BASE_OFFSET));
        }
    }

    @Test
    void closeTrimsAndReopeningKeepsEntriesInKafkasByteLayout() throws IOException {
        try (TimeIndex index = newIndex()) {
            index.maybeAppend(0x0102030405060708L, 503);
            index.maybeAppend(0x0102030405060709L, 600);
        }
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file()));
        assertThat(bytes.remaining()).isEqualTo(24);
        assertThat(bytes.getLong()).isEqualTo(0x0102030405060708L);
        assertThat(bytes.getInt()).isEqualTo(3);
        assertThat(bytes.getLong()).isEqualTo(0x0102030405060709L);
        assertThat(bytes.getInt()).isEqualTo(100);

        try (TimeIndex reopened = new TimeIndex(file(), BASE_OFFSET, MAX_INDEX_SIZE_BYTES, false)) {
            reopened.sanityCheck();
            assertThat(reopened.entries()).isEqualTo(2);
            assertThat(reopened.lastEntry()).isEqualTo(new TimestampOffset(0x0102030405060709L, 600));
        }
        try (TimeIndex writable = newIndex()) {
            assertThat(Files.size(file())).isEqualTo(MAX_INDEX_SIZE_BYTES);
            writable.maybeAppend(0x0102030405060710L, 601);
            assertThat(writable.entries()).isEqualTo(3);
        }
    }

    @Test
    void resetEmptiesTheIndex() throws IOException {
        try (TimeIndex index = newIndex()) {
            index.maybeAppend(100, 500);
            index.trimToValidSize();
            index.reset();
            assertThat(index.entries()).isZero();
            assertThat(index.lastEntry()).isEqualTo(new TimestampOffset(-1, BASE_OFFSET));
            assertThat(index.maxEntries()).isEqualTo(6);
            index.maybeAppend(50, 500);
            assertThat(index.lookup(60)).isEqualTo(new TimestampOffset(50, 500));
        }
    }

    @Test
    void sanityCheckRejectsALastTimestampBelowTheFirst() throws IOException {
        Files.write(file(), ByteBuffer.allocate(24).putLong(200).putInt(0).putLong(100).putInt(1).array());
        try (TimeIndex index = new TimeIndex(file(), BASE_OFFSET, MAX_INDEX_SIZE_BYTES, false)) {
            assertThatThrownBy(index::sanityCheck).isInstanceOf(CorruptIndexException.class)
                .hasMessageContaining("last timestamp=100").hasMessageContaining("first timestamp=200");
        }
    }

    @Test
    void sanityCheckRejectsALastOffsetBelowTheBaseOffset() throws IOException {
        Files.write(file(), ByteBuffer.allocate(12).putLong(200).putInt(-3).array());
        try (TimeIndex index = new TimeIndex(file(), BASE_OFFSET, MAX_INDEX_SIZE_BYTES, false)) {
            assertThatThrownBy(index::sanityCheck).isInstanceOf(CorruptIndexException.class)
                .hasMessageContaining("last offset=497").hasMessageContaining("baseOffset=500");
        }
    }

    @Test
    void sanityCheckRejectsALengthThatIsNotWholeEntries() throws IOException {
        Files.write(file(), new byte[16]);
        try (TimeIndex index = new TimeIndex(file(), BASE_OFFSET, MAX_INDEX_SIZE_BYTES, true)) {
            assertThatThrownBy(index::sanityCheck).isInstanceOf(CorruptIndexException.class)
                .hasMessageContaining("lengthBytes=16");
        }
    }

    @Test
    void sanityCheckRejectsTheZeroFilledTailOfAnUntrimmedFileLeftByACrash() throws IOException {
        TimeIndex active = newIndex();
        active.maybeAppend(1_700_000_000_000L, 500);
        try (TimeIndex afterCrash = new TimeIndex(file(), BASE_OFFSET, MAX_INDEX_SIZE_BYTES, false)) {
            assertThat(afterCrash.entries()).isEqualTo(6);
            assertThatThrownBy(afterCrash::sanityCheck).isInstanceOf(CorruptIndexException.class);
        }
        active.close();
    }
}
