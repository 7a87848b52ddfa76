package io.strata.storage.checkpoint;

import io.strata.protocol.Uuids;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PartitionMetadataFileTest {
    @TempDir
    Path dir;

    @Test
    void aMissingFileReadsAsNoTopicId() throws IOException {
        PartitionMetadataFile metadata = new PartitionMetadataFile(dir);
        assertThat(metadata.exists()).isFalse();
        assertThat(metadata.read()).isEmpty();
        assertThat(metadata.file()).isEqualTo(dir.resolve("partition.metadata"));
    }

    @Test
    void recordWritesTheTopicIdAsKafkaPrintsIt() throws IOException {
        UUID topicId = new UUID(0x0123456789ABCDEFL, 0xFEDCBA9876543210L);
        PartitionMetadataFile metadata = new PartitionMetadataFile(dir);
        metadata.record(topicId);

        String kafkaText = new Uuid(topicId.getMostSignificantBits(), topicId.getLeastSignificantBits()).toString();
        assertThat(Files.readString(metadata.file())).isEqualTo("version: 0\ntopic_id: " + kafkaText + "\n");
        assertThat(metadata.exists()).isTrue();
        assertThat(metadata.read()).contains(topicId);
        assertThat(Files.exists(dir.resolve("partition.metadata.tmp"))).isFalse();
    }

    @Test
    void recordReplacesAnEarlierId() throws IOException {
        PartitionMetadataFile metadata = new PartitionMetadataFile(dir);
        UUID first = Uuids.randomTopicId();
        UUID second = Uuids.randomTopicId();
        metadata.record(first);
        metadata.record(second);
        assertThat(metadata.read()).contains(second);
    }

    @Test
    void theZeroIdIsRefused() {
        assertThatThrownBy(() -> new PartitionMetadataFile(dir).record(Uuids.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aFileWrittenByKafkaIsRead() throws IOException {
        Uuid kafkaId = Uuid.randomUuid();
        Files.writeString(dir.resolve("partition.metadata"), "version: 0\ntopic_id: " + kafkaId + "\n");
        assertThat(new PartitionMetadataFile(dir).read())
            .contains(new UUID(kafkaId.getMostSignificantBits(), kafkaId.getLeastSignificantBits()));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "",
        "version: 0\n",
        "version: 1\ntopic_id: ASNFZ4mrze_-3LqYdlQyEA\n",
        "version:0\ntopic_id: ASNFZ4mrze_-3LqYdlQyEA\n",
        "topic_id: ASNFZ4mrze_-3LqYdlQyEA\nversion: 0\n",
        "version: 0\ntopic_id: ASNFZ4mrze_-3LqYdlQyEA",
        "version: 0\ntopic_id: ASNFZ4mrze_-3LqYdlQyEA\nextra: 1\n",
        "version: 0\ntopic_id: not-base64!\n",
        "version: 0\ntopic_id: ASNFZ4mrze\n",
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n",
        "version: 0\ntopic_id:  ASNFZ4mrze_-3LqYdlQyEA\n",
    })
    void malformedContentIsRejected(String content) throws IOException {
        Files.writeString(dir.resolve("partition.metadata"), content);
        assertThatThrownBy(() -> new PartitionMetadataFile(dir).read()).isInstanceOf(CorruptCheckpointException.class)
            .hasMessageContaining("partition.metadata");
    }
}
