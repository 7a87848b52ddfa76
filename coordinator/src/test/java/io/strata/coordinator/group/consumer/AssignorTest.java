package io.strata.coordinator.group.consumer;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The server-side assignors: validity (every partition once, only to subscribers), balance and stickiness. */
class AssignorTest {
    private static final UUID T1 = new UUID(0, 1);
    private static final UUID T2 = new UUID(0, 2);
    private static final UUID T3 = new UUID(0, 3);

    private static ServerAssignor.MemberSpec spec(Set<UUID> topics) {
        return new ServerAssignor.MemberSpec(topics, Assignment.EMPTY);
    }

    private static ServerAssignor.MemberSpec spec(Set<UUID> topics, Assignment current) {
        return new ServerAssignor.MemberSpec(topics, current);
    }

    private static ServerAssignor.GroupSpec group(Map<UUID, Integer> counts, Map<String, ServerAssignor.MemberSpec> members) {
        return new ServerAssignor.GroupSpec(new TreeMap<>(members), counts);
    }

    /** Every partition of a subscribed topic is assigned exactly once, and only to a subscriber. */
    private static void assertValid(ServerAssignor.GroupSpec spec, Map<String, Assignment> result) {
        assertThat(result.keySet()).isEqualTo(spec.members().keySet());
        Map<String, String> owner = new HashMap<>();
        for (Map.Entry<String, Assignment> member : result.entrySet()) {
            for (var topic : member.getValue().partitions().entrySet()) {
                assertThat(spec.members().get(member.getKey()).subscribedTopicIds()).contains(topic.getKey());
                for (int partition : topic.getValue()) {
                    assertThat(partition).isLessThan(spec.partitionCounts().get(topic.getKey()));
                    assertThat(owner.put(topic.getKey() + "-" + partition, member.getKey())).as("assigned twice").isNull();
                }
            }
        }
        for (Map.Entry<UUID, Integer> topic : spec.partitionCounts().entrySet()) {
            boolean subscribed = spec.members().values().stream().anyMatch(m -> m.subscribedTopicIds().contains(topic.getKey()));
            for (int partition = 0; subscribed && partition < topic.getValue(); partition++) {
                assertThat(owner).containsKey(topic.getKey() + "-" + partition);
            }
        }
    }

    private static int spread(Map<String, Assignment> result) {
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (Assignment assignment : result.values()) {
            min = Math.min(min, assignment.size());
            max = Math.max(max, assignment.size());
        }
        return max - min;
    }

    @Test
    void uniformSpreadsTwelvePartitionsOverThreeMembersFourEach() {
        ServerAssignor.GroupSpec spec = group(Map.of(T1, 12), Map.of("a", spec(Set.of(T1)), "b", spec(Set.of(T1)), "c", spec(Set.of(T1))));
        Map<String, Assignment> result = new UniformAssignor().assign(spec);
        assertValid(spec, result);
        assertThat(result.values()).allMatch(assignment -> assignment.size() == 4);
    }

    @Test
    void uniformMovesOnlyWhatANewMemberNeeds() {
        Map<String, Assignment> two = new UniformAssignor().assign(group(Map.of(T1, 12),
            Map.of("a", spec(Set.of(T1)), "b", spec(Set.of(T1)))));
        ServerAssignor.GroupSpec three = group(Map.of(T1, 12), Map.of("a", spec(Set.of(T1), two.get("a")), "b", spec(Set.of(T1), two.get("b")),
            "c", spec(Set.of(T1))));
        Map<String, Assignment> result = new UniformAssignor().assign(three);
        assertValid(three, result);
        assertThat(result.get("a").isSubsetOf(two.get("a"))).as("a only gives partitions away").isTrue();
        assertThat(result.get("b").isSubsetOf(two.get("b"))).as("b only gives partitions away").isTrue();
        assertThat(result.get("c").size()).isEqualTo(4);
    }

    @Test
    void uniformBalancesDifferentSubscriptionsWhereItCan() {
        ServerAssignor.GroupSpec spec = group(Map.of(T1, 6, T2, 6), Map.of("a", spec(Set.of(T1)), "b", spec(Set.of(T1, T2)),
            "c", spec(Set.of(T2))));
        Map<String, Assignment> result = new UniformAssignor().assign(spec);
        assertValid(spec, result);
        assertThat(result.values()).allMatch(assignment -> assignment.size() == 4);
    }

