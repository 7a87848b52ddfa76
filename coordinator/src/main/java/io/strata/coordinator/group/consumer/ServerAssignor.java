package io.strata.coordinator.group.consumer;

import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.UUID;

/**
 * A server-side partition assignor (KIP-848): computes the target assignment of a consumer
 * group from its members' subscriptions and the partition counts of the subscribed topics.
 * Members choose one with {@code group.remote.assignor}; the broker offers those in
 * {@code group.consumer.assignors}.
 *
 * <p>Implementations are deterministic (same spec, same result) and return an entry for every
 * member. Every partition of a subscribed topic goes to exactly one member subscribed to it.
 */
public interface ServerAssignor {
    /** What the assignor knows of a member: the topic ids it subscribes to and its current target (for stickiness). */
    record MemberSpec(Set<UUID> subscribedTopicIds, Assignment currentAssignment) {
    }

    /**
     * @param members         by member id (sorted, so iteration order is deterministic)
     * @param partitionCounts the partition count of every topic any member subscribes to
     */
    record GroupSpec(SortedMap<String, MemberSpec> members, Map<UUID, Integer> partitionCounts) {
    }

    String name();

    /** The new target assignment: member id → partitions. */
    Map<String, Assignment> assign(GroupSpec spec);
}
