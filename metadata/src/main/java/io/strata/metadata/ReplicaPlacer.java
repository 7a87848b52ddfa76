package io.strata.metadata;

import io.strata.protocol.ErrorCode;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Decides which brokers hold the replicas of new partitions, and which of them leads (the
 * first replica, the preferred leader). Pure: the same brokers and arguments give the same
 * placement. Stateless and thread-safe.
 *
 * <p>The rules, in the spirit of KRaft's striped placer (KIP-500's controller; not its code):
 * <ol>
 *   <li>Only usable brokers take replicas: unfenced and not in controlled shutdown.</li>
 *   <li>The replicas of one partition are distinct brokers.</li>
 *   <li>They spread over racks as evenly as the racks allow: a rack gets a second replica of a
 *       partition only once every rack that still has an unused broker has one, and so on
 *       (for any two racks, the counts differ by at most one unless the smaller rack has no
 *       broker left). Brokers without a rack form one rack of their own.</li>
 *   <li>Leaders go round a rack-interleaved ring of the brokers, one step per partition from
 *       {@code startIndex}, so the brokers' leader counts differ by at most one and successive
 *       topics (the caller moves {@code startIndex}) do not all lead on the lowest id.</li>
 * </ol>
 *
 * <p>Worked example: racks a = {1, 4}, b = {2, 5}, c = {3}; the ring interleaves the racks in
 * name order, each rack's brokers by id: [1, 2, 3, 4, 5]. With RF 3 and {@code startIndex} 0,
 * partition 0 is led by 1 (rack a), then takes the next ring brokers on racks without a
 * replica yet: 2 (b), 3 (c) → [1, 2, 3]; then [2, 3, 4], [3, 4, 5] and [4, 5, 3] (5 and 3:
 * rack a already has 4, so b and c come first). Followers also start a step further round
 * the ring every full turn, so that the followers of a leader vary between turns.
 *
 * <p>User errors are results, not exceptions, with the error codes and messages Kafka's
 * controller gives for CreateTopics: a non-positive partition count (INVALID_PARTITIONS), a
 * non-positive replication factor, or fewer usable brokers than the replication factor
 * (INVALID_REPLICATION_FACTOR).
 */
public final class ReplicaPlacer {
    private ReplicaPlacer() {
    }

    /**
     * A placement: on success {@code error} is NONE, {@code message} null and {@code assignments}
     * holds one replica array per partition (leader first); otherwise {@code assignments} is empty.
     * The arrays belong to the caller.
     */
    public record Result(ErrorCode error, String message, List<int[]> assignments) {
        public Result {
            Objects.requireNonNull(error, "error");
            assignments = List.copyOf(assignments);
        }

        static Result failure(ErrorCode error, String message) {
            return new Result(error, message, List.of());
        }

        public boolean succeeded() {
            return error == ErrorCode.NONE;
        }
    }

    /** Places over the usable brokers of {@code image}. */
    public static Result place(MetadataImage image, int partitions, short replicationFactor, int startIndex) {
        return place(image.brokers().values(), partitions, replicationFactor, startIndex);
    }

    /**
     * Places {@code partitions × replicationFactor} replicas over the usable brokers among
     * {@code brokers}; {@code startIndex} (any int) is where on the ring the first leader is.
     */
    public static Result place(Collection<BrokerRegistration> brokers, int partitions, short replicationFactor, int startIndex) {
        if (partitions <= 0) {
            return Result.failure(ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.");
        }
        if (replicationFactor <= 0) {
            return Result.failure(ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0, or -1 to use the default value.");
        }
        List<BrokerRegistration> ring = ring(brokers);
        if (ring.size() < replicationFactor) {
            return Result.failure(ErrorCode.INVALID_REPLICATION_FACTOR, "Unable to replicate the partition " + replicationFactor
                + " time(s): The target replication factor of " + replicationFactor + " cannot be reached because only " + ring.size()
                + " broker(s) are registered.");
        }
        List<int[]> assignments = new ArrayList<>(partitions);
        for (int partition = 0; partition < partitions; partition++) {
            assignments.add(placePartition(ring, replicationFactor, (long) startIndex + partition));
        }
        return new Result(ErrorCode.NONE, null, assignments);
    }

    /** The usable brokers, racks interleaved: the first broker of each rack (racks by name, no rack last), then the second... */
    static List<BrokerRegistration> ring(Collection<BrokerRegistration> brokers) {
        List<BrokerRegistration> usable = new ArrayList<>();
        for (BrokerRegistration broker : brokers) {
            if (broker.usable()) {
                usable.add(broker);
            }
        }
        usable.sort(Comparator.comparing(BrokerRegistration::rack, Comparator.nullsLast(Comparator.naturalOrder()))
            .thenComparingInt(BrokerRegistration::id));
        Map<String, List<BrokerRegistration>> byRack = new LinkedHashMap<>();
        for (BrokerRegistration broker : usable) {
            byRack.computeIfAbsent(broker.rack(), rack -> new ArrayList<>()).add(broker);
        }
        List<BrokerRegistration> ring = new ArrayList<>(usable.size());
        for (int round = 0; ring.size() < usable.size(); round++) {
            for (List<BrokerRegistration> rack : byRack.values()) {
                if (round < rack.size()) {
                    ring.add(rack.get(round));
                }
            }
        }
        return ring;
    }

    /**
     * One partition: the leader at {@code step} on the ring, then followers taken round the ring
     * from a turn-dependent shift, each time the first broker whose rack holds the fewest replicas
     * of this partition among racks that still have a broker without one.
     */
    private static int[] placePartition(List<BrokerRegistration> ring, int replicationFactor, long step) {
        int size = ring.size();
        int leaderPosition = (int) Math.floorMod(step, (long) size);
        int shift = size > 1 ? (int) Math.floorMod(Math.floorDiv(step, (long) size), (long) size - 1) : 0;
        boolean[] taken = new boolean[size];
        Map<String, Integer> perRack = new LinkedHashMap<>();
        int[] replicas = new int[replicationFactor];
        replicas[0] = take(ring, leaderPosition, taken, perRack);
        for (int r = 1; r < replicationFactor; r++) {
            int fewest = Integer.MAX_VALUE;
            for (int i = 0; i < size; i++) {
                if (!taken[i]) {
                    fewest = Math.min(fewest, perRack.getOrDefault(ring.get(i).rack(), 0));
                }
            }
            int first = leaderPosition + 1 + shift;
            for (int k = 0; k < size; k++) {
                int position = (first + k) % size;
                if (!taken[position] && perRack.getOrDefault(ring.get(position).rack(), 0) == fewest) {
                    replicas[r] = take(ring, position, taken, perRack);
                    break;
                }
            }
        }
        return replicas;
    }

    private static int take(List<BrokerRegistration> ring, int position, boolean[] taken, Map<String, Integer> perRack) {
        taken[position] = true;
        BrokerRegistration broker = ring.get(position);
        perRack.merge(broker.rack(), 1, Integer::sum);
        return broker.id();
    }
}
