package io.strata.chaos.workload;

import java.nio.file.Path;
import java.util.Objects;

/**
 * What a workload gets from the campaign.
 *
 * @param bootstrapServers the cluster's client listeners, {@code host:port,...}
 * @param recorder where every operation is recorded
 * @param seed the workload's seed (choices of partition, transaction size, pauses)
 * @param workDir a directory of the workload's own (client logs, kcat output)
 */
public record WorkloadContext(String bootstrapServers, Recorder recorder, long seed, Path workDir) {
    public WorkloadContext {
        Objects.requireNonNull(bootstrapServers, "bootstrapServers");
        Objects.requireNonNull(recorder, "recorder");
        Objects.requireNonNull(workDir, "workDir");
    }
}
