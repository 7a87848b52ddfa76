package io.strata.metadata;

import io.strata.protocol.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** ReplicaPlacer: distinct replicas, rack spread, leader balance, only usable brokers, Kafka's errors. */
class ReplicaPlacerTest {
    private static final String[] RACKS = {"a", "b", "c", "d", null};

    private static BrokerRegistration broker(int id, String rack) {
        return new BrokerRegistration(id, 100 + id, new UUID(0, id), List.of(), rack, false);
    }

    private static ReplicaPlacer.Result place(List<BrokerRegistration> brokers, int partitions, int replicationFactor, int startIndex) {
        ReplicaPlacer.Result result = ReplicaPlacer.place(brokers, partitions, (short) replicationFactor, startIndex);
        if (result.succeeded()) {
            assertPlacement(brokers, result, partitions, replicationFactor);
        }
        return result;
    }

    @Test
    void theWorkedExampleOfTheJavadoc() {
        List<BrokerRegistration> brokers = List.of(broker(1, "a"), broker(4, "a"), broker(2, "b"), broker(5, "b"), broker(3, "c"));
        ReplicaPlacer.Result result = place(brokers, 4, 3, 0);
        assertThat(result.assignments()).containsExactly(new int[] {1, 2, 3}, new int[] {2, 3, 4}, new int[] {3, 4, 5}, new int[] {4, 5, 3});
    }

    @Test
    void threeRacksOfTwoBrokersWithReplicationFactorThreeGetOneReplicaPerRack() {
        List<BrokerRegistration> brokers = List.of(broker(0, "a"), broker(1, "a"), broker(2, "b"), broker(3, "b"), broker(4, "c"), broker(5, "c"));
        ReplicaPlacer.Result result = place(brokers, 12, 3, 7);
        Map<Integer, String> rackOf = new HashMap<>();
        brokers.forEach(b -> rackOf.put(b.id(), b.rack()));
        for (int[] replicas : result.assignments()) {
            Set<String> racks = new HashSet<>();
            for (int replica : replicas) {
                racks.add(rackOf.get(replica));
            }
            assertThat(racks).containsExactlyInAnyOrder("a", "b", "c");
        }
    }

    @Test
    void leadersAreSpreadEvenlyAndTheStartIndexMovesTheFirstLeader() {
        List<BrokerRegistration> brokers = List.of(broker(1, null), broker(2, null), broker(3, null));
        ReplicaPlacer.Result first = place(brokers, 7, 2, 0);
        ReplicaPlacer.Result second = place(brokers, 7, 2, 1);
        assertThat(first.assignments().get(0)[0]).isEqualTo(1);
        assertThat(second.assignments().get(0)[0]).isEqualTo(2);
        assertThat(place(brokers, 1, 1, -1).assignments().get(0)).containsExactly(3);
    }

    @Test
    void fencedAndShuttingDownBrokersAreNeverChosen() {
        List<BrokerRegistration> brokers = List.of(broker(1, "a"), broker(2, "a").withFenced(true), broker(3, "b"),
            broker(4, "b").withInControlledShutdown(true), broker(5, "c"));
        ReplicaPlacer.Result result = place(brokers, 30, 3, 3);
        for (int[] replicas : result.assignments()) {
            assertThat(replicas).containsExactlyInAnyOrder(1, 3, 5);
        }
    }

    @Test
    void tooFewUsableBrokersIsInvalidReplicationFactorWithKafkasMessage() {
        List<BrokerRegistration> brokers = List.of(broker(1, "a"), broker(2, "a"), broker(3, "b").withFenced(true));
        ReplicaPlacer.Result result = place(brokers, 3, 3, 0);
        assertThat(result.error()).isEqualTo(ErrorCode.INVALID_REPLICATION_FACTOR);
        assertThat(result.message()).isEqualTo("Unable to replicate the partition 3 time(s): The target replication factor of 3 "
            + "cannot be reached because only 2 broker(s) are registered.");
        assertThat(result.assignments()).isEmpty();
        assertThat(place(List.of(), 1, 1, 0).message()).isEqualTo("Unable to replicate the partition 1 time(s): The target "
            + "replication factor of 1 cannot be reached because only 0 broker(s) are registered.");
    }

