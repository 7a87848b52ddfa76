package io.strata.metadata;

import io.strata.metadata.record.PartitionChangeRecord;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Decides the partition leadership and ISR changes that follow a broker's change of state, as
 * PartitionChangeRecords for the controller to write. Pure: reads an image, returns records;
 * stateless and thread-safe.
 *
 * <p>KRaft's rules (ReplicationControlManager's handling of fencing, controlled shutdown and
 * unfencing; no unclean election, KIP-106):
 * <ul>
 *   <li><b>Broker fenced or in controlled shutdown</b> ({@link #forUnusableBrokers}): it leaves
 *       the ISR of every partition, except where it is the last ISR member: that member stays,
 *       so the partition can come back with the one replica known to hold every committed
 *       record (an RF=1 partition keeps ISR [b]). A partition it leads gets as new leader the
 *       first replica, in replica order, that is in the new ISR, unfenced and not in controlled
 *       shutdown; if there is none the partition goes offline (leader -1). Several brokers at
 *       once are as if taken one after another in ascending id order, so the last ISR member
 *       kept is the highest id among them.</li>
 *   <li><b>Broker unfenced</b> ({@link #forUnfencedBrokers}): every offline partition (leader
 *       -1) whose ISR holds one of the brokers gets as leader the first such replica in
 *       replica order.</li>
 * </ul>
 * A partition whose leader changes gets a record with Leader set, so applying it bumps the
 * leader epoch; every record bumps the partition epoch ({@link MetadataImage}'s replay rule).
 * A partition that would not change gets no record; a partition none of the brokers is in the
 * ISR of, or leads, is never touched.
 */
public final class PartitionLeaderElection {
    private PartitionLeaderElection() {
    }

    /**
     * The changes when {@code brokerIds} become fenced or enter controlled shutdown. The brokers
     * count as unusable whatever {@code image} says of them; every other broker's state is read
     * from {@code image}. Records are in topic-name, then partition order.
     */
    public static List<PartitionChangeRecord> forUnusableBrokers(MetadataImage image, Set<Integer> brokerIds) {
        List<PartitionChangeRecord> records = new ArrayList<>();
        for (TopicImage topic : new TreeMap<>(image.topicsByName()).values()) {
            for (Map.Entry<Integer, PartitionRegistration> entry : new TreeMap<>(topic.partitions()).entrySet()) {
                PartitionRegistration partition = entry.getValue();
                int[] isr = shrinkIsr(partition.isr(), brokerIds);
                boolean leaderLeaves = partition.leader() != PartitionRegistration.NO_LEADER && brokerIds.contains(partition.leader());
                int leader = leaderLeaves ? firstEligible(partition.replicas(), isr, image, brokerIds, Set.of()) : partition.leader();
                boolean isrChanged = isr.length != partition.isr().length;
                if (!isrChanged && leader == partition.leader()) {
                    continue;
                }
                PartitionChangeRecord record = new PartitionChangeRecord().setTopicId(topic.id()).setPartitionId(entry.getKey());
                if (isrChanged) {
                    record.setIsr(toList(isr));
                }
                if (leader != partition.leader()) {
                    record.setLeader(leader);
                }
                records.add(record);
            }
        }
        return records;
    }

    /**
     * The changes when {@code brokerIds} become unfenced: leaders for offline partitions whose
     * ISR holds one of them. The brokers count as usable unless {@code image} has them in
     * controlled shutdown. Records are in topic-name, then partition order.
     */
    public static List<PartitionChangeRecord> forUnfencedBrokers(MetadataImage image, Set<Integer> brokerIds) {
        List<PartitionChangeRecord> records = new ArrayList<>();
        for (TopicImage topic : new TreeMap<>(image.topicsByName()).values()) {
            for (Map.Entry<Integer, PartitionRegistration> entry : new TreeMap<>(topic.partitions()).entrySet()) {
                PartitionRegistration partition = entry.getValue();
                if (partition.hasLeader()) {
                    continue;
                }
                int leader = firstEligible(partition.replicas(), partition.isr(), image, Set.of(), brokerIds);
                if (leader != PartitionRegistration.NO_LEADER) {
                    records.add(new PartitionChangeRecord().setTopicId(topic.id()).setPartitionId(entry.getKey()).setLeader(leader));
                }
            }
        }
        return records;
    }

    /** The ISR without {@code leaving}, but never empty: a last member that leaves stays (the highest id among them). */
    private static int[] shrinkIsr(int[] isr, Set<Integer> leaving) {
        int kept = 0;
        int lastLeaving = -1;
        for (int replica : isr) {
            if (leaving.contains(replica)) {
                lastLeaving = Math.max(lastLeaving, replica);
            } else {
                kept++;
            }
        }
        if (kept == isr.length) {
            return isr;
        }
        if (kept == 0) {
            return new int[] {lastLeaving};
        }
        int[] shrunk = new int[kept];
        int i = 0;
        for (int replica : isr) {
            if (!leaving.contains(replica)) {
                shrunk[i++] = replica;
            }
        }
        return shrunk;
    }

    /**
     * The first replica in replica order that is in {@code isr} and may lead: not in
     * {@code unusable}, and either usable in the image or in {@code unfenced} and not shutting
     * down; NO_LEADER if none.
     */
    private static int firstEligible(int[] replicas, int[] isr, MetadataImage image, Set<Integer> unusable, Set<Integer> unfenced) {
        for (int replica : replicas) {
            if (!contains(isr, replica) || unusable.contains(replica)) {
                continue;
            }
            BrokerRegistration broker = image.brokers().get(replica);
            if (broker == null || broker.inControlledShutdown()) {
                continue;
            }
            if (!broker.fenced() || unfenced.contains(replica)) {
                return replica;
            }
        }
        return PartitionRegistration.NO_LEADER;
    }

    private static boolean contains(int[] values, int value) {
        for (int v : values) {
            if (v == value) {
                return true;
            }
        }
        return false;
    }

    private static List<Integer> toList(int[] values) {
        List<Integer> list = new ArrayList<>(values.length);
        for (int value : values) {
            list.add(value);
        }
        return list;
    }
}
