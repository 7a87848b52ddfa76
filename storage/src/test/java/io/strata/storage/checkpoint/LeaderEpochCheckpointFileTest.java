package io.strata.storage.checkpoint;

import io.strata.storage.EpochEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LeaderEpochCheckpointFileTest {
    @TempDir
    Path dir;

    private Path file() {
        return dir.resolve(LeaderEpochCheckpointFile.FILE_NAME);
    }

    @Test
    void aMissingFileReadsAsNoEntries() throws IOException {
        assertThat(new LeaderEpochCheckpointFile(file()).read()).isEmpty();
    }

    @Test
    void entriesRoundTripInKafkasFormat() throws IOException {
        List<EpochEntry> entries = List.of(new EpochEntry(0, 0), new EpochEntry(3, 1520), new EpochEntry(Integer.MAX_VALUE, Long.MAX_VALUE));
        LeaderEpochCheckpointFile checkpoint = new LeaderEpochCheckpointFile(file());
        checkpoint.write(entries);
        assertThat(Files.readString(file())).isEqualTo("0\n3\n0 0\n3 1520\n2147483647 9223372036854775807\n");
        assertThat(checkpoint.read()).isEqualTo(entries);

        checkpoint.write(List.of());
        assertThat(Files.readString(file())).isEqualTo("0\n0\n");
        assertThat(checkpoint.read()).isEmpty();
    }

    @Test
    void negativeValuesAreRefusedOnWrite() {
        LeaderEpochCheckpointFile checkpoint = new LeaderEpochCheckpointFile(file());
        assertThatThrownBy(() -> checkpoint.write(List.of(new EpochEntry(-1, 0)))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> checkpoint.write(List.of(new EpochEntry(0, -5)))).isInstanceOf(IllegalArgumentException.class);
        assertThat(Files.exists(file())).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1\n1\n0 0\n", "0\n1\n0\n", "0\n1\n0 0 0\n", "0\n1\n-1 0\n", "0\n1\n0 -1\n",
        "0\n1\n2147483648 0\n", "0\n2\n0 0\n", "0\n1\n0 0", "0\n1\nx 0\n"})
    void malformedContentIsRejected(String content) throws IOException {
        Files.writeString(file(), content);
        assertThatThrownBy(() -> new LeaderEpochCheckpointFile(file()).read()).isInstanceOf(CorruptCheckpointException.class)
            .hasMessageContaining(LeaderEpochCheckpointFile.FILE_NAME);
    }
}
