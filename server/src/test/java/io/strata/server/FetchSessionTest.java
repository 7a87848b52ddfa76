package io.strata.server;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * KIP-227 fetch session epochs as the Java consumer drives them: the full fetch that opens a session
 * leaves it expecting epoch 1, each incremental fetch moves it on by one, and a replayed epoch is
 * refused with INVALID_FETCH_SESSION_EPOCH.
 */
class FetchSessionTest {
    private static final int FETCH_VERSION = 12;

    @TempDir
    Path dataDir;

    private TestBroker broker;

    @BeforeEach
    void start() throws Exception {
        broker = new TestBroker(dataDir, Map.of());
        broker.createTopic("sessions", 1, Map.of());
        broker.produce("sessions", 10);
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    @Test
    void theFirstIncrementalFetchAfterOpeningASessionUsesEpochOne() throws Exception {
        try (RawClient client = new RawClient(broker.port())) {
            FetchRequestData full = request(0, 0).setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("sessions")
                .setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0)
                    .setPartitionMaxBytes(1 << 20).setCurrentLeaderEpoch(-1).setLogStartOffset(-1)))));
            FetchResponseData opened = client.send(ApiMessageType.FETCH, FETCH_VERSION, full);
            assertThat(opened.errorCode()).isEqualTo(ErrorCode.NONE.code());
            assertThat(opened.sessionId()).isNotZero();
            assertThat(opened.responses()).hasSize(1);
            assertThat(opened.responses().get(0).partitions().get(0).highWatermark()).isEqualTo(10);

            int sessionId = opened.sessionId();
            for (int epoch = 1; epoch <= 3; epoch++) {
                FetchResponseData incremental = client.send(ApiMessageType.FETCH, FETCH_VERSION, request(sessionId, epoch));
                assertThat(incremental.errorCode()).as("incremental fetch with epoch %d", epoch).isEqualTo(ErrorCode.NONE.code());
                assertThat(incremental.sessionId()).isEqualTo(sessionId);
            }

            FetchResponseData replayed = client.send(ApiMessageType.FETCH, FETCH_VERSION, request(sessionId, 3));
            assertThat(replayed.errorCode()).isEqualTo(ErrorCode.INVALID_FETCH_SESSION_EPOCH.code());
            FetchResponseData ahead = client.send(ApiMessageType.FETCH, FETCH_VERSION, request(sessionId, 5));
            assertThat(ahead.errorCode()).isEqualTo(ErrorCode.INVALID_FETCH_SESSION_EPOCH.code());
            FetchResponseData next = client.send(ApiMessageType.FETCH, FETCH_VERSION, request(sessionId, 4));
            assertThat(next.errorCode()).as("a refused epoch does not move the session on").isEqualTo(ErrorCode.NONE.code());
        }
    }

    @Test
    void aPartitionThatGotDataMovesToTheEndSoAResponseLimitStarvesNoOne() throws Exception {
        broker.createTopic("rotating", 2, Map.of());
        broker.produce("rotating", 0, 5);
        broker.produce("rotating", 1, 5);
        try (RawClient client = new RawClient(broker.port())) {
            // max.bytes 1: each answer carries the first batch of the first partition in the session's order (KIP-74), no more.
            FetchRequestData full = request(0, 0).setMaxBytes(1).setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("rotating")
                .setPartitions(List.of(partition(0), partition(1)))));
            FetchResponseData opened = client.send(ApiMessageType.FETCH, FETCH_VERSION, full);
            assertThat(partitionsWithRecords(opened)).containsExactly(0);

            int sessionId = opened.sessionId();
            // The client moves no offset: only the order of the leader's session decides which partition is read.
            FetchResponseData first = client.send(ApiMessageType.FETCH, FETCH_VERSION, request(sessionId, 1).setMaxBytes(1));
            assertThat(partitionsWithRecords(first)).containsExactly(0);
            FetchResponseData second = client.send(ApiMessageType.FETCH, FETCH_VERSION, request(sessionId, 2).setMaxBytes(1));
            assertThat(partitionsWithRecords(second)).as("partition 0 got data last time and went to the end").containsExactly(1);
            FetchResponseData third = client.send(ApiMessageType.FETCH, FETCH_VERSION, request(sessionId, 3).setMaxBytes(1));
            assertThat(partitionsWithRecords(third)).containsExactly(0);
        }
    }

    private static FetchRequestData.FetchPartition partition(int index) {
        return new FetchRequestData.FetchPartition().setPartition(index).setFetchOffset(0).setPartitionMaxBytes(1 << 20)
            .setCurrentLeaderEpoch(-1).setLogStartOffset(-1);
    }

    private static List<Integer> partitionsWithRecords(FetchResponseData response) {
        assertThat(response.errorCode()).isEqualTo(ErrorCode.NONE.code());
        return response.responses().stream().flatMap(t -> t.partitions().stream())
            .filter(p -> p.records() != null && p.records().sizeInBytes() > 0).map(FetchResponseData.PartitionData::partitionIndex).toList();
    }

    private static FetchRequestData request(int sessionId, int epoch) {
        return new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1 << 20)
            .setIsolationLevel((byte) 0).setSessionId(sessionId).setSessionEpoch(epoch).setTopics(List.of());
    }
}
