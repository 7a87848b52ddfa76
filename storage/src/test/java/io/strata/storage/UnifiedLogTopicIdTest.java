package io.strata.storage;

import io.strata.common.MockTime;
import io.strata.storage.checkpoint.PartitionMetadataFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A new log's topic id is taken at once and written to {@code partition.metadata} later (creating
 * thousands of partitions waits on no fsync of that file), but always before the log holds a record
 * and at a clean close: a log whose directory lacks the file after a crash is empty.
 */
class UnifiedLogTopicIdTest {
    private static final UUID TOPIC_ID = new UUID(0x1234, 0x5678);

    @TempDir
    Path dataDir;

    private final MockTime time = new MockTime();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final TopicPartition tp = new TopicPartition("orders", 0);
    /** A writer that runs nothing until asked: the background write has not happened yet. */
    private final List<Runnable> heldWrites = new ArrayList<>();
    private final Executor heldWriter = heldWrites::add;
    private final List<UnifiedLog> opened = new ArrayList<>();

    @AfterEach
    void close() throws IOException {
        for (UnifiedLog log : opened) {
            if (!log.isClosed()) {
                log.close();
            }
        }
        scheduler.shutdownNow();
    }

    private UnifiedLog open() throws IOException {
        UnifiedLog log = UnifiedLog.load(dataDir.resolve(tp.toString()), tp, LogConfig.defaults(), time, scheduler,
            new UnifiedLog.LoadParams(0, 0, false, 86_400_000L, false));
        opened.add(log);
        return log;
    }

    private Path metadataFile() {
        return dataDir.resolve(tp.toString()).resolve(PartitionMetadataFile.FILE_NAME);
    }

    @Test
    void theIdIsKnownAtOnceAndTheFileWrittenByTheBackgroundWrite() throws IOException {
        UnifiedLog log = open();
        log.assignTopicIdDeferred(TOPIC_ID, heldWriter);
        assertThat(log.topicId()).contains(TOPIC_ID);
        assertThat(metadataFile()).doesNotExist();
        assertThat(heldWrites).hasSize(1);
        heldWrites.get(0).run();
        assertThat(new PartitionMetadataFile(metadataFile().getParent()).read()).contains(TOPIC_ID);
    }

    @Test
    void theFirstAppendWritesAPendingIdBeforeTheRecord() throws IOException {
        UnifiedLog log = open();
        log.assignTopicIdDeferred(TOPIC_ID, heldWriter);
        log.appendAsLeader(TestRecords.batch(time.milliseconds(), "a"), 0, UnifiedLog.AppendOrigin.CLIENT);
        assertThat(new PartitionMetadataFile(metadataFile().getParent()).read()).contains(TOPIC_ID);
        // The late background write finds nothing left to do.
        Files.delete(metadataFile());
        heldWrites.forEach(Runnable::run);
        assertThat(metadataFile()).doesNotExist();
    }

    @Test
    void aCleanCloseWritesAPendingId() throws IOException {
        UnifiedLog log = open();
        log.assignTopicIdDeferred(TOPIC_ID, heldWriter);
        log.close();
        assertThat(new PartitionMetadataFile(metadataFile().getParent()).read()).contains(TOPIC_ID);
        assertThat(open().topicId()).contains(TOPIC_ID);
    }

    @Test
    void aCrashBeforeTheWriteLeavesAnEmptyLogWithoutAnId() throws IOException {
        UnifiedLog crashed = open();
        crashed.assignTopicIdDeferred(TOPIC_ID, heldWriter);
        // The process dies here: no append, no close, the background write never ran.
        UnifiedLog reopened = open();
        assertThat(reopened.topicId()).isEmpty();
        assertThat(reopened.logEndOffset()).isZero();
        reopened.assignTopicIdDeferred(TOPIC_ID, Runnable::run);
        assertThat(new PartitionMetadataFile(metadataFile().getParent()).read()).contains(TOPIC_ID);
    }

    @Test
    void anotherIdIsRefusedWhetherWrittenOrPending() throws IOException {
        UnifiedLog log = open();
        log.assignTopicIdDeferred(TOPIC_ID, heldWriter);
        UUID other = new UUID(9, 9);
        assertThatThrownBy(() -> log.assignTopicIdDeferred(other, heldWriter)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining(TOPIC_ID.toString());
        assertThatThrownBy(() -> log.assignTopicId(other)).isInstanceOf(IllegalStateException.class);
        log.assignTopicIdDeferred(TOPIC_ID, heldWriter);
        assertThat(heldWrites).hasSize(1);
        assertThat(log.topicId()).isEqualTo(Optional.of(TOPIC_ID));
    }
}
