package io.strata.storage;

import io.strata.storage.checkpoint.CorruptCheckpointException;
import io.strata.storage.checkpoint.LeaderEpochCheckpointFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LeaderEpochFileCacheTest {
    private static final TopicPartition PARTITION = new TopicPartition("orders", 0);

    @TempDir
    Path dir;

    private LeaderEpochCheckpointFile checkpoint() {
        return new LeaderEpochCheckpointFile(dir.resolve(LeaderEpochCheckpointFile.FILE_NAME));
    }

    private LeaderEpochFileCache newCache() throws IOException {
        return new LeaderEpochFileCache(PARTITION, checkpoint());
    }

    private List<EpochEntry> persisted() throws IOException {
        return checkpoint().read();
    }

    private static List<EpochEntry> entries(long... epochStartPairs) {
        EpochEntry[] entries = new EpochEntry[epochStartPairs.length / 2];
        for (int i = 0; i < entries.length; i++) {
            entries[i] = new EpochEntry((int) epochStartPairs[2 * i], epochStartPairs[2 * i + 1]);
        }
        return List.of(entries);
    }

    @Test
    void anEmptyCacheHasNoEpochs() throws IOException {
        LeaderEpochFileCache cache = newCache();
        assertThat(cache.latestEpoch()).isEmpty();
        assertThat(cache.latestEntry()).isEmpty();
        assertThat(cache.previousEpoch()).isEmpty();
        assertThat(cache.epochEntries()).isEmpty();
        assertThat(cache.endOffsetFor(0, 100)).isEqualTo(EpochOffset.UNDEFINED);
    }

    @Test
    void assignAppendsAndPersistsNewEpochs() throws IOException {
        LeaderEpochFileCache cache = newCache();
        cache.assign(0, 0);
        cache.assign(2, 10);
        cache.assign(5, 25);

        assertThat(cache.epochEntries()).isEqualTo(entries(0, 0, 2, 10, 5, 25));
        assertThat(cache.latestEpoch()).isEqualTo(OptionalInt.of(5));
        assertThat(cache.latestEntry()).contains(new EpochEntry(5, 25));
        assertThat(cache.previousEpoch()).isEqualTo(OptionalInt.of(2));
        assertThat(cache.earliestEntry()).contains(new EpochEntry(0, 0));
        assertThat(persisted()).isEqualTo(cache.epochEntries());
        assertThat(newCache().epochEntries()).isEqualTo(cache.epochEntries());
    }

    @Test
    void reassigningTheLatestEpochAtTheSameOrHigherOffsetIsIgnored() throws IOException {
        LeaderEpochFileCache cache = newCache();
        cache.assign(1, 10);
        Files.delete(checkpoint().file());
        cache.assign(1, 10);
        cache.assign(1, 15);
        assertThat(cache.epochEntries()).isEqualTo(entries(1, 10));
        assertThat(Files.exists(checkpoint().file())).as("an ignored assign writes nothing").isFalse();
    }

    @Test
    void theLatestEpochAtALowerOffsetReplacesItsEntry() throws IOException {
        LeaderEpochFileCache cache = newCache();
        cache.assign(0, 0);
        cache.assign(1, 5);
        cache.assign(2, 10);
        cache.assign(2, 7);
        assertThat(cache.epochEntries()).isEqualTo(entries(0, 0, 1, 5, 2, 7));
        assertThat(persisted()).isEqualTo(entries(0, 0, 1, 5, 2, 7));
    }

    @Test
    void aHigherEpochAtALowerOffsetRemovesTheConflictingEntries() throws IOException {
        LeaderEpochFileCache cache = newCache();
        cache.assign(0, 0);
        cache.assign(1, 5);
        cache.assign(2, 10);
        cache.assign(3, 5);
        assertThat(cache.epochEntries()).isEqualTo(entries(0, 0, 3, 5));
        assertThat(persisted()).isEqualTo(entries(0, 0, 3, 5));
    }

    @Test
    void aLowerEpochAtAHigherOffsetReplacesTheHigherEpochs() throws IOException {
        LeaderEpochFileCache cache = newCache();
        cache.assign(0, 0);
        cache.assign(5, 10);
        cache.assign(3, 20);
        assertThat(cache.epochEntries()).isEqualTo(entries(0, 0, 3, 20));
    }

    @Test
    void negativeEpochsAndOffsetsAreRejected() throws IOException {
        LeaderEpochFileCache cache = newCache();
        assertThatThrownBy(() -> cache.assign(-1, 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("epoch=-1");
        assertThatThrownBy(() -> cache.assign(0, -1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("startOffset=-1");
    }

    @Test
    void endOffsetForFollowsOffsetForLeaderEpochSemantics() throws IOException {
        LeaderEpochFileCache cache = newCache();
        cache.assign(2, 10);
        cache.assign(4, 30);
        cache.assign(7, 50);
        long logEndOffset = 80;

        assertThat(cache.endOffsetFor(7, logEndOffset)).isEqualTo(new EpochOffset(7, 80));
        assertThat(cache.endOffsetFor(4, logEndOffset)).isEqualTo(new EpochOffset(4, 50));
        assertThat(cache.endOffsetFor(5, logEndOffset)).isEqualTo(new EpochOffset(4, 50));
        assertThat(cache.endOffsetFor(6, logEndOffset)).isEqualTo(new EpochOffset(4, 50));
        assertThat(cache.endOffsetFor(2, logEndOffset)).isEqualTo(new EpochOffset(2, 30));
        assertThat(cache.endOffsetFor(3, logEndOffset)).isEqualTo(new EpochOffset(2, 30));
        assertThat(cache.endOffsetFor(1, logEndOffset)).isEqualTo(new EpochOffset(1, 10));
        assertThat(cache.endOffsetFor(0, logEndOffset)).isEqualTo(new EpochOffset(0, 10));
        assertThat(cache.endOffsetFor(8, logEndOffset)).isEqualTo(EpochOffset.UNDEFINED);
        assertThat(cache.endOffsetFor(LeaderEpochFileCache.UNDEFINED_EPOCH, logEndOffset)).isEqualTo(EpochOffset.UNDEFINED);
        assertThat(EpochOffset.UNDEFINED).isEqualTo(new EpochOffset(-1, -1));
    }

    @Test
    void truncateFromEndRemovesEpochsStartingAtOrAfterTheNewEnd() throws IOException {
        LeaderEpochFileCache cache = newCache();
        cache.assign(0, 0);
        cache.assign(1, 10);
        cache.assign(2, 20);

        cache.truncateFromEnd(21);
        assertThat(cache.epochEntries()).isEqualTo(entries(0, 0, 1, 10, 2, 20));
        cache.truncateFromEnd(20);
        assertThat(cache.epochEntries()).isEqualTo(entries(0, 0, 1, 10));
        assertThat(persisted()).isEqualTo(entries(0, 0, 1, 10));
        cache.truncateFromEnd(-1);
        assertThat(cache.epochEntries()).isEqualTo(entries(0, 0, 1, 10));
        cache.truncateFromEnd(0);
        assertThat(cache.epochEntries()).isEmpty();
        assertThat(persisted()).isEmpty();
    }

    @Test
    void truncateFromStartMovesTheFirstRemainingEpochUpToTheNewStart() throws IOException {
        LeaderEpochFileCache cache = newCache();
        cache.assign(0, 0);
        cache.assign(1, 10);
        cache.assign(2, 20);

        cache.truncateFromStart(5);
        assertThat(cache.epochEntries()).isEqualTo(entries(0, 5, 1, 10, 2, 20));
        cache.truncateFromStart(10);
        assertThat(cache.epochEntries()).isEqualTo(entries(1, 10, 2, 20));
        cache.truncateFromStart(25);
        assertThat(cache.epochEntries()).isEqualTo(entries(2, 25));
        assertThat(persisted()).isEqualTo(entries(2, 25));
        cache.truncateFromStart(3);
        assertThat(cache.epochEntries()).isEqualTo(entries(2, 25));
    }

    @Test
    void epochForOffsetFindsTheEpochWhoseRangeHoldsTheOffset() throws IOException {
        LeaderEpochFileCache cache = newCache();
        cache.assign(1, 10);
        cache.assign(3, 20);
        assertThat(cache.epochForOffset(9)).isEmpty();
        assertThat(cache.epochForOffset(10)).isEqualTo(OptionalInt.of(1));
        assertThat(cache.epochForOffset(19)).isEqualTo(OptionalInt.of(1));
        assertThat(cache.epochForOffset(20)).isEqualTo(OptionalInt.of(3));
        assertThat(cache.epochForOffset(Long.MAX_VALUE)).isEqualTo(OptionalInt.of(3));
    }

    @Test
    void clearAndFlushEmptiesTheCacheAndTheFile() throws IOException {
        LeaderEpochFileCache cache = newCache();
        cache.assign(1, 10);
        cache.clearAndFlush();
        assertThat(cache.epochEntries()).isEmpty();
        assertThat(cache.latestEntry()).isEqualTo(Optional.empty());
        assertThat(Files.readString(checkpoint().file())).isEqualTo("0\n0\n");
    }

    @Test
    void loadingAFileThatBreaksTheInvariantKeepsItsConsistentSuffix() throws IOException {
        checkpoint().write(entries(0, 0, 2, 30, 3, 20, 4, 40));
        assertThat(newCache().epochEntries()).isEqualTo(entries(0, 0, 3, 20, 4, 40));
    }

    @Test
    void aCorruptCheckpointFailsTheLoad() throws IOException {
        Files.writeString(checkpoint().file(), "0\n1\n");
        assertThatThrownBy(this::newCache).isInstanceOf(CorruptCheckpointException.class);
    }
}
