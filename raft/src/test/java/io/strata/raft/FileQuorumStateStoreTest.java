package io.strata.raft;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FileQuorumStateStoreTest {
    @TempDir
    Path dir;

    @Test
    void roundTripsInKafkasLayout() throws IOException {
        FileQuorumStateStore store = new FileQuorumStateStore(dir);
        assertThat(store.read()).isNull();
        store.write(new ElectionState(7, 2, -1));
        assertThat(Files.readString(store.file(), StandardCharsets.UTF_8))
            .isEqualTo("{\"leaderId\":2,\"leaderEpoch\":7,\"votedId\":-1,\"votedDirectoryId\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"data_version\":1}\n");
        assertThat(store.read()).isEqualTo(new ElectionState(7, 2, -1));
        store.write(new ElectionState(8, -1, 3));
        assertThat(new FileQuorumStateStore(dir).read()).isEqualTo(new ElectionState(8, -1, 3));
    }

    @Test
    void aDamagedFileIsAnErrorNotAnEmptyState() throws IOException {
        FileQuorumStateStore store = new FileQuorumStateStore(dir);
        Files.writeString(store.file(), "{\"leaderId\":2,\"leaderEpoch\":7\n");
        assertThatThrownBy(store::read).isInstanceOf(IOException.class).hasMessageContaining("not a quorum state");
        Files.writeString(store.file(), "{\"leaderId\":2,\"leaderEpoch\":7,\"votedId\":-1,\"votedDirectoryId\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"data_version\":0}\n");
        assertThatThrownBy(store::read).isInstanceOf(IOException.class).hasMessageContaining("data_version 0");
        Files.writeString(store.file(), "{\"leaderId\":-7,\"leaderEpoch\":7,\"votedId\":-1,\"votedDirectoryId\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"data_version\":1}\n");
        assertThatThrownBy(store::read).isInstanceOf(IOException.class).hasMessageContaining("invalid quorum state");
    }
}
