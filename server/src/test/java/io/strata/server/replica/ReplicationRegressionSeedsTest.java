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

    @Test
    void seed4010ALeaderRecordsNoOffsetFromAFetchThatDiverged() throws IOException {
        // rf=3 minIsr=1 ELR on, divergence faults: a follower holding a tail the next leader lacks fetches
        // after the producer's retry landed there; recording its offset on the DivergingEpoch answer took
        // it into the ISR and moved the high watermark over batches it held in another epoch (hand mutation).
        ReplicationSimulationTest.runDivergence(ReplicationSimulationTest.settingsFor(4010, true), tempDir, 5, 8_000, 133);
    }

    @Test
    void seed5000TheHighWatermarkStaysBelowMinIsrUnderElr() throws IOException {
        // rf=2 minIsr=2 ELR on: the ISR shrank to the leader right after an append; without strict min ISR
        // its high watermark covered that tail, and the ELR member elected next ended below it (hand mutation).
        ReplicationSimulationTest.runDivergence(ReplicationSimulationTest.minIsrSettingsFor(5000), tempDir, 5, 8_000, 133);
    }

    @Test
    void seed5003ADivergedFollowerDoesNotJoinTheIsrOnItsStaleOffset() throws IOException {
        // rf=3 minIsr=2 ELR on: the same divergence as seed 4010 under strict min ISR (hand mutation).
        ReplicationSimulationTest.runDivergence(ReplicationSimulationTest.minIsrSettingsFor(5003), tempDir, 5, 8_000, 133);
    }

    @Test
    void seed6000AFollowerOfAnUncleanLeaderTruncatesBelowItsHighWatermark() throws IOException {
        // rf=2 minIsr=1 unclean on: the out-of-sync replica elected uncleanly lacks the old leader's committed
        // tail; a DivergingEpoch truncation clamped to the follower's high watermark kept it, and the logs never
        // converged (hand mutation).
        ReplicationSimulationTest.runUnclean(ReplicationSimulationTest.uncleanSettingsFor(6000), tempDir);
    }
}
