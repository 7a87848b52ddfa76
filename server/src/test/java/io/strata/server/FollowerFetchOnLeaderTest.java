package io.strata.server;

import io.strata.metadata.MetadataImage;
import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.message.ListOffsetsRequestData;
import io.strata.protocol.message.ListOffsetsResponseData;
import io.strata.protocol.message.ProduceRequestData;
import io.strata.protocol.message.ProduceResponseData;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.server.replica.Partition;
import io.strata.storage.TopicPartition;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The leader's answers on the wire while replication is under way: a follower's Fetch (replica
 * id from ReplicaState or ReplicaId, DivergingEpoch, reading past the high watermark, moving it),
 * a consumer's fetch between the high watermark and the log end, and ListOffsets of a new leader
 * whose high watermark is below its epoch's start (KIP-207). Broker 2 is registered but never
 * runs: the test plays its fetches.
 */
class FollowerFetchOnLeaderTest {
    @TempDir
    Path dataDir;
    private UUID topicId = io.strata.protocol.Uuids.ZERO;

    @Test
    void aNewLeaderAnswersOffsetNotAvailableUntilAFollowerFetchMovesItsHighWatermarkToTheEpochStart() throws Exception {
        try (TestBroker broker = new TestBroker(dataDir, Map.of("broker.session.timeout.ms", "600000"))) {
            broker.registerBroker(2, "127.0.0.1", 1, "rack-b");
            broker.admin().createTopics(List.of(new NewTopic("kip207", Map.of(0, List.of(1, 2))))).all().get(30, TimeUnit.SECONDS);
            TopicPartition topicPartition = new TopicPartition("kip207", 0);
            topicId = broker.server().metadata().image().topic("kip207").id();
            try (RawClient client = new RawClient(broker.port())) {
                ProduceResponseData produced = client.send(ApiMessageType.PRODUCE, 12, produce("kip207", 3));
                assertThat(ErrorCode.forCode(produced.responses().get(0).partitionResponses().get(0).errorCode())).isEqualTo(ErrorCode.NONE);
                assertThat(broker.log("kip207", 0).highWatermark()).as("broker 2 is in the ISR and has not fetched").isZero();

                FetchResponseData.PartitionData between = fetchPartition(client.send(ApiMessageType.FETCH, 12, fetch(12, -1, -1L, 1, -1, -1)));
                assertThat(ErrorCode.forCode(between.errorCode())).as("an offset in (HW, LEO] is not out of range").isEqualTo(ErrorCode.NONE);
                assertThat(between.records().sizeInBytes()).isZero();

                // A new leader epoch on this node (the controller has no API to elect yet: the image is handed over directly).
                MetadataImage before = broker.server().metadata().image();
                MetadataImage after = before.apply(List.of(new PartitionChangeRecord().setTopicId(topicId).setPartitionId(0).setLeader(1)),
                    before.offset());
                broker.server().replicaManager().publish(before, after);
                Partition partition = broker.server().replicaManager().partition(topicPartition);
                assertThat(partition.leaderEpoch()).isEqualTo(1);
                assertThat(partition.leaderEpochStartOffset()).isEqualTo(3);

                assertThat(listOffset(client, 9, -1L).errorCode()).isEqualTo(ErrorCode.OFFSET_NOT_AVAILABLE.code());
                assertThat(listOffset(client, 4, -1L).errorCode()).as("before v5").isEqualTo(ErrorCode.LEADER_NOT_AVAILABLE.code());
                assertThat(listOffset(client, 9, 0L).errorCode()).as("a timestamp it cannot answer below the HW")
                    .isEqualTo(ErrorCode.OFFSET_NOT_AVAILABLE.code());
                ListOffsetsResponseData.ListOffsetsPartitionResponse earliest = listOffset(client, 9, -2L);
                assertThat(earliest.errorCode()).isEqualTo(ErrorCode.NONE.code());
                assertThat(earliest.offset()).isZero();

                long broker2Epoch = after.brokers().get(2).epoch();
                // The follower's log has epoch 0 up to offset 5, but epoch 0 ended at 3 here: DivergingEpoch, on the wire.
                FetchResponseData.PartitionData diverged = fetchPartition(client.send(ApiMessageType.FETCH, 17, fetch(17, 2, broker2Epoch, 5, 1, 0)));
                assertThat(ErrorCode.forCode(diverged.errorCode())).isEqualTo(ErrorCode.NONE);
                assertThat(diverged.divergingEpoch().epoch()).isZero();
                assertThat(diverged.divergingEpoch().endOffset()).isEqualTo(3);
                assertThat(partition.remoteReplica(2).logEndOffset()).isEqualTo(-1L);

                // Before v15 the replica id is the request's ReplicaId: a follower reads past the high watermark.
                FetchResponseData.PartitionData caughtUpTo0 = fetchPartition(client.send(ApiMessageType.FETCH, 14, fetch(14, 2, -1L, 0, 1, -1)));
                assertThat(caughtUpTo0.records().sizeInBytes()).isPositive();
                assertThat(partition.remoteReplica(2).logEndOffset()).isZero();

                FetchResponseData.PartitionData caughtUp = fetchPartition(client.send(ApiMessageType.FETCH, 17, fetch(17, 2, broker2Epoch, 3, 1, 0)));
                assertThat(caughtUp.highWatermark()).as("the ISR's minimum end offset").isEqualTo(3);
                ListOffsetsResponseData.ListOffsetsPartitionResponse latest = listOffset(client, 9, -1L);
                assertThat(latest.errorCode()).isEqualTo(ErrorCode.NONE.code());
                assertThat(latest.offset()).isEqualTo(3);
            }
        }
    }

