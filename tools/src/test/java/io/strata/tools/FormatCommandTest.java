package io.strata.tools;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code strata format} as {@code kafka-storage format} (KIP-853 dynamic quorums). */
class FormatCommandTest {
    @TempDir
    Path dir;

    private Path config(int port) throws Exception {
        Path file = dir.resolve("controller.properties");
        Files.writeString(file, String.join("\n", "node.id=1", "process.roles=controller", "listeners=CONTROLLER://127.0.0.1:" + port,
            "controller.listener.names=CONTROLLER", "listener.security.protocol.map=CONTROLLER:PLAINTEXT",
            "controller.quorum.bootstrap.servers=127.0.0.1:" + port, "log.dirs=" + dir.resolve("data")) + "\n");
        return file;
    }

    @Test
    void standaloneFormatsTheDirectoryAndWritesTheBootstrapCheckpoint() throws Exception {
        CliRunner.Result result = CliRunner.run("format", "--config", config(19093).toString(), "--cluster-id", "MkU3OEVBNTcwNTJENDM2Qg", "--standalone");
        assertThat(result.exitCode()).as("%s", result).isZero();
        assertThat(result.out()).contains("metadata directory id");
        assertThat(dir.resolve("data").resolve("meta.properties")).exists();
        assertThat(dir.resolve("data").resolve("__cluster_metadata-0").resolve("00000000000000000000-0000000000.checkpoint")).exists();
        CliRunner.Result again = CliRunner.run("format", "--config", config(19093).toString(), "--cluster-id", "MkU3OEVBNTcwNTJENDM2Qg", "--standalone");
        assertThat(again.exitCode()).as("%s", again).isEqualTo(1);
        assertThat(again.err()).contains("already formatted");
    }

    @Test
    void theQuorumModesExcludeEachOther() throws Exception {
        CliRunner.Result result = CliRunner.run("format", "--config", config(19094).toString(), "--cluster-id", "MkU3OEVBNTcwNTJENDM2Qg", "--standalone",
            "--no-initial-controllers");
        assertThat(result.exitCode()).as("%s", result).isNotZero();
        assertThat(dir.resolve("data").resolve("meta.properties")).doesNotExist();
    }
}
