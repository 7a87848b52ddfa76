package io.strata.coordinator.group.consumer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

/**
 * The "range" server assignor: each topic is split into contiguous ranges over the members
 * subscribed to it (sorted by member id), so members with the same subscriptions get the same
 * partition numbers of co-partitioned topics. Sticky within those rules.
 *
 * <p>Per topic with {@code n} partitions and {@code k} subscribed members, every member gets
 * {@code n / k} partitions and the first {@code n % k} members to need one get one more.
 * A member first keeps its lowest current partitions up to its quota; the partitions nobody
 * kept are then handed out in ascending order, member by member. Worked example, 7 partitions,
 * members a, b, c, nobody assigned yet: quota 2, one extra → a: 0,1,2; b: 3,4; c: 5,6.
 */
public final class RangeAssignor implements ServerAssignor {
    public static final String NAME = "range";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Map<String, Assignment> assign(GroupSpec spec) {
        Map<String, Map<UUID, Set<Integer>>> result = new TreeMap<>();
        for (String memberId : spec.members().keySet()) {
            result.put(memberId, new HashMap<>());
        }
        for (Map.Entry<UUID, Integer> topic : spec.partitionCounts().entrySet()) {
            List<String> subscribers = new ArrayList<>();
            for (Map.Entry<String, MemberSpec> member : spec.members().entrySet()) {
                if (member.getValue().subscribedTopicIds().contains(topic.getKey())) {
                    subscribers.add(member.getKey());
                }
            }
            if (!subscribers.isEmpty()) {
                assignTopic(topic.getKey(), topic.getValue(), subscribers, spec, result);
            }
        }
        Map<String, Assignment> assignments = new TreeMap<>();
        result.forEach((memberId, partitions) -> assignments.put(memberId, Assignment.of(partitions)));
        return assignments;
    }

    private static void assignTopic(UUID topicId, int partitionCount, List<String> subscribers, GroupSpec spec,
                                    Map<String, Map<UUID, Set<Integer>>> result) {
        int quota = partitionCount / subscribers.size();
        int extras = partitionCount % subscribers.size();
        Set<Integer> taken = new TreeSet<>();
        Map<String, Integer> keptCounts = new TreeMap<>();
        // Keep current partitions (lowest first) up to the quota, plus one more while extras last.
        for (String memberId : subscribers) {
            List<Integer> current = new ArrayList<>();
            for (int partition : spec.members().get(memberId).currentAssignment().partitions(topicId)) {
                if (partition < partitionCount) {
                    current.add(partition);
                }
            }
            int keep = Math.min(current.size(), quota);
            if (current.size() > quota && extras > 0) {
                keep++;
                extras--;
            }
            for (int i = 0; i < keep; i++) {
                taken.add(current.get(i));
                result.get(memberId).computeIfAbsent(topicId, t -> new TreeSet<>()).add(current.get(i));
            }
            keptCounts.put(memberId, keep);
        }
        int next = 0;
        for (String memberId : subscribers) {
            int kept = keptCounts.get(memberId);
            int target = quota;
            if (kept <= quota && extras > 0) {
                target++;
                extras--;
            }
            for (int count = kept; count < target; count++) {
                while (taken.contains(next)) {
                    next++;
                }
                taken.add(next);
                result.get(memberId).computeIfAbsent(topicId, t -> new TreeSet<>()).add(next);
            }
        }
    }
}
