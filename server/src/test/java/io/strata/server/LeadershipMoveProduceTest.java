package io.strata.server;

import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ProduceRequestData;
import io.strata.protocol.message.ProduceResponseData;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.storage.UnifiedLog;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * FIELD-NOTES: on losing leadership, parked acks=all produces are answered with
 * NOT_LEADER_OR_FOLLOWER at once, not when their timeout passes. The produce is parked by an
 * fsync-on-ack that the test holds; the next image names broker 2 the leader.
 */
class LeadershipMoveProduceTest {
    @TempDir
    Path dataDir;

    @Test
    void aParkedAcksAllProduceIsAnsweredNotLeaderAtOnceWhenLeadershipMovesAway() throws Exception {
        try (TestBroker broker = new TestBroker(dataDir, Map.of("strata.fsync", "on-ack", "broker.session.timeout.ms", "600000"))) {
            broker.registerBroker(2, "127.0.0.1", 1, "rack-b");
            broker.admin().createTopics(List.of(new NewTopic("moving", Map.of(0, List.of(1, 2))))).all().get(30, TimeUnit.SECONDS);
            UnifiedLog log = broker.log("moving", 0);
            CountDownLatch fsyncEntered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            log.setBeforeFsync(target -> {
                fsyncEntered.countDown();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            MetadataImage before = broker.server().metadata().image();
            MetadataImage after = before.apply(List.of(new PartitionChangeRecord().setTopicId(before.topic("moving").id()).setPartitionId(0)
                .setLeader(2)), before.offset());
            try (RawClient client = new RawClient(broker.port())) {
                ProduceRequestData request = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(25_000).setTopicData(List.of(
                    new ProduceRequestData.TopicProduceData().setName("moving").setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                        .setIndex(0).setRecords(new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0)
                            .append(System.currentTimeMillis(), null, "v".getBytes(StandardCharsets.UTF_8)).build())))));
                CompletableFuture<ProduceResponseData> parked = CompletableFuture.supplyAsync(() -> {
                    try {
                        return client.send(ApiMessageType.PRODUCE, 12, request);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
                assertThat(fsyncEntered.await(30, TimeUnit.SECONDS)).as("the fsync started").isTrue();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (broker.server().producePurgatory().numDelayed() == 0 && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                assertThat(broker.server().producePurgatory().numDelayed()).as("the produce waits for its fsync").isPositive();

                // The controller has no API to move a leader yet: the next image is handed to the replica manager directly.
                broker.server().replicaManager().publish(before, after);

                ProduceResponseData response = parked.get(5, TimeUnit.SECONDS);
                assertThat(ErrorCode.forCode(response.responses().get(0).partitionResponses().get(0).errorCode()))
                    .isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER);
            } finally {
                release.countDown();
                // Leadership comes back in a newer image (an image with an older leader epoch is not applied).
                broker.server().replicaManager().publish(after, after.apply(List.of(new PartitionChangeRecord()
                    .setTopicId(before.topic("moving").id()).setPartitionId(0).setLeader(1)), after.offset()));
            }
        }
    }
}
