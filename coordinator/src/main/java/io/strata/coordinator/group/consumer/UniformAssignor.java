package io.strata.coordinator.group.consumer;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

/**
 * The "uniform" server assignor (Kafka's default): spreads all subscribed partitions evenly
 * over the members and moves as few partitions as possible when membership changes.
 *
 * <ol>
 *   <li>Every member keeps the partitions of its current assignment that still exist and that
 *       it still subscribes to.</li>
 *   <li>Unowned partitions go, most constrained first (fewest eligible members), to the eligible
 *       member with the fewest partitions (ties: member id).</li>
 *   <li>Balancing: while some member has at least two partitions more than another member that
 *       could take one of them, one such partition moves from the most to the least loaded.</li>
 * </ol>
 *
 * With identical subscriptions the result is balanced (sizes differ by at most one). With
 * different subscriptions step 3 balances wherever subscriptions allow; the result is valid
 * but not guaranteed optimal. Cost: step 3 makes at most one move per partition, each found in
 * O(members² · partitions of the donor) in the worst case (O(members + donor partitions) when
 * subscriptions are identical).
 */
public final class UniformAssignor implements ServerAssignor {
    public static final String NAME = "uniform";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Map<String, Assignment> assign(GroupSpec spec) {
        Map<String, TreeSet<Partition>> owned = new TreeMap<>();
        for (String memberId : spec.members().keySet()) {
            owned.put(memberId, new TreeSet<>());
        }
        Map<Partition, String> ownerOf = new HashMap<>();
        keepCurrent(spec, owned, ownerOf);
        assignUnowned(spec, owned, ownerOf);
        balance(spec, owned);
        Map<String, Assignment> result = new TreeMap<>();
        owned.forEach((memberId, partitions) -> {
            Map<UUID, Set<Integer>> byTopic = new TreeMap<>();
            for (Partition partition : partitions) {
                byTopic.computeIfAbsent(partition.topicId(), t -> new TreeSet<>()).add(partition.index());
            }
            result.put(memberId, Assignment.of(byTopic));
        });
        return result;
    }

    /** A topic partition, ordered by topic id then index. */
    private record Partition(UUID topicId, int index) implements Comparable<Partition> {
        @Override
        public int compareTo(Partition other) {
            int byTopic = topicId.compareTo(other.topicId);
            return byTopic != 0 ? byTopic : Integer.compare(index, other.index);
        }
    }

    private static boolean eligible(GroupSpec spec, String memberId, Partition partition) {
        return spec.members().get(memberId).subscribedTopicIds().contains(partition.topicId());
    }

    private static void keepCurrent(GroupSpec spec, Map<String, TreeSet<Partition>> owned, Map<Partition, String> ownerOf) {
        for (Map.Entry<String, MemberSpec> member : spec.members().entrySet()) {
            for (Map.Entry<UUID, SortedSet<Integer>> topic : member.getValue().currentAssignment().partitions().entrySet()) {
                Integer count = spec.partitionCounts().get(topic.getKey());
                if (count == null || !member.getValue().subscribedTopicIds().contains(topic.getKey())) {
                    continue;
                }
                for (int index : topic.getValue()) {
                    Partition partition = new Partition(topic.getKey(), index);
                    if (index < count && !ownerOf.containsKey(partition)) {
                        ownerOf.put(partition, member.getKey());
                        owned.get(member.getKey()).add(partition);
                    }
                }
            }
        }
    }

    private static void assignUnowned(GroupSpec spec, Map<String, TreeSet<Partition>> owned, Map<Partition, String> ownerOf) {
        Map<UUID, List<String>> subscribers = new HashMap<>();
        for (UUID topicId : spec.partitionCounts().keySet()) {
            List<String> eligibleMembers = new ArrayList<>();
            for (Map.Entry<String, MemberSpec> member : spec.members().entrySet()) {
                if (member.getValue().subscribedTopicIds().contains(topicId)) {
                    eligibleMembers.add(member.getKey());
                }
            }
            subscribers.put(topicId, eligibleMembers);
        }
        List<Partition> unowned = new ArrayList<>();
        for (Map.Entry<UUID, Integer> topic : spec.partitionCounts().entrySet()) {
            for (int index = 0; index < topic.getValue(); index++) {
                Partition partition = new Partition(topic.getKey(), index);
                if (!ownerOf.containsKey(partition) && !subscribers.get(topic.getKey()).isEmpty()) {
                    unowned.add(partition);
                }
            }
        }
        unowned.sort(Comparator.<Partition>comparingInt(p -> subscribers.get(p.topicId()).size()).thenComparing(p -> p));
        for (Partition partition : unowned) {
            String least = null;
            for (String memberId : subscribers.get(partition.topicId())) {
                if (least == null || owned.get(memberId).size() < owned.get(least).size()) {
                    least = memberId;
                }
            }
            owned.get(least).add(partition);
            ownerOf.put(partition, least);
        }
    }

    private static void balance(GroupSpec spec, Map<String, TreeSet<Partition>> owned) {
        int totalPartitions = 0;
        for (TreeSet<Partition> partitions : owned.values()) {
            totalPartitions += partitions.size();
        }
        // Every move lowers the sum of squared loads, so this terminates; the bound is a safety net.
        for (int moves = 0; moves <= totalPartitions * 2; moves++) {
            if (!moveOne(spec, owned)) {
                return;
            }
        }
    }

    /** Moves one partition from a more loaded member to a less loaded one (difference ≥ 2); false if none can move. */
    private static boolean moveOne(GroupSpec spec, Map<String, TreeSet<Partition>> owned) {
        List<String> byLoad = new ArrayList<>(owned.keySet());
        byLoad.sort(Comparator.<String>comparingInt(m -> owned.get(m).size()).thenComparing(m -> m));
        for (int donorIndex = byLoad.size() - 1; donorIndex > 0; donorIndex--) {
            String donor = byLoad.get(donorIndex);
            for (int takerIndex = 0; takerIndex < donorIndex; takerIndex++) {
                String taker = byLoad.get(takerIndex);
                if (owned.get(donor).size() - owned.get(taker).size() < 2) {
                    break;
                }
                // Give away the highest partitions first, so members keep their low, long-held ones.
                for (Partition partition : owned.get(donor).descendingSet()) {
                    if (eligible(spec, taker, partition)) {
                        owned.get(donor).remove(partition);
                        owned.get(taker).add(partition);
                        return true;
                    }
                }
            }
        }
        return false;
    }
}
