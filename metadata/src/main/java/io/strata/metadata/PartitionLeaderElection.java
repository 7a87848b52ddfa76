package io.strata.metadata;

import io.strata.metadata.record.PartitionChangeRecord;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decides the partition leadership and ISR changes that follow a broker's change of state, as
 * PartitionChangeRecords for the controller to write. Pure: reads an image, returns records;
 * stateless and thread-safe. A facade over {@link ReplicationControl} (which builds every record
 * with {@link PartitionChangeBuilder}); the rules below are those with ELR off, KIP-966's are on
 * {@link PartitionChangeBuilder}.
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
    /** Static topic defaults are not needed here: with ELR off the min ISR plays no part. */
    private static final ReplicationControl CONTROL = new ReplicationControl(Map.of());

    private PartitionLeaderElection() {
    }

    /**
     * The changes when {@code brokerIds} become fenced or enter controlled shutdown. The brokers
     * count as unusable whatever {@code image} says of them; every other broker's state is read
     * from {@code image}. Records are in topic-name, then partition order.
     * See {@link ReplicationControl#forUnusableBrokers(MetadataImage, Set)}.
     */
    public static List<PartitionChangeRecord> forUnusableBrokers(MetadataImage image, Set<Integer> brokerIds) {
        return CONTROL.forUnusableBrokers(image, brokerIds);
    }

    /**
     * The changes when {@code brokerIds} become unfenced: leaders for offline partitions whose
     * ISR holds one of them. The brokers count as usable unless {@code image} has them in
     * controlled shutdown. Records are in topic-name, then partition order.
     * See {@link ReplicationControl#forUnfencedBrokers}.
     */
    public static List<PartitionChangeRecord> forUnfencedBrokers(MetadataImage image, Set<Integer> brokerIds) {
        return CONTROL.forUnfencedBrokers(image, brokerIds);
    }
}
