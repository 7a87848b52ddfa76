package io.strata.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ReplicaCheckTest {
    @TempDir
    Path root;

    @Test
    void replicasWithEqualSegmentBytesPass() throws Exception {
        ReplicaCheck check = new ReplicaCheck(nodes(3), 0);
        for (int node = 1; node <= 3; node++) {
            segment(node, "t-0", "00000000000000000000.log", 1000);
            segment(node, "t-1", "00000000000000000000.log", 600);
            segment(node, "t-1", "00000000000000000600.log", 400);
        }

        assertThat(check.awaitReplicated("t", 2)).isNull();
        assertThat(check.diskBytes(2, "t", 1)).isEqualTo(1000);
    }

    @Test
    void aFollowerWithFewerBytesIsReportedWithEveryNodesBytes() throws Exception {
        ReplicaCheck check = new ReplicaCheck(nodes(3), 0);
        segment(1, "t-0", "00000000000000000000.log", 1000);
        segment(2, "t-0", "00000000000000000000.log", 1000);
        segment(3, "t-0", "00000000000000000000.log", 999);

        assertThat(check.awaitReplicated("t", 1)).isEqualTo("t-0:bytes_per_node=[1000,1000,999]");
    }

    @Test
    void aFollowerWithoutThePartitionsDirectoryIsUnreplicated() throws Exception {
        ReplicaCheck check = new ReplicaCheck(nodes(3), 0);
        segment(2, "t-0", "00000000000000000000.log", 10);

        assertThat(check.awaitReplicated("t", 1)).isEqualTo("t-0:bytes_per_node=[0,10,0]");
    }

    @Test
    void indexFilesAndOtherTopicsAreNotCounted() throws Exception {
        ReplicaCheck check = new ReplicaCheck(nodes(1), 0);
        segment(1, "t-0", "00000000000000000000.log", 100);
        segment(1, "t-0", "00000000000000000000.index", 10_485_760);
        segment(1, "t-00-0", "00000000000000000000.log", 5);

        assertThat(check.diskBytes(1, "t", 0)).isEqualTo(100);
    }

    @Test
    void aPartitionNobodyHoldsIsUnreplicated() throws Exception {
        ReplicaCheck check = new ReplicaCheck(nodes(2), 0);

        assertThat(check.awaitReplicated("absent", 1)).isEqualTo("absent-0:bytes_per_node=[0,0]");
    }

    private List<Path> nodes(int count) {
        return java.util.stream.IntStream.rangeClosed(1, count).mapToObj(node -> root.resolve("node-" + node).resolve("data")).toList();
    }

    private void segment(int node, String partitionDir, String file, int bytes) throws IOException {
        Path dir = root.resolve("node-" + node).resolve("data").resolve(partitionDir);
        Files.createDirectories(dir);
        Files.write(dir.resolve(file), new byte[bytes]);
    }
}
