package io.strata.storage;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OffsetIndexTest {
    private static final long BASE_OFFSET = 1000;
    private static final int MAX_INDEX_SIZE_BYTES = 8 * 10;

    @TempDir
    Path dir;

    private OffsetIndex newIndex() throws IOException {
        return new OffsetIndex(dir.resolve("00000000000000001000.index"), BASE_OFFSET, MAX_INDEX_SIZE_BYTES, true);
    }

    @Test
    void emptyIndexLooksUpToBaseOffsetAndPositionZero() throws IOException {
        try (OffsetIndex index = newIndex()) {
            assertThat(index.entries()).isZero();
            assertThat(index.lastOffset()).isEqualTo(BASE_OFFSET);
            assertThat(index.lookup(0)).isEqualTo(new OffsetPosition(BASE_OFFSET, 0));
            assertThat(index.lookup(BASE_OFFSET + 1_000_000)).isEqualTo(new OffsetPosition(BASE_OFFSET, 0));
            assertThat(index.isFull()).isFalse();
        }
    }

    @Test
    void lookupReturnsTheLargestEntryAtOrBelowTheTarget() throws IOException {
        try (OffsetIndex index = newIndex()) {
            index.append(1000, 0);
            index.append(1010, 4096);
            index.append(1020, 8192);

            assertThat(index.lookup(999)).isEqualTo(new OffsetPosition(1000, 0));
            assertThat(index.lookup(1000)).isEqualTo(new OffsetPosition(1000, 0));
            assertThat(index.lookup(1009)).isEqualTo(new OffsetPosition(1000, 0));
            assertThat(index.lookup(1010)).isEqualTo(new OffsetPosition(1010, 4096));
            assertThat(index.lookup(1019)).isEqualTo(new OffsetPosition(1010, 4096));
            assertThat(index.lookup(1020)).isEqualTo(new OffsetPosition(1020, 8192));
            assertThat(index.lookup(Long.MAX_VALUE)).isEqualTo(new OffsetPosition(1020, 8192));
            assertThat(index.entry(0)).isEqualTo(new OffsetPosition(1000, 0));
            assertThat(index.entry(2)).isEqualTo(new OffsetPosition(1020, 8192));
            assertThat(index.lastOffset()).isEqualTo(1020);
        }
    }

    @Test
    void lookupByPositionReturnsTheLargestEntryAtOrBeforeThePosition() throws IOException {
        try (OffsetIndex index = newIndex()) {
            assertThat(index.lookupByPosition(100)).isEqualTo(new OffsetPosition(BASE_OFFSET, 0));
            index.append(1005, 100);
            index.append(1010, 4096);
            index.append(1020, 8192);
            assertThat(index.lookupByPosition(99)).isEqualTo(new OffsetPosition(BASE_OFFSET, 0));
            assertThat(index.lookupByPosition(100)).isEqualTo(new OffsetPosition(1005, 100));
            assertThat(index.lookupByPosition(4095)).isEqualTo(new OffsetPosition(1005, 100));
            assertThat(index.lookupByPosition(4096)).isEqualTo(new OffsetPosition(1010, 4096));
            assertThat(index.lookupByPosition(Integer.MAX_VALUE)).isEqualTo(new OffsetPosition(1020, 8192));
        }
    }

    @Test
    void lookupBelowTheFirstEntryReturnsBaseOffset() throws IOException {
        try (OffsetIndex index = newIndex()) {
            index.append(1005, 300);
            assertThat(index.lookup(1004)).isEqualTo(new OffsetPosition(BASE_OFFSET, 0));
        }
    }

    @Test
    void appendRejectsAnOffsetNotAboveTheLastOne() throws IOException {
        try (OffsetIndex index = newIndex()) {
            index.append(1010, 100);
            assertThatThrownBy(() -> index.append(1010, 200))
                .isInstanceOf(InvalidOffsetException.class).hasMessageContaining("offset=1010").hasMessageContaining("lastOffset=1010");
            assertThatThrownBy(() -> index.append(1005, 200))
                .isInstanceOf(InvalidOffsetException.class).hasMessageContaining("offset=1005");
            assertThat(index.entries()).isEqualTo(1);
        }
    }

    @Test
    void offsetsMustFitA31BitRelativeOffset() throws IOException {
        try (OffsetIndex index = newIndex()) {
            assertThat(index.canAppendOffset(BASE_OFFSET - 1)).isFalse();
            assertThat(index.canAppendOffset(BASE_OFFSET)).isTrue();
            assertThat(index.canAppendOffset(BASE_OFFSET + Integer.MAX_VALUE)).isTrue();
            assertThat(index.canAppendOffset(BASE_OFFSET + Integer.MAX_VALUE + 1L)).isFalse();
            assertThatThrownBy(() -> index.append(BASE_OFFSET - 1, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("offset=999");
            assertThatThrownBy(() -> index.append(BASE_OFFSET + Integer.MAX_VALUE + 1L, 0)).isInstanceOf(IllegalArgumentException.class);
            index.append(BASE_OFFSET + Integer.MAX_VALUE, 7);
            assertThat(index.lookup(Long.MAX_VALUE)).isEqualTo(new OffsetPosition(BASE_OFFSET + Integer.MAX_VALUE, 7));
        }
    }

    @Test
    void negativePositionIsRejected() throws IOException {
        try (OffsetIndex index = newIndex()) {
            assertThatThrownBy(() -> index.append(1000, -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("position=-1");
        }
    }

    @Test
    void newIndexIsPreallocatedToMaxSizeRoundedDownToWholeEntries() throws IOException {
        Path file = dir.resolve("x.index");
        try (OffsetIndex index = new OffsetIndex(file, 0, 8 * 5 + 3, true)) {
            assertThat(Files.size(file)).isEqualTo(40);
            assertThat(index.maxEntries()).isEqualTo(5);
            assertThat(index.sizeInBytes()).isZero();
        }
    }

    @Test
    void tooSmallMaxSizeIsRejectedForAWritableIndex() {
        assertThatThrownBy(() -> new OffsetIndex(dir.resolve("x.index"), 0, 7, true))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxIndexSizeBytes=7");
    }

    @Test
    void fullIndexRefusesAppends() throws IOException {
        try (OffsetIndex index = newIndex()) {
            for (int i = 0; i < 10; i++) {
                assertThat(index.isFull()).isFalse();
                index.append(BASE_OFFSET + i, i * 10);
            }
            assertThat(index.isFull()).isTrue();
            assertThatThrownBy(() -> index.append(BASE_OFFSET + 10, 100))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("entries=10").hasMessageContaining("maxEntries=10");
            assertThat(index.lookup(BASE_OFFSET + 9)).isEqualTo(new OffsetPosition(BASE_OFFSET + 9, 90));
        }
    }

    @Test
    void closeTrimsTheFileAndReopeningKeepsTheEntries() throws IOException {
        Path file = dir.resolve("00000000000000001000.index");
        try (OffsetIndex index = newIndex()) {
            index.append(1000, 0);
            index.append(1007, 70);
            index.append(1013, 130);
        }
        assertThat(Files.size(file)).isEqualTo(24);

        try (OffsetIndex readOnly = new OffsetIndex(file, BASE_OFFSET, MAX_INDEX_SIZE_BYTES, false)) {
            assertThat(readOnly.entries()).isEqualTo(3);
            assertThat(readOnly.lastOffset()).isEqualTo(1013);
            assertThat(readOnly.lookup(1010)).isEqualTo(new OffsetPosition(1007, 70));
            assertThat(Files.size(file)).isEqualTo(24);
            assertThatThrownBy(() -> readOnly.append(1020, 200)).isInstanceOf(IllegalStateException.class);
            readOnly.sanityCheck();
        }
        assertThat(Files.size(file)).isEqualTo(24);

        try (OffsetIndex writable = newIndex()) {
            assertThat(writable.entries()).isEqualTo(3);
            assertThat(Files.size(file)).isEqualTo(MAX_INDEX_SIZE_BYTES);
            assertThat(writable.maxEntries()).isEqualTo(10);
            writable.append(1020, 200);
            assertThat(writable.lookup(1021)).isEqualTo(new OffsetPosition(1020, 200));
        }
        assertThat(Files.size(file)).isEqualTo(32);
    }

    @Test
    void entriesAreStoredInKafkasByteLayout() throws IOException {
        Path file = dir.resolve("00000000000000001000.index");
        try (OffsetIndex index = newIndex()) {
            index.append(1003, 100);
            index.append(1000 + 0x01020304L, 0x0A0B0C0D);
        }
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file));
        assertThat(bytes.remaining()).isEqualTo(16);
        assertThat(bytes.getInt()).isEqualTo(3);
        assertThat(bytes.getInt()).isEqualTo(100);
        assertThat(bytes.getInt()).isEqualTo(0x01020304);
        assertThat(bytes.getInt()).isEqualTo(0x0A0B0C0D);
        assertThat(Files.readAllBytes(file)).startsWith(0, 0, 0, 3, 0, 0, 0, 100);
    }

    @Test
    void truncateToRemovesEntriesAtOrAboveTheOffset() throws IOException {
        try (OffsetIndex index = newIndex()) {
            index.append(1000, 0);
            index.append(1010, 10);
            index.append(1020, 20);
            index.append(1030, 30);

            index.truncateTo(1031);
            assertThat(index.entries()).isEqualTo(4);
            index.truncateTo(1030);
            assertThat(index.entries()).isEqualTo(3);
            assertThat(index.lastOffset()).isEqualTo(1020);
            index.truncateTo(1015);
            assertThat(index.entries()).isEqualTo(2);
            assertThat(index.lastOffset()).isEqualTo(1010);
            assertThat(index.lookup(1025)).isEqualTo(new OffsetPosition(1010, 10));

            index.append(1011, 11);
            assertThat(index.lookup(1025)).isEqualTo(new OffsetPosition(1011, 11));

            index.truncateTo(0);
            assertThat(index.entries()).isZero();
            assertThat(index.lastOffset()).isEqualTo(BASE_OFFSET);
            index.append(1000, 0);
            assertThat(index.entries()).isEqualTo(1);
        }
    }

    @Test
    void resetRemovesEverythingAndRestoresThePreallocatedSize() throws IOException {
        Path file = dir.resolve("00000000000000001000.index");
        try (OffsetIndex index = newIndex()) {
            index.append(1000, 0);
            index.append(1010, 10);
            index.trimToValidSize();
            assertThat(Files.size(file)).isEqualTo(16);
            assertThat(index.isFull()).isTrue();

            index.reset();
            assertThat(index.entries()).isZero();
            assertThat(index.lastOffset()).isEqualTo(BASE_OFFSET);
            assertThat(Files.size(file)).isEqualTo(MAX_INDEX_SIZE_BYTES);
            assertThat(index.maxEntries()).isEqualTo(10);
        }
        assertThat(Files.size(file)).isZero();
    }

    @Test
    void resizeKeepsEntriesAndRefusesToCutThem() throws IOException {
        Path file = dir.resolve("00000000000000001000.index");
        try (OffsetIndex index = newIndex()) {
            index.append(1000, 0);
            index.append(1010, 10);
            index.append(1020, 20);

            assertThat(index.resize(8 * 100 + 5)).isTrue();
            assertThat(Files.size(file)).isEqualTo(800);
            assertThat(index.maxEntries()).isEqualTo(100);
            assertThat(index.resize(800)).isFalse();
            assertThat(index.lookup(1015)).isEqualTo(new OffsetPosition(1010, 10));

            assertThatThrownBy(() -> index.resize(23)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("newSizeBytes=23").hasMessageContaining("sizeInBytes=24");
            assertThat(index.resize(24)).isTrue();
            assertThat(index.isFull()).isTrue();
            assertThat(index.entry(2)).isEqualTo(new OffsetPosition(1020, 20));
        }
    }

    @Test
    void reopeningAnOversizedFileKeepsAllItsEntries() throws IOException {
        Path file = dir.resolve("big.index");
        try (OffsetIndex index = new OffsetIndex(file, 0, 8 * 20, true)) {
            for (int i = 0; i < 20; i++) {
                index.append(i, i);
            }
        }
        try (OffsetIndex reopened = new OffsetIndex(file, 0, 8 * 5, true)) {
            assertThat(reopened.entries()).isEqualTo(20);
            assertThat(reopened.isFull()).isTrue();
            assertThat(reopened.lookup(19)).isEqualTo(new OffsetPosition(19, 19));
        }
    }

    @Test
    void entryOutsideTheValidRangeIsRejected() throws IOException {
        try (OffsetIndex index = newIndex()) {
            index.append(1000, 0);
            assertThatThrownBy(() -> index.entry(1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("n=1").hasMessageContaining("entries=1");
            assertThatThrownBy(() -> index.entry(-1)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void closedIndexRejectsUseAndCanStillBeDeleted() throws IOException {
        Path file = dir.resolve("00000000000000001000.index");
        OffsetIndex index = newIndex();
        index.append(1000, 0);
        index.close();
        index.close();
        assertThatThrownBy(() -> index.lookup(1000)).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThatThrownBy(() -> index.append(1001, 1)).isInstanceOf(IllegalStateException.class);
        index.flush();
        assertThat(index.deleteIfExists()).isTrue();
        assertThat(Files.exists(file)).isFalse();
        assertThat(index.deleteIfExists()).isFalse();
    }

    @Test
    void renameMovesTheFileAndTheIndexStaysUsable() throws IOException {
        Path renamed = dir.resolve("00000000000000001000.index.deleted");
        try (OffsetIndex index = newIndex()) {
            index.append(1000, 0);
            index.renameTo(renamed);
            assertThat(index.file()).isEqualTo(renamed);
            index.append(1001, 5);
            assertThat(index.lookup(1001)).isEqualTo(new OffsetPosition(1001, 5));
        }
        assertThat(Files.size(renamed)).isEqualTo(16);
        assertThat(Files.exists(dir.resolve("00000000000000001000.index"))).isFalse();
    }

    @Test
    void missingReadOnlyFileIsCreatedEmpty() throws IOException {
        Path file = dir.resolve("ro.index");
        try (OffsetIndex index = new OffsetIndex(file, 5, 0, false)) {
            assertThat(index.entries()).isZero();
            assertThat(index.lookup(10)).isEqualTo(new OffsetPosition(5, 0));
            index.sanityCheck();
        }
        assertThat(Files.size(file)).isZero();
    }

    @Test
    void sanityCheckRejectsALengthThatIsNotWholeEntries() throws IOException {
        Path file = dir.resolve("odd.index");
        Files.write(file, new byte[12]);
        try (OffsetIndex index = new OffsetIndex(file, 0, 80, true)) {
            assertThat(Files.size(file)).isEqualTo(12);
            assertThatThrownBy(index::sanityCheck).isInstanceOf(CorruptIndexException.class)
                .hasMessageContaining("lengthBytes=12").hasMessageContaining("odd.index");
            index.reset();
            index.sanityCheck();
            assertThat(Files.size(file)).isEqualTo(80);
        }
    }

    @Test
    void sanityCheckRejectsALastOffsetBelowTheBaseOffset() throws IOException {
        Path file = dir.resolve("negative.index");
        Files.write(file, ByteBuffer.allocate(8).putInt(-1).putInt(0).array());
        try (OffsetIndex index = new OffsetIndex(file, 100, 80, false)) {
            assertThatThrownBy(index::sanityCheck).isInstanceOf(CorruptIndexException.class)
                .hasMessageContaining("lastOffset=99").hasMessageContaining("baseOffset=100");
        }
    }

    @Test
    void sanityCheckRejectsTheZeroFilledTailOfAnUntrimmedFileLeftByACrash() throws IOException {
        Path file = dir.resolve("00000000000000001000.index");
        OffsetIndex active = newIndex();
        active.append(1000, 0);
        active.append(1004, 40);
        // No close: as after a crash, the file keeps its preallocated, zero-filled tail.
        try (OffsetIndex afterCrash = new OffsetIndex(file, BASE_OFFSET, MAX_INDEX_SIZE_BYTES, false)) {
            assertThat(afterCrash.entries()).isEqualTo(10);
            assertThatThrownBy(afterCrash::sanityCheck).isInstanceOf(CorruptIndexException.class)
                .hasMessageContaining("do not increase");
        }
        active.close();
        try (OffsetIndex afterCleanClose = new OffsetIndex(file, BASE_OFFSET, MAX_INDEX_SIZE_BYTES, false)) {
            afterCleanClose.sanityCheck();
            assertThat(afterCleanClose.entries()).isEqualTo(2);
        }
    }

    @Test
    void lookupsAgreeWithALinearScanAcrossTheWarmSectionBoundary() throws IOException {
        int entryCount = 5000;
        try (OffsetIndex index = new OffsetIndex(dir.resolve("many.index"), 0, 8 * entryCount, true)) {
            for (int i = 0; i < entryCount; i++) {
                index.append(3L * i + 1, 7 * i);
            }
            assertThat(index.isFull()).isTrue();
            for (long target = 0; target <= 3L * entryCount + 2; target++) {
                long expectedSlot = Math.min((target - 1) / 3, entryCount - 1);
                OffsetPosition expected = target < 1 ? new OffsetPosition(0, 0)
                    : new OffsetPosition(3 * expectedSlot + 1, (int) (7 * expectedSlot));
                assertThat(index.lookup(target)).as("lookup(%d)", target).isEqualTo(expected);
            }
        }
    }
}
