package io.strata.metadata;

import io.strata.common.BackgroundErrors;
import io.strata.protocol.ApiMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class MetadataLoaderTest {
    private final MetadataLoader loader = new MetadataLoader(1, new BackgroundErrors());

    @AfterEach
    void close() throws InterruptedException {
        loader.close();
    }

    private static MetadataBatch batch(long offset, ApiMessage... records) {
        return new MetadataBatch(List.of(records), offset, offset + records.length - 1, 1, 0L, false, 100);
    }

    @Test
    void theImageIsCurrentWhileItsPublishersStillWorkAndWhenAppliedWaitsForThem() throws Exception {
        UUID topicId = UUID.randomUUID();
        CountDownLatch publishing = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        loader.addPublisher((previous, current) -> {
            if (current.topic("slow") != null && previous.topic("slow") == null) {
                publishing.countDown();
                try {
                    // A publisher creating thousands of logs: Metadata must not wait for it.
                    assertThat(release.await(10, TimeUnit.SECONDS)).isTrue();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        loader.startPublishing().get(10, TimeUnit.SECONDS);

        loader.handleCommit(batch(0, TestRecords.topic("slow", topicId), TestRecords.partition(topicId, 0, 1)));
        CompletableFuture<Void> applied = loader.whenApplied(2);
        assertThat(publishing.await(10, TimeUnit.SECONDS)).as("the publisher got the image").isTrue();

        assertThat(loader.image().topic("slow")).as("the image is current before its publishers finished").isNotNull();
        assertThat(loader.image().topic("slow").partition(0).leader()).isEqualTo(1);
        assertThat(applied).as("whenApplied waits for every publisher").isNotDone();

        release.countDown();
        applied.get(10, TimeUnit.SECONDS);
        assertThat(loader.nextOffset()).isEqualTo(2);
    }
}
