package io.strata.server.replica;

import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.MetadataImage;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Kafka's {@code ReplicaManager.findPreferredReadReplica} (KIP-392): on the leader, for a
 * consumer's Fetch v11+, which replica the consumer should read from instead. The candidates are
 * the leader and the ISR members whose log (as the leader last saw it) holds the fetch offset
 * (log start ≤ offset ≤ log end); a replica out of the ISR is never offered, as it may lag
 * indefinitely. Each candidate's rack and reachability come from the metadata image: a broker
 * that is fenced or has no endpoint on the client's listener is dropped if chosen. The leader
 * is never named (the answer is then "none": the leader reads).
 *
 * <p>Stateless; thread-safe as long as the selector is.
 */
final class PreferredReadReplica {
    /** No preferred replica: the fetch is read where it arrived. */
    static final int NONE = -1;

    private PreferredReadReplica() {
    }

    /**
     * The preferred read replica's broker id, or {@link #NONE}.
     *
     * @param partition a partition this node leads
     */
    static int find(ReplicaSelector selector, Partition partition, ClientMetadata client, long fetchOffset, MetadataImage image, long nowMs) {
        int leaderId = partition.leaderId();
        ReplicaSelector.ReplicaView leader = new ReplicaSelector.ReplicaView(leaderId, rackOf(image, leaderId), partition.log().logEndOffset(), 0L);
        List<ReplicaSelector.ReplicaView> candidates = new ArrayList<>();
        candidates.add(leader);
        Set<Integer> isr = partition.isr();
        for (int brokerId : partition.assignment()) {
            RemoteReplica replica = brokerId == leaderId || !isr.contains(brokerId) ? null : partition.remoteReplica(brokerId);
            if (replica == null || replica.logEndOffset() < fetchOffset || replica.logStartOffset() > fetchOffset) {
                continue;
            }
            candidates.add(new ReplicaSelector.ReplicaView(brokerId, rackOf(image, brokerId), replica.logEndOffset(),
                Math.max(0L, nowMs - replica.lastCaughtUpTimeMs())));
        }
        Optional<ReplicaSelector.ReplicaView> chosen = selector.select(partition.topicPartition(), client,
            new ReplicaSelector.PartitionView(candidates, leader));
        if (chosen.isEmpty() || chosen.get().brokerId() == leaderId || !reachable(image, chosen.get().brokerId(), client.listenerName())) {
            return NONE;
        }
        return chosen.get().brokerId();
    }

    private static String rackOf(MetadataImage image, int brokerId) {
        BrokerRegistration broker = image.brokers().get(brokerId);
        return broker == null ? null : broker.rack();
    }

    /** Kafka's getPartitionReplicaEndpoints: an unfenced broker with an endpoint on the listener. */
    private static boolean reachable(MetadataImage image, int brokerId, String listenerName) {
        BrokerRegistration broker = image.brokers().get(brokerId);
        return broker != null && !broker.fenced() && listenerName != null && broker.endpoint(listenerName) != null;
    }
}
