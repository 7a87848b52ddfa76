package io.strata.server.replica;

import io.strata.metadata.MetadataImage;
import io.strata.metadata.PartitionRegistration;
import io.strata.metadata.TopicImage;
import io.strata.storage.TopicPartition;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What a new metadata image changes for the replicas of one node (Kafka's {@code LocalReplicaChanges}):
 * per partition of a touched topic, whether this node became its leader or a follower, got a new
 * leader (epoch), saw only an ISR / partition-epoch / assignment change, or stopped hosting it.
 * Topics whose {@link TopicImage} the two images share are skipped (a batch that did not touch
 * them). Pure: computed from the two images alone; the replica manager applies it.
 *
 * @param deleted        partitions of topics the new image no longer has (removed first: a topic
 *                       deleted and created again under its name in one image keeps its new partition)
 * @param leaders        partitions this node leads in the new image, changed since the previous one
 * @param followers      partitions this node follows in the new image, changed since the previous one
 * @param reassignedAway partitions whose assignment no longer names this node
 */
public record LocalReplicaChanges(List<TopicPartition> deleted, List<Change> leaders, List<Change> followers,
                                  List<TopicPartition> reassignedAway) {
    /** How a hosted partition changed. */
    public enum Kind {
        /** Not hosted here in the previous image (new topic, new partition, or this node added to it). */
        NEW,
        /** Led elsewhere (or by nobody) before, by this node now; or followed before, led now. */
        BECAME_LEADER,
        /** Led here before, not now. */
        BECAME_FOLLOWER,
        /** The same role with a new leader or leader epoch. */
        NEW_LEADER_EPOCH,
        /** The same leader and epoch: only the ISR, the partition epoch or the assignment changed. */
        ISR_ONLY
    }

    /** One hosted partition's change, with its registration in the new image. */
    public record Change(TopicPartition topicPartition, UUID topicId, PartitionRegistration registration, Kind kind) {
    }

    /** The changes {@code current} makes over {@code previous} for the replicas of {@code nodeId}. */
    public static LocalReplicaChanges of(MetadataImage previous, MetadataImage current, int nodeId) {
        List<TopicPartition> deleted = new ArrayList<>();
        for (TopicImage topic : previous.topicsByName().values()) {
            if (current.topic(topic.id()) == null) {
                for (int index : topic.partitions().keySet()) {
                    deleted.add(new TopicPartition(topic.name(), index));
                }
            }
        }
        List<Change> leaders = new ArrayList<>();
        List<Change> followers = new ArrayList<>();
        List<TopicPartition> reassignedAway = new ArrayList<>();
        for (TopicImage topic : current.topicsByName().values()) {
            TopicImage before = previous.topic(topic.id());
            if (before == topic) {
                continue;
            }
            for (Map.Entry<Integer, PartitionRegistration> entry : topic.partitions().entrySet()) {
                TopicPartition topicPartition = new TopicPartition(topic.name(), entry.getKey());
                PartitionRegistration now = entry.getValue();
                PartitionRegistration then = before == null ? null : before.partition(entry.getKey());
                boolean hostedBefore = then != null && then.hasReplica(nodeId);
                if (!now.hasReplica(nodeId)) {
                    if (hostedBefore) {
                        reassignedAway.add(topicPartition);
                    }
                    continue;
                }
                Kind kind = kind(then, hostedBefore, now, nodeId);
                if (kind != null) {
                    (now.leader() == nodeId ? leaders : followers).add(new Change(topicPartition, topic.id(), now, kind));
                }
            }
        }
        return new LocalReplicaChanges(List.copyOf(deleted), List.copyOf(leaders), List.copyOf(followers), List.copyOf(reassignedAway));
    }

    /** The kind of change, or null if the registration is the same. */
    private static Kind kind(PartitionRegistration then, boolean hostedBefore, PartitionRegistration now, int nodeId) {
        if (!hostedBefore) {
            return Kind.NEW;
        }
        boolean ledBefore = then.leader() == nodeId;
        boolean ledNow = now.leader() == nodeId;
        if (ledNow != ledBefore) {
            return ledNow ? Kind.BECAME_LEADER : Kind.BECAME_FOLLOWER;
        }
        if (then.leader() != now.leader() || then.leaderEpoch() != now.leaderEpoch()) {
            return Kind.NEW_LEADER_EPOCH;
        }
        return then.equals(now) ? null : Kind.ISR_ONLY;
    }

    /** Whether nothing changed for this node. */
    public boolean isEmpty() {
        return deleted.isEmpty() && leaders.isEmpty() && followers.isEmpty() && reassignedAway.isEmpty();
    }
}
