package io.strata.tools.client;

import io.strata.protocol.ErrorCode;

import java.util.List;

/**
 * One partition as Metadata describes it.
 *
 * @param leaderId    the leader's node id, or -1 while there is none
 * @param leaderEpoch the leader epoch, or -1 if the broker did not say (Metadata before v7)
 * @param error       the partition's error in the Metadata response (NONE, or e.g. LEADER_NOT_AVAILABLE)
 */
public record PartitionInfo(int partition, int leaderId, int leaderEpoch, List<Integer> replicas, List<Integer> isr,
                            List<Integer> offlineReplicas, ErrorCode error) {
    public PartitionInfo {
        replicas = List.copyOf(replicas);
        isr = List.copyOf(isr);
        offlineReplicas = List.copyOf(offlineReplicas);
    }

    public boolean hasLeader() {
        return leaderId >= 0;
    }
}