    @Test
    void nonPositiveCountsAreRefused() {
        List<BrokerRegistration> brokers = List.of(broker(1, "a"));
        assertThat(place(brokers, 0, 1, 0).error()).isEqualTo(ErrorCode.INVALID_PARTITIONS);
        assertThat(place(brokers, 1, 0, 0).error()).isEqualTo(ErrorCode.INVALID_REPLICATION_FACTOR);
        assertThat(place(brokers, 1, -1, 0).message()).isEqualTo("Replication factor must be larger than 0, or -1 to use the default value.");
    }

    @Test
    void theImageOverloadUsesTheImagesBrokers() {
        MetadataImage image = MetadataImage.EMPTY.apply(List.of(TestRecords.register(1, 1, "a", false),
            TestRecords.register(2, 2, "b", true)), 2);
        ReplicaPlacer.Result result = ReplicaPlacer.place(image, 2, (short) 1, 0);
        assertThat(result.assignments()).containsExactly(new int[] {1}, new int[] {1});
    }

    @Test
    void randomBrokerSetsAlwaysGetValidPlacements() {
        for (int seed = 0; seed < 500; seed++) {
            Random random = new Random(seed);
            List<BrokerRegistration> brokers = new ArrayList<>();
            int count = random.nextInt(12);
            for (int i = 0; i < count; i++) {
                BrokerRegistration broker = broker(random.nextInt(1000), RACKS[random.nextInt(RACKS.length)]);
                if (brokers.stream().anyMatch(b -> b.id() == broker.id())) {
                    continue;
                }
                int state = random.nextInt(6);
                brokers.add(state == 0 ? broker.withFenced(true) : state == 1 ? broker.withInControlledShutdown(true) : broker);
            }
            int partitions = 1 + random.nextInt(40);
            int replicationFactor = 1 + random.nextInt(5);
            long usable = brokers.stream().filter(BrokerRegistration::usable).count();
            ReplicaPlacer.Result result = place(brokers, partitions, replicationFactor, random.nextInt());
            assertThat(result.succeeded()).as("seed %d: %d usable brokers, RF %d", seed, usable, replicationFactor)
                .isEqualTo(usable >= replicationFactor);
        }
    }

    /** The invariants of every successful placement. */
    private static void assertPlacement(List<BrokerRegistration> brokers, ReplicaPlacer.Result result, int partitions, int replicationFactor) {
        Map<Integer, BrokerRegistration> usable = new HashMap<>();
        Map<String, Integer> rackSizes = new HashMap<>();
        for (BrokerRegistration broker : brokers) {
            if (broker.usable()) {
                usable.put(broker.id(), broker);
                rackSizes.merge(broker.rack(), 1, Integer::sum);
            }
        }
        assertThat(result.error()).isEqualTo(ErrorCode.NONE);
        assertThat(result.message()).isNull();
        assertThat(result.assignments()).hasSize(partitions);
        Map<Integer, Integer> leaders = new HashMap<>();
        usable.keySet().forEach(id -> leaders.put(id, 0));
        for (int[] replicas : result.assignments()) {
            assertThat(replicas).hasSize(replicationFactor).doesNotHaveDuplicates();
            Map<String, Integer> perRack = new HashMap<>();
            for (int replica : replicas) {
                assertThat(usable).as("replica %d is a usable broker", replica).containsKey(replica);
                perRack.merge(usable.get(replica).rack(), 1, Integer::sum);
            }
            for (String fuller : rackSizes.keySet()) {
                for (String emptier : rackSizes.keySet()) {
                    int more = perRack.getOrDefault(fuller, 0);
                    int fewer = perRack.getOrDefault(emptier, 0);
                    if (more >= fewer + 2) {
                        assertThat(fewer).as("rack %s has %d replicas of %s while rack %s has %d and unused brokers", fuller, more,
                            java.util.Arrays.toString(replicas), emptier, fewer).isEqualTo(rackSizes.get(emptier));
                    }
                }
            }
            leaders.merge(replicas[0], 1, Integer::sum);
        }
        int most = leaders.values().stream().mapToInt(Integer::intValue).max().orElseThrow();
        int fewest = leaders.values().stream().mapToInt(Integer::intValue).min().orElseThrow();
        assertThat(most - fewest).as("leader counts %s", leaders).isLessThanOrEqualTo(1);
    }
}
