package io.strata.server;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ElectLeadersRequestData;
import io.strata.protocol.message.ElectLeadersResponseData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ElectLeaders (key 43) on the wire against a node, through the broker handler to the controller
 * and back, at v0 (no election type, no top-level error), v1 and v2: a partition whose preferred
 * replica leads is ELECTION_NOT_NEEDED, an unknown one UNKNOWN_TOPIC_OR_PARTITION, a null topic
 * list leaves out the partitions needing nothing, an unknown election type is INVALID_REQUEST at
 * the top level and for every named partition.
 */
class ElectLeadersProtocolTest {
    private static final String TOPIC = "elect";

    @TempDir
    Path dataDir;

    private TestBroker broker;
    private RawClient client;

    @BeforeEach
    void start() throws Exception {
        broker = new TestBroker(dataDir, Map.of());
        broker.createTopic(TOPIC, 2, Map.of());
        client = new RawClient(broker.port());
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        broker.close();
    }

    private static ElectLeadersRequestData request(byte type, String topic, Integer... partitions) {
        ElectLeadersRequestData request = new ElectLeadersRequestData().setElectionType(type);
        request.topicPartitions().add(new ElectLeadersRequestData.TopicPartitions().setTopic(topic).setPartitions(new ArrayList<>(List.of(partitions))));
        return request;
    }

    private static List<Short> codes(ElectLeadersResponseData response) {
        return response.replicaElectionResults().stream().flatMap(topic -> topic.partitionResult().stream())
            .map(ElectLeadersResponseData.PartitionResult::errorCode).toList();
    }

    @Test
    void everyVersionAnswersPerPartitionFromTheController() throws Exception {
        for (int version = 0; version <= 2; version++) {
            ElectLeadersResponseData response = client.send(ApiMessageType.ELECT_LEADERS, version, request((byte) 0, TOPIC, 0, 1));
            assertThat(response.errorCode()).as("v%d", version).isZero();
            assertThat(codes(response)).as("v%d", version)
                .containsExactly(ErrorCode.ELECTION_NOT_NEEDED.code(), ErrorCode.ELECTION_NOT_NEEDED.code());

            ElectLeadersResponseData unknown = client.send(ApiMessageType.ELECT_LEADERS, version, request((byte) 0, "missing", 0));
            assertThat(codes(unknown)).as("v%d", version).containsExactly(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code());
            assertThat(unknown.replicaElectionResults().get(0).topic()).isEqualTo("missing");
        }
        ElectLeadersResponseData unclean = client.send(ApiMessageType.ELECT_LEADERS, 2, request((byte) 1, TOPIC, 1));
        assertThat(codes(unclean)).containsExactly(ErrorCode.ELECTION_NOT_NEEDED.code());
    }

    @Test
    void aNullTopicListLeavesOutPartitionsNeedingNoElection() throws Exception {
        ElectLeadersResponseData response = client.send(ApiMessageType.ELECT_LEADERS, 2, new ElectLeadersRequestData().setTopicPartitions(null));
        assertThat(response.errorCode()).isZero();
        assertThat(codes(response)).isEmpty();
        assertThat(response.replicaElectionResults()).extracting(ElectLeadersResponseData.ReplicaElectionResult::topic).contains(TOPIC);
    }

    @Test
    void anUnknownElectionTypeIsAnInvalidRequestEverywhere() throws Exception {
        ElectLeadersResponseData response = client.send(ApiMessageType.ELECT_LEADERS, 2, request((byte) 5, TOPIC, 0, 1));
        assertThat(response.errorCode()).isEqualTo(ErrorCode.INVALID_REQUEST.code());
        assertThat(codes(response)).containsExactly(ErrorCode.INVALID_REQUEST.code(), ErrorCode.INVALID_REQUEST.code());
    }
}