    private static ProduceRequestData produce(String topic, int count) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0);
        for (int i = 0; i < count; i++) {
            builder.append(System.currentTimeMillis(), null, ("v" + i).getBytes(StandardCharsets.UTF_8));
        }
        return new ProduceRequestData().setAcks((short) 1).setTimeoutMs(10_000).setTopicData(List.of(new ProduceRequestData.TopicProduceData()
            .setName(topic).setPartitionData(List.of(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(builder.build())))));
    }

    /** A sessionless fetch of kip207-0, by name (up to v12) and by id (v13+). */
    private FetchRequestData fetch(int version, int replicaId, long replicaEpoch, long offset, int currentLeaderEpoch, int lastFetchedEpoch) {
        FetchRequestData.FetchTopic topic = new FetchRequestData.FetchTopic().setTopic("kip207").setTopicId(topicId).setPartitions(List.of(
            new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(offset).setPartitionMaxBytes(1 << 20)
                .setCurrentLeaderEpoch(currentLeaderEpoch).setLastFetchedEpoch(lastFetchedEpoch).setLogStartOffset(0)));
        FetchRequestData request = new FetchRequestData().setReplicaId(version < 15 ? replicaId : -1).setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20)
            .setIsolationLevel((byte) 0).setSessionId(0).setSessionEpoch(-1).setTopics(List.of(topic));
        if (version >= 15) {
            request.replicaState().setReplicaId(replicaId).setReplicaEpoch(replicaEpoch);
        }
        return request;
    }

    private static FetchResponseData.PartitionData fetchPartition(FetchResponseData response) {
        assertThat(ErrorCode.forCode(response.errorCode())).isEqualTo(ErrorCode.NONE);
        return response.responses().get(0).partitions().get(0);
    }

    private static ListOffsetsResponseData.ListOffsetsPartitionResponse listOffset(RawClient client, int version, long timestamp)
        throws Exception {
        ListOffsetsRequestData request = new ListOffsetsRequestData().setReplicaId(-1).setIsolationLevel((byte) 0).setTopics(List.of(
            new ListOffsetsRequestData.ListOffsetsTopic().setName("kip207").setPartitions(List.of(
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(timestamp).setCurrentLeaderEpoch(-1)))));
        ListOffsetsResponseData response = client.send(ApiMessageType.LIST_OFFSETS, version, request);
        return response.topics().get(0).partitions().get(0);
    }
}
