package io.strata.server.api;

import io.strata.metadata.MetadataImage;
import io.strata.metadata.TopicImage;
import io.strata.metadata.record.PartitionRecord;
import io.strata.metadata.record.RegisterBrokerRecord;
import io.strata.metadata.record.TopicRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.DescribeTopicPartitionsResponseData;
import io.strata.protocol.message.MetadataResponseData;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Metadata and DescribeTopicPartitions report the same leader and offline replicas for every
 * kind of leader, as Kafka's KRaft metadata cache does: a registered leader with the listener is
 * reported even when fenced; an unregistered one or none is -1 with LEADER_NOT_AVAILABLE; one
 * without the listener is -1 with LISTENER_NOT_FOUND from Metadata v6 (LEADER_NOT_AVAILABLE
 * before); DescribeTopicPartitions has no partition error.
 */
class PartitionLeadersTest {
    private static final String LISTENER = "PLAINTEXT";
    private static final UUID TOPIC_ID = new UUID(7, 7);

    /** Broker 1 unfenced, 2 fenced (both on PLAINTEXT), 3 unfenced on another listener only; partition p is led by LEADERS[p]. */
    private static final int[] LEADERS = {1, 2, 3, 4, -1};

    private static MetadataImage image() {
        List<ApiMessage> records = new ArrayList<>();
        records.add(broker(1, LISTENER, false));
        records.add(broker(2, LISTENER, true));
        records.add(broker(3, "INTERNAL", false));
        records.add(new TopicRecord().setName("t").setTopicId(TOPIC_ID));
        for (int partition = 0; partition < LEADERS.length; partition++) {
            PartitionRecord record = new PartitionRecord().setTopicId(TOPIC_ID).setPartitionId(partition).setLeader(LEADERS[partition])
                .setLeaderEpoch(3).setPartitionEpoch(3);
            for (int replica : new int[] {1, 2, 3, 4}) {
                record.replicas().add(replica);
                record.isr().add(replica);
            }
            records.add(record);
        }
        return MetadataImage.EMPTY.apply(records, records.size() - 1);
    }

    private static RegisterBrokerRecord broker(int id, String listener, boolean fenced) {
        RegisterBrokerRecord record = new RegisterBrokerRecord().setBrokerId(id).setBrokerEpoch(10 + id).setIncarnationId(new UUID(id, id))
            .setFenced(fenced);
        record.endPoints().add(new RegisterBrokerRecord.BrokerEndpoint().setName(listener).setHost("127.0.0.1").setPort(9000 + id)
            .setSecurityProtocol((short) 0));
        return record;
    }

    @Test
    void metadataAndDescribeTopicPartitionsReportTheSameLeadersWithKafkasErrors() {
        MetadataImage image = image();
        TopicImage topic = image.topic("t");
        MetadataResponseData.MetadataResponseTopic v12 = MetadataHandler.describe(image, topic, false, LISTENER, (short) 12);
        MetadataResponseData.MetadataResponseTopic v5 = MetadataHandler.describe(image, topic, false, LISTENER, (short) 5);
        List<Integer> expectedLeaders = List.of(1, 2, -1, -1, -1);
        List<ErrorCode> expectedV12 = List.of(ErrorCode.NONE, ErrorCode.NONE, ErrorCode.LISTENER_NOT_FOUND, ErrorCode.LEADER_NOT_AVAILABLE,
            ErrorCode.LEADER_NOT_AVAILABLE);
        List<ErrorCode> expectedV5 = List.of(ErrorCode.NONE, ErrorCode.NONE, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.LEADER_NOT_AVAILABLE,
            ErrorCode.LEADER_NOT_AVAILABLE);
        for (int partition = 0; partition < LEADERS.length; partition++) {
            DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponsePartition described =
                DescribeTopicPartitionsHandler.describe(image, partition, topic.partition(partition), LISTENER);
            MetadataResponseData.MetadataResponsePartition metadata = v12.partitions().get(partition);
            String what = "partition " + partition + " led by " + LEADERS[partition];
            assertThat(metadata.leaderId()).as(what).isEqualTo(expectedLeaders.get(partition));
            assertThat(described.leaderId()).as(what).isEqualTo(metadata.leaderId());
            assertThat(v5.partitions().get(partition).leaderId()).as(what).isEqualTo(metadata.leaderId());
            assertThat(ErrorCode.forCode(metadata.errorCode())).as(what).isEqualTo(expectedV12.get(partition));
            assertThat(ErrorCode.forCode(v5.partitions().get(partition).errorCode())).as(what).isEqualTo(expectedV5.get(partition));
            assertThat(ErrorCode.forCode(described.errorCode())).as(what).isEqualTo(ErrorCode.NONE);
            assertThat(metadata.offlineReplicas()).as(what).containsExactly(2, 3, 4);
            assertThat(described.offlineReplicas()).as(what).containsExactly(2, 3, 4);
            assertThat(described.leaderEpoch()).isEqualTo(metadata.leaderEpoch()).isEqualTo(3);
        }
    }
}
