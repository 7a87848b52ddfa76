package io.strata.metadata;

import io.strata.metadata.record.ConfigRecord;
import io.strata.metadata.record.FeatureLevelRecord;
import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;

import static io.strata.metadata.TestRecords.change;
import static io.strata.metadata.TestRecords.fence;
import static io.strata.metadata.TestRecords.register;
import static io.strata.metadata.TestRecords.throughBytes;
import static io.strata.metadata.TestRecords.topic;
import static io.strata.metadata.TestRecords.unfence;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Invariants of the controller's partition state over random registrations, broker states, min
 * ISR and ELR on/off, under random sequences of AlterPartition (valid and not), fencing,
 * controlled shutdown, unfencing and re-registration (clean or unclean), each applied through the
 * records' bytes as a controller would write them:
 * the leader is in the ISR and usable, or -1; ELR ∩ ISR = ∅; ISR ≥ min ISR ⇒ ELR = ∅ (and no ELR
 * with the feature off); leader and partition epochs never decrease and every record bumps the
 * partition epoch; a change naming no leader keeps the leader epoch; an accepted AlterPartition
 * answers exactly the state its record replays to.
 */
class ReplicationControlPropertyTest {
    private static final int BROKERS = 5;
    private static final int STEPS = 60;
    private static final String TOPIC = "t";
    private static final UUID TOPIC_ID = new UUID(7, 7);
    private static final short V3 = 3;

    private final ReplicationControl control = new ReplicationControl(Map.of());

    @Property(tries = 300)
    void partitionStateInvariantsHoldAfterEveryOperation(@ForAll long seed, @ForAll boolean elr, @ForAll @IntRange(min = 1, max = 4) int minIsr) {
        Random random = new Random(seed);
        MetadataImage image = initial(random, elr, minIsr);
        check(image, elr, "seed " + seed + " initial");
        for (int step = 0; step < STEPS; step++) {
            PartitionRegistration before = partition(image);
            List<ApiMessage> records = new ArrayList<>();
            AlterPartitionResponseData answer = operate(image, random, records);
            MetadataImage after = apply(image, records);
            String what = "seed " + seed + " step " + step + " records " + records + " before " + before;
            PartitionRegistration now = partition(after);
            assertThat(now.leaderEpoch()).as(what).isGreaterThanOrEqualTo(before.leaderEpoch());
            assertThat(now.partitionEpoch()).as(what).isGreaterThanOrEqualTo(before.partitionEpoch());
            long changes = records.stream().filter(PartitionChangeRecord.class::isInstance).count();
            assertThat(now.partitionEpoch()).as(what + ": one partition epoch per change").isEqualTo(before.partitionEpoch() + (int) changes);
            boolean leaderNamed = records.stream().anyMatch(r -> r instanceof PartitionChangeRecord c && c.leader() != PartitionChangeBuilder.NO_LEADER_CHANGE);
            if (!leaderNamed) {
                assertThat(now.leaderEpoch()).as(what + ": no leader named, same leader epoch").isEqualTo(before.leaderEpoch());
            }
            if (answer != null && answer.errorCode() == 0 && answer.topics().get(0).partitions().get(0).errorCode() == 0) {
                AlterPartitionResponseData.PartitionData data = answer.topics().get(0).partitions().get(0);
                assertThat(data.isr()).as(what).containsExactlyElementsOf(PartitionRegistration.toList(now.isr()));
                assertThat(data.leaderId()).as(what).isEqualTo(now.leader());
                assertThat(data.leaderEpoch()).as(what).isEqualTo(now.leaderEpoch());
                assertThat(data.partitionEpoch()).as(what).isEqualTo(now.partitionEpoch());
                assertThat(data.leaderRecoveryState()).as(what).isEqualTo(now.leaderRecoveryState());
            }
            check(after, elr, what);
            image = after;
        }
    }

    private static MetadataImage apply(MetadataImage image, List<ApiMessage> records) {
        List<ApiMessage> decoded = new ArrayList<>();
        for (ApiMessage record : records) {
            decoded.add(throughBytes(record));
        }
        return image.apply(decoded, image.offset() + Math.max(1, records.size()));
    }

    private static PartitionRegistration partition(MetadataImage image) {
        return image.topic(TOPIC).partition(0);
    }

    private MetadataImage initial(Random random, boolean elr, int minIsr) {
        List<ApiMessage> records = new ArrayList<>();
        if (elr) {
            records.add(new FeatureLevelRecord().setName(ReplicationControl.ELR_FEATURE).setFeatureLevel((short) 1));
        }
        boolean[] usable = new boolean[BROKERS + 1];
        for (int id = 1; id <= BROKERS; id++) {
            int state = random.nextInt(4);
            usable[id] = state < 2;
            records.add(register(id, id, null, state == 2));
            if (state == 3) {
                records.add(change(id, id, 0, 1));
            }
        }
        records.add(topic(TOPIC, TOPIC_ID));
        records.add(new ConfigRecord().setResourceType(ConfigResource.TOPIC).setResourceName(TOPIC).setName("min.insync.replicas")
            .setValue(Integer.toString(minIsr)));
        List<Integer> ids = new ArrayList<>(List.of(1, 2, 3, 4, 5));
        Collections.shuffle(ids, random);
        int[] replicas = ids.subList(0, 1 + random.nextInt(BROKERS)).stream().mapToInt(Integer::intValue).toArray();
        List<Integer> isr = new ArrayList<>();
        for (int replica : replicas) {
            if (isr.isEmpty() || random.nextBoolean()) {
                isr.add(replica);
            }
        }
        List<Integer> usableIsr = isr.stream().filter(id -> usable[id]).toList();
        int leader = usableIsr.isEmpty() ? PartitionRegistration.NO_LEADER : usableIsr.get(random.nextInt(usableIsr.size()));
        PartitionRegistration registration = new PartitionRegistration(replicas, isr.stream().mapToInt(Integer::intValue).toArray(), leader, 0, 0);
        records.add(registration.toRecord(TOPIC_ID, 0));
        return MetadataImage.EMPTY.apply(records, records.size() - 1);
    }