    @Test
    void uniformIsValidAndBalancedForRandomHomogeneousGroups() {
        Random random = new Random(42);
        for (int round = 0; round < 200; round++) {
            Map<UUID, Integer> counts = new HashMap<>();
            int topics = 1 + random.nextInt(4);
            for (int t = 0; t < topics; t++) {
                counts.put(new UUID(1, t), 1 + random.nextInt(20));
            }
            Map<String, ServerAssignor.MemberSpec> members = new HashMap<>();
            Map<String, Assignment> previous = new HashMap<>();
            int memberCount = 1 + random.nextInt(8);
            for (int m = 0; m < memberCount; m++) {
                members.put("m" + m, spec(counts.keySet()));
            }
            previous = new UniformAssignor().assign(group(counts, members));
            // Drop a member and add one: the result stays valid and balanced.
            members.remove("m0");
            members.put("new", spec(counts.keySet()));
            Map<String, ServerAssignor.MemberSpec> sticky = new HashMap<>();
            for (Map.Entry<String, ServerAssignor.MemberSpec> member : members.entrySet()) {
                sticky.put(member.getKey(), spec(counts.keySet(), previous.getOrDefault(member.getKey(), Assignment.EMPTY)));
            }
            ServerAssignor.GroupSpec spec = group(counts, sticky);
            Map<String, Assignment> result = new UniformAssignor().assign(spec);
            assertValid(spec, result);
            assertThat(spread(result)).isLessThanOrEqualTo(1);
        }
    }

    @Test
    void uniformIsValidForRandomHeterogeneousGroups() {
        Random random = new Random(7);
        List<UUID> topicIds = List.of(T1, T2, T3);
        for (int round = 0; round < 200; round++) {
            Map<UUID, Integer> counts = Map.of(T1, 1 + random.nextInt(10), T2, 1 + random.nextInt(10), T3, 1 + random.nextInt(10));
            Map<String, ServerAssignor.MemberSpec> members = new HashMap<>();
            for (int m = 0; m < 1 + random.nextInt(6); m++) {
                Set<UUID> subscribed = new TreeSet<>();
                for (UUID topic : topicIds) {
                    if (random.nextBoolean()) {
                        subscribed.add(topic);
                    }
                }
                members.put("m" + m, spec(subscribed));
            }
            ServerAssignor.GroupSpec spec = group(counts, members);
            assertValid(spec, new UniformAssignor().assign(spec));
        }
    }

    @Test
    void rangeGivesContiguousRangesAndTheExtraPartitionsToTheFirstMembers() {
        ServerAssignor.GroupSpec spec = group(Map.of(T1, 7, T2, 7), Map.of("a", spec(Set.of(T1, T2)), "b", spec(Set.of(T1, T2)),
            "c", spec(Set.of(T1, T2))));
        Map<String, Assignment> result = new RangeAssignor().assign(spec);
        assertValid(spec, result);
        assertThat(result.get("a").partitions(T1)).containsExactly(0, 1, 2);
        assertThat(result.get("b").partitions(T1)).containsExactly(3, 4);
        assertThat(result.get("c").partitions(T1)).containsExactly(5, 6);
        assertThat(result.get("a").partitions(T2)).as("co-partitioned topics line up").isEqualTo(result.get("a").partitions(T1));
    }

    @Test
    void rangeKeepsCurrentPartitionsUpToTheQuota() {
        Map<String, Assignment> two = new RangeAssignor().assign(group(Map.of(T1, 6), Map.of("a", spec(Set.of(T1)), "b", spec(Set.of(T1)))));
        ServerAssignor.GroupSpec spec = group(Map.of(T1, 6), Map.of("a", spec(Set.of(T1), two.get("a")), "b", spec(Set.of(T1), two.get("b")),
            "c", spec(Set.of(T1))));
        Map<String, Assignment> result = new RangeAssignor().assign(spec);
        assertValid(spec, result);
        assertThat(result.get("a").partitions(T1)).containsExactly(0, 1);
        assertThat(result.get("b").partitions(T1)).containsExactly(3, 4);
        assertThat(result.get("c").partitions(T1)).containsExactly(2, 5);
    }

    @Test
    void rangeIsValidForRandomGroups() {
        Random random = new Random(11);
        for (int round = 0; round < 200; round++) {
            Map<UUID, Integer> counts = Map.of(T1, 1 + random.nextInt(12), T2, 1 + random.nextInt(12));
            SortedMap<String, ServerAssignor.MemberSpec> members = new TreeMap<>();
            for (int m = 0; m < 1 + random.nextInt(6); m++) {
                Set<UUID> subscribed = random.nextBoolean() ? Set.of(T1, T2) : Set.of(random.nextBoolean() ? T1 : T2);
                members.put("m" + m, spec(subscribed));
            }
            ServerAssignor.GroupSpec spec = group(counts, members);
            Map<String, Assignment> first = new RangeAssignor().assign(spec);
            assertValid(spec, first);
            Map<String, ServerAssignor.MemberSpec> sticky = new HashMap<>();
            members.forEach((id, member) -> sticky.put(id, spec(member.subscribedTopicIds(), first.get(id))));
            sticky.remove(members.firstKey());
            if (!sticky.isEmpty()) {
                ServerAssignor.GroupSpec next = group(counts, sticky);
                assertValid(next, new RangeAssignor().assign(next));
            }
        }
    }
}
