package io.strata.tools.client;

import io.strata.protocol.ByteBufferWriter;
import io.strata.protocol.message.ConsumerProtocolAssignment;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class GroupAdminTest {
    private static byte[] assignment(short version, int trailingBytes) {
        ConsumerProtocolAssignment assignment = new ConsumerProtocolAssignment();
        assignment.assignedPartitions().add(new ConsumerProtocolAssignment.TopicPartition().setTopic("orders")
            .setPartitions(new ArrayList<>(List.of(2, 0))));
        assignment.assignedPartitions().add(new ConsumerProtocolAssignment.TopicPartition().setTopic("audit")
            .setPartitions(new ArrayList<>(List.of(1))));
        short written = (short) Math.min(version, ConsumerProtocolAssignment.HIGHEST_SUPPORTED_VERSION);
        ByteBuffer buffer = ByteBuffer.allocate(2 + assignment.size(written) + trailingBytes);
        buffer.putShort(version);
        assignment.write(new ByteBufferWriter(buffer), written);
        return buffer.array();
    }

    @Test
    void decodesTheConsumerProtocolAssignmentOfEveryVersion() {
        for (short version = 0; version <= ConsumerProtocolAssignment.HIGHEST_SUPPORTED_VERSION; version++) {
            assertThat(GroupAdmin.decodeAssignment(assignment(version, 0))).as("version %d", version).containsExactly(
                new TopicPartition("orders", 2), new TopicPartition("orders", 0), new TopicPartition("audit", 1));
        }
    }

    @Test
    void aNewerVersionIsReadAsTheNewestWeKnowIgnoringWhatFollows() {
        assertThat(GroupAdmin.decodeAssignment(assignment((short) 9, 16))).hasSize(3);
    }

    @Test
    void emptyOrForeignBytesMeanNoPartitions() {
        assertThat(GroupAdmin.decodeAssignment(new byte[0])).isEmpty();
        assertThat(GroupAdmin.decodeAssignment(null)).isEmpty();
        assertThat(GroupAdmin.decodeAssignment(new byte[] {0, 0, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff})).isEmpty();
        assertThat(GroupAdmin.decodeAssignment(new byte[] {(byte) 0xff, (byte) 0xff, 1, 2})).isEmpty();
    }

    @Test
    void groupTypesPrintAsKafkaPrintsThem() {
        assertThat(GroupAdmin.displayType("classic")).isEqualTo("Classic");
        assertThat(GroupAdmin.displayType("consumer")).isEqualTo("Consumer");
        assertThat(GroupAdmin.displayType(null)).isEqualTo("-");
    }
}
