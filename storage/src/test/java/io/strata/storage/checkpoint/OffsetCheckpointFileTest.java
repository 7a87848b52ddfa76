package io.strata.storage.checkpoint;

import io.strata.storage.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OffsetCheckpointFileTest {
    @TempDir
    Path dir;

    private Path file() {
        return dir.resolve("recovery-point-offset-checkpoint");
    }

    @Test
    void aMissingFileReadsAsNoOffsets() throws IOException {
        assertThat(new OffsetCheckpointFile(file()).read()).isEmpty();
    }

    @Test
    void writesKafkasFormatSortedByTopicAndPartition() throws IOException {
        Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        offsets.put(new TopicPartition("orders", 10), 7L);
        offsets.put(new TopicPartition("my-topic.v2", 0), 1234567890123L);
        offsets.put(new TopicPartition("orders", 2), 0L);
        new OffsetCheckpointFile(file()).write(offsets);

        assertThat(Files.readString(file())).isEqualTo("0\n3\nmy-topic.v2 0 1234567890123\norders 2 0\norders 10 7\n");
        assertThat(new OffsetCheckpointFile(file()).read()).isEqualTo(offsets);
    }

    @Test
    void anEmptyMapRoundTrips() throws IOException {
        new OffsetCheckpointFile(file()).write(Map.of());
        assertThat(Files.readString(file())).isEqualTo("0\n0\n");
        assertThat(new OffsetCheckpointFile(file()).read()).isEmpty();
    }

    @Test
    void writeReplacesTheWholeFileAndLeavesNoTemporaryFile() throws IOException {
        OffsetCheckpointFile checkpoint = new OffsetCheckpointFile(file());
        Files.writeString(dir.resolve("recovery-point-offset-checkpoint.tmp"), "garbage from a crashed write");
        checkpoint.write(Map.of(new TopicPartition("a", 0), 1L, new TopicPartition("b", 0), 2L));
        checkpoint.write(Map.of(new TopicPartition("c", 1), 3L));

        assertThat(checkpoint.read()).isEqualTo(Map.of(new TopicPartition("c", 1), 3L));
        assertThat(Files.exists(dir.resolve("recovery-point-offset-checkpoint.tmp"))).isFalse();
        try (var files = Files.list(dir)) {
            assertThat(files).containsExactly(file());
        }
    }

    @Test
    void anEntryTheFormatCannotCarryIsRefusedBeforeAnythingIsWritten() throws IOException {
        OffsetCheckpointFile checkpoint = new OffsetCheckpointFile(file());
        checkpoint.write(Map.of(new TopicPartition("a", 0), 1L));
        assertThatThrownBy(() -> checkpoint.write(Map.of(new TopicPartition("bad topic", 0), 1L)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad topic");
        assertThatThrownBy(() -> checkpoint.write(Map.of(new TopicPartition("bad\ntopic", 0), 1L)))
            .isInstanceOf(IllegalArgumentException.class);
        assertThat(checkpoint.read()).isEqualTo(Map.of(new TopicPartition("a", 0), 1L));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "",
        "1\n0\n",
        "00\n0\n",
        "0\n",
        "0\n-1\n",
        "0\n2\na 0 5\n",
        "0\n1\na 0 5\nb 0 6\n",
        "0\n1\na 0\n",
        "0\n1\na 0 5 6\n",
        "0\n1\na x 5\n",
        "0\n1\na -1 5\n",
        "0\n1\na 0 05\n",
        "0\n1\na 0 +5\n",
        "0\n1\na  0 5\n",
        "0\n1\n a 0 5\n",
        "0\n1\na 0 5 \n",
        "0\n1\na 0 5",
        "0\n1\na 0 99999999999999999999\n",
        "0\n2\na 0 5\na 0 6\n",
        "0\n1\na 0 5\n\n",
        "0\r\n1\r\na 0 5\r\n",
    })
    void malformedContentIsRejected(String content) throws IOException {
        Files.writeString(file(), content);
        assertThatThrownBy(() -> new OffsetCheckpointFile(file()).read())
            .isInstanceOf(CorruptCheckpointException.class)
            .hasMessageContaining(file().toString());
    }

    @Test
    void theErrorNamesTheLineAtFault() throws IOException {
        Files.writeString(file(), "0\n3\na 0 5\nb 0 6\nc zero 7\n");
        assertThatThrownBy(() -> new OffsetCheckpointFile(file()).read())
            .isInstanceOfSatisfying(CorruptCheckpointException.class, e -> {
                assertThat(e.lineNumber()).isEqualTo(5);
                assertThat(e.file()).isEqualTo(file());
                assertThat(e).hasMessageContaining("line 5").hasMessageContaining("c zero 7");
            });
    }

    @Test
    void invalidUtf8IsRejected() throws IOException {
        Files.write(file(), new byte[] {'0', '\n', '1', '\n', (byte) 0xC3, ' ', '0', ' ', '1', '\n'});
        assertThatThrownBy(() -> new OffsetCheckpointFile(file()).read()).isInstanceOf(CorruptCheckpointException.class)
            .hasMessageContaining("UTF-8");
    }

    @Test
    void negativeOffsetsRoundTrip() throws IOException {
        Map<TopicPartition, Long> offsets = Map.of(new TopicPartition("t", 0), -1L);
        new OffsetCheckpointFile(file()).write(offsets);
        assertThat(new OffsetCheckpointFile(file()).read()).isEqualTo(offsets);
    }
}
