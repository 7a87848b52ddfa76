package io.strata.chaos.campaign;

import io.strata.chaos.workload.Workload;

/**
 * Makes a workload from its command-line name and seed; the campaign takes workloads only through this, so the
 * registry ({@code io.strata.chaos.workload.Workloads::create}) and test workloads plug in alike.
 */
@FunctionalInterface
public interface WorkloadFactory {

    /** @throws IllegalArgumentException for an unknown name */
    Workload create(String name, long seed);
}