    /** One random operation's records (as the controller would write them); the AlterPartition answer if that was the operation. */
    private AlterPartitionResponseData operate(MetadataImage image, Random random, List<ApiMessage> records) {
        int broker = 1 + random.nextInt(BROKERS);
        BrokerRegistration registration = image.brokers().get(broker);
        switch (random.nextInt(5)) {
            case 0, 1 -> {
                ReplicationControl.Result<AlterPartitionResponseData> result = control.alterPartition(image, alterPartition(image, random), V3);
                records.addAll(result.records());
                return result.response();
            }
            case 2 -> {
                // Session expiry may fence several brokers at once.
                Set<Integer> expired = new java.util.TreeSet<>();
                expired.add(broker);
                if (random.nextBoolean()) {
                    expired.add(1 + random.nextInt(BROKERS));
                }
                expired.removeIf(id -> image.brokers().get(id).fenced());
                for (int id : expired) {
                    records.add(fence(id, image.brokers().get(id).epoch()));
                }
                if (!expired.isEmpty()) {
                    records.addAll(control.forUnusableBrokers(image, expired));
                }
            }
            case 3 -> {
                if (!registration.fenced() && !registration.inControlledShutdown()) {
                    records.add(change(broker, registration.epoch(), 0, 1));
                    records.addAll(control.forUnusableBrokers(image, Set.of(broker)));
                } else if (registration.fenced() && !registration.inControlledShutdown()) {
                    records.add(unfence(broker, registration.epoch()));
                    records.addAll(control.forUnfencedBrokers(image, Set.of(broker)));
                }
            }
            default -> {
                // A restart: a new registration, fenced; an unclean one leaves every ELR.
                boolean unclean = random.nextBoolean();
                records.add(register(broker, image.offset() + 1, null, true));
                records.addAll(control.forUnusableBrokers(image, Set.of(broker), unclean ? Set.of(broker) : Set.of()));
            }
        }
        return null;
    }

    /** From the leader (or, sometimes, another broker), at the current epochs (sometimes stale), a random ISR (usually with the leader). */
    private static AlterPartitionRequestData alterPartition(MetadataImage image, Random random) {
        PartitionRegistration partition = partition(image);
        int requester = partition.hasLeader() && random.nextInt(5) > 0 ? partition.leader() : 1 + random.nextInt(BROKERS);
        AlterPartitionRequestData.PartitionData data = new AlterPartitionRequestData.PartitionData().setPartitionIndex(0)
            .setLeaderEpoch(partition.leaderEpoch() - (random.nextInt(8) == 0 ? 1 : 0))
            .setPartitionEpoch(partition.partitionEpoch() - (random.nextInt(8) == 0 ? 1 : 0));
        List<Integer> isr = new ArrayList<>();
        if (random.nextInt(8) > 0) {
            isr.add(requester);
        }
        for (int replica : partition.replicas()) {
            if (replica != requester && random.nextBoolean()) {
                isr.add(replica);
            }
        }
        for (int member : isr) {
            data.newIsrWithEpochs().add(new AlterPartitionRequestData.BrokerState().setBrokerId(member)
                .setBrokerEpoch(image.brokers().get(member).epoch()));
        }
        AlterPartitionRequestData request = new AlterPartitionRequestData().setBrokerId(requester)
            .setBrokerEpoch(image.brokers().get(requester).epoch());
        request.topics().add(new AlterPartitionRequestData.TopicData().setTopicId(TOPIC_ID).setPartitions(new ArrayList<>(List.of(data))));
        return request;
    }

    private void check(MetadataImage image, boolean elr, String what) {
        PartitionRegistration partition = partition(image);
        if (partition.hasLeader()) {
            assertThat(partition.inIsr(partition.leader())).as(what + ": the leader is in the ISR " + partition).isTrue();
            assertThat(image.brokers().get(partition.leader()).usable()).as(what + ": the leader may lead " + partition).isTrue();
        }
        for (int member : partition.elr()) {
            assertThat(partition.inIsr(member)).as(what + ": ELR and ISR are disjoint " + partition).isFalse();
        }
        int minIsr = control.effectiveMinIsr(image, TOPIC, partition.replicas().length);
        if (!elr) {
            assertThat(partition.elr()).as(what + ": no ELR with the feature off " + partition).isEmpty();
            assertThat(partition.isr()).as(what + ": without ELR the ISR never empties " + partition).isNotEmpty();
        } else if (partition.isr().length >= minIsr) {
            assertThat(partition.elr()).as(what + ": ISR at min ISR has no ELR " + partition).isEmpty();
        }
        assertThat(Arrays.stream(partition.isr()).distinct().count()).as(what + ": no duplicate").isEqualTo(partition.isr().length);
    }
}
