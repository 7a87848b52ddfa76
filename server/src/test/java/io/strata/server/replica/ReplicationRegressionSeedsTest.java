package io.strata.server.replica;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Seeds of {@link ReplicationSimulationTest} that once failed, each kept as a named test with the
 * property's fault load.
 */
class ReplicationRegressionSeedsTest {
    @TempDir
    Path tempDir;

    @Test
    void seed1015AFetchAnswerOutlivesTheLeadersSegment() throws IOException {
        // rf=5 minIsr=2 ELR on: the answer held a slice of a segment the leader closed (crash) before it
        // arrived; the follower failed the partition. The harness now copies the records when it answers.
        ReplicationSimulationTest.run(ReplicationSimulationTest.settingsFor(1015, true), tempDir, 6, 8_000, 40);
    }

    @Test
    void seed3037AFetchAnswerOutlivesATruncatedSegment() throws IOException {
        // rf=2 minIsr=2 ELR on, many faults: the same, within the first 300 ms.
        ReplicationSimulationTest.run(ReplicationSimulationTest.settingsFor(3037, true), tempDir, 12, 4_000, 40);
    }
}
