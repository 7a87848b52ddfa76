package io.strata.server.replica;

import io.strata.storage.TopicPartition;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Chooses the replica a consumer should fetch from (KIP-392, {@code replica.selector.class}).
 * Called on the leader for each consumer Fetch v11+ partition; the answer, when it is not the
 * leader itself, goes back as PreferredReadReplica and the consumer fetches from it next.
 *
 * <p>Implementations must be thread-safe (request handler threads call them concurrently),
 * cheap, and keep no per-client or per-partition state (nothing unbounded).
 */
public interface ReplicaSelector {
    /**
     * The preferred replica among {@code partition}'s candidates, or empty for no preference
     * (the leader serves the fetch).
     */
    Optional<ReplicaView> select(TopicPartition topicPartition, ClientMetadata client, PartitionView partition);

    /**
     * A replica the selector may choose: an in-sync replica (or the leader) that has the fetch
     * offset and an endpoint on the client's listener.
     *
     * @param rack                    its broker's {@code broker.rack}, or null
     * @param logEndOffset            its log end offset as the leader knows it
     * @param timeSinceLastCaughtUpMs how long since it was last caught up with the leader (0 for the leader)
     */
    record ReplicaView(int brokerId, String rack, long logEndOffset, long timeSinceLastCaughtUpMs) {
        /**
         * Kafka's order of "more caught up": the higher log end offset, then the more recently
         * caught up; the lower broker id last, so that the choice is deterministic.
         */
        public static final Comparator<ReplicaView> MOST_CAUGHT_UP_LAST = Comparator.comparingLong(ReplicaView::logEndOffset)
            .thenComparing(Comparator.comparingLong(ReplicaView::timeSinceLastCaughtUpMs).reversed())
            .thenComparing(Comparator.comparingInt(ReplicaView::brokerId).reversed());
    }

    /**
     * The candidates of one partition.
     *
     * @param replicas every candidate, the leader included
     * @param leader   the leader (also in {@code replicas})
     */
    record PartitionView(List<ReplicaView> replicas, ReplicaView leader) {
        public PartitionView {
            replicas = List.copyOf(replicas);
        }
    }
}
