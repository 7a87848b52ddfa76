package io.strata.metadata;

import io.strata.metadata.record.PartitionChangeRecord;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.IntPredicate;

/**
 * From a partition's registration and the targets a controller operation sets (ISR, replicas,
 * reassignment lists, leader recovery state), the one PartitionChangeRecord to write, or none
 * when nothing would change. Kafka's class of the same name; the order of the steps in
 * {@link #build()} is Kafka 4.4's. Single use, not thread-safe (the controller thread builds and
 * discards it); pure: reads only what it is given.
 *
 * <p>Rules:
 * <ul>
 *   <li><b>Reassignment</b> (KIP-455): first, a reassignment the target ISR has caught up
 *       completes ({@link Reassignment#maybeComplete}); everything after sees its target.</li>
 *   <li><b>Election</b> (ONLINE): the current leader stays if it is still a valid leader; else
 *       the first replica, in target replica order, that is valid. Valid = acceptable
 *       ({@code isAcceptableLeader}: registered, unfenced, not in controlled shutdown, KIP-841)
 *       and in the target ISR, or — with ELR on and the target ISR empty — in the ELR. With ELR
 *       on, ISR and ELR empty and a single last known leader that is acceptable, it is elected
 *       as an unclean election ("balanced recovery", KIP-966). UNCLEAN also falls back to the
 *       first acceptable replica. An unclean election sets ISR = [leader] and
 *       LeaderRecoveryState RECOVERING (KIP-704) and empties the ELR. A leader taken from the ELR
 *       becomes the ISR [leader] and leaves the ELR.</li>
 *   <li><b>Election</b> (PREFERRED, ElectLeaders and auto rebalance): the first target replica
 *       if valid, else the current leader if still valid, else the first other valid replica;
 *       never unclean.</li>
 *   <li><b>ISR</b>: with ELR off an empty target ISR leaves the ISR as it is (the last member
 *       stays, leader -1); with ELR on the ISR may become empty.</li>
 *   <li><b>ELR</b> (on): target ISR ≥ min ISR clears ELR and LastKnownElr; below, the ELR is
 *       (ELR ∪ current ISR) − target ISR − {@link #setUncleanShutdownReplicas unclean shutdown
 *       replicas}, in replica order. LastKnownElr holds the last leader once the ISR becomes
 *       empty and is cleared when the partition has a leader again (Kafka 4's
 *       last-known-leader use of the field). ELR off: the ELR is emptied, LastKnownElr left as
 *       it is (as Kafka's builder).</li>
 *   <li><b>Epochs</b> (applied by {@link PartitionRegistration#merge}): a leader change names
 *       the Leader, so the leader epoch grows; removing a replica from the assignment names the
 *       current leader to bump it too (KAFKA-12803); an ISR-only change does not name it
 *       (KAFKA-15021: metadata versions since 3.6 bump no leader epoch on a shrink).</li>
 * </ul>
 */
public final class PartitionChangeBuilder {
    /** PartitionChangeRecord's Leader when the leader does not change. */
    public static final int NO_LEADER_CHANGE = -2;

    /** How a leader is chosen when the current one may not stay. */
    public enum Election {
        /**
         * The preferred replica (the first target replica) if it is a valid leader; else the
         * current leader if it still is; else the first other valid replica; else none (no
         * last-known-leader or unclean fallback, as Kafka's electPreferredLeader).
         */
        PREFERRED,
        /** From the ISR (or ELR / last known leader with ELR on). */
        ONLINE,
        /** As ONLINE, then any acceptable replica (unclean.leader.election.enable). */
        UNCLEAN
    }

    private final PartitionRegistration partition;
    private final UUID topicId;
    private final int partitionId;
    private final IntPredicate isAcceptableLeader;
    private final int minIsr;
    private final boolean elrEnabled;
    private List<Integer> targetIsr;
    private List<Integer> targetReplicas;
    private List<Integer> targetAdding;
    private List<Integer> targetRemoving;
    private List<Integer> targetElr;
    private byte targetLeaderRecoveryState;
    private Set<Integer> uncleanShutdownReplicas = Set.of();
    private Election election = Election.ONLINE;
    private boolean built;

    /**
     * @param isAcceptableLeader whether a broker may lead now (registered, unfenced, not in controlled shutdown)
     * @param minIsr             the effective min ISR: min(min.insync.replicas, replication factor)
     * @param elrEnabled         {@code eligible.leader.replicas.version} ≥ 1 is finalized
     */
    public PartitionChangeBuilder(PartitionRegistration partition, UUID topicId, int partitionId, IntPredicate isAcceptableLeader, int minIsr,
                                  boolean elrEnabled) {
        this.partition = partition;
        this.topicId = topicId;
        this.partitionId = partitionId;
        this.isAcceptableLeader = isAcceptableLeader;
        this.minIsr = minIsr;
        this.elrEnabled = elrEnabled;
        this.targetIsr = PartitionRegistration.toList(partition.isr());
        this.targetReplicas = PartitionRegistration.toList(partition.replicas());
        this.targetAdding = PartitionRegistration.toList(partition.addingReplicas());
        this.targetRemoving = PartitionRegistration.toList(partition.removingReplicas());
        this.targetElr = PartitionRegistration.toList(partition.elr());
        this.targetLeaderRecoveryState = partition.leaderRecoveryState();
    }

    public PartitionChangeBuilder setTargetIsr(List<Integer> isr) {
        this.targetIsr = List.copyOf(isr);
        return this;
    }

    public PartitionChangeBuilder setTargetReplicas(List<Integer> replicas) {
        this.targetReplicas = List.copyOf(replicas);
        return this;
    }

    public PartitionChangeBuilder setTargetAdding(List<Integer> adding) {
        this.targetAdding = List.copyOf(adding);
        return this;
    }

    public PartitionChangeBuilder setTargetRemoving(List<Integer> removing) {
        this.targetRemoving = List.copyOf(removing);
        return this;
    }

    public PartitionChangeBuilder setTargetLeaderRecoveryState(byte state) {
        if (state != PartitionRegistration.RECOVERED && state != PartitionRegistration.RECOVERING) {
            throw new IllegalArgumentException("leader recovery state must be 0 or 1: state=" + state);
        }
        this.targetLeaderRecoveryState = state;
        return this;
    }

    /** Brokers that shut down uncleanly: they may not enter (and leave) the ELR (KAFKA-15586). */
    public PartitionChangeBuilder setUncleanShutdownReplicas(Set<Integer> brokerIds) {
        this.uncleanShutdownReplicas = Set.copyOf(brokerIds);
        return this;
    }

    public PartitionChangeBuilder setElection(Election newElection) {
        this.election = newElection;
        return this;
    }

    /**
     * The change, or empty if it would change nothing.
     *
     * @throws IllegalStateException if called twice
     */
    public Optional<PartitionChangeRecord> build() {
        if (built) {
            throw new IllegalStateException("PartitionChangeBuilder for " + topicId + "-" + partitionId + " was already built");
        }
        built = true;
        PartitionChangeRecord record = new PartitionChangeRecord().setTopicId(topicId).setPartitionId(partitionId);
        completeReassignmentIfNeeded();
        populateTargetElr();
        tryElection(record);
        bumpLeaderEpochIfReplicasRemoved(record);
        updateRecordElr(record);
        boolean isrMayBeSet = !targetIsr.isEmpty() || elrEnabled;
        if (record.isr() == null && isrMayBeSet && !targetIsr.equals(PartitionRegistration.toList(partition.isr()))) {
            record.setIsr(targetIsr);
        }
        updateLastKnownLeader(record);
        setAssignmentChanges(record);
        if (targetLeaderRecoveryState != partition.leaderRecoveryState() && record.leaderRecoveryState() == -1) {
            record.setLeaderRecoveryState(targetLeaderRecoveryState);
        }
        return isNoOp(record) ? Optional.empty() : Optional.of(record);
    }

    /** True if {@code record} changes nothing (Kafka's changeRecordIsNoOp). */
    public static boolean isNoOp(PartitionChangeRecord record) {
        return record.isr() == null && record.leader() == NO_LEADER_CHANGE && record.replicas() == null && record.addingReplicas() == null
            && record.removingReplicas() == null && record.eligibleLeaderReplicas() == null && record.lastKnownElr() == null
            && record.leaderRecoveryState() == -1;
    }

    /**
     * A reassignment in the targets whose adding replicas the target ISR now holds completes
     * here (see {@link Reassignment#maybeComplete}): replicas = target, ISR = ISR ∩ target, no
     * adding or removing. The election that follows moves the leader if it left the replicas.
     */
    private void completeReassignmentIfNeeded() {
        Optional<Reassignment.Completed> completed = new Reassignment(targetReplicas, targetAdding, targetRemoving).maybeComplete(targetIsr);
        if (completed.isEmpty()) {
            return;
        }
        targetReplicas = completed.get().replicas();
        targetIsr = completed.get().isr();
        targetAdding = List.of();
        targetRemoving = List.of();
    }

    private void populateTargetElr() {
        if (!elrEnabled) {
            return;
        }
        if (targetIsr.size() >= minIsr) {
            targetElr = List.of();
            return;
        }
        List<Integer> elr = new ArrayList<>();
        for (int replica : orderedCandidates()) {
            boolean wasIsrOrElr = partition.inIsr(replica) || targetElr.contains(replica);
            if (wasIsrOrElr && !targetIsr.contains(replica) && !uncleanShutdownReplicas.contains(replica)) {
                elr.add(replica);
            }
        }
        targetElr = elr;
    }

    /** Target replicas first, then any other current ISR / ELR member (a replica leaving the assignment), without duplicates. */
    private List<Integer> orderedCandidates() {
        List<Integer> candidates = new ArrayList<>(targetReplicas);
        for (int replica : partition.isr()) {
            if (!candidates.contains(replica)) {
                candidates.add(replica);
            }
        }
        for (int replica : targetElr) {
            if (!candidates.contains(replica)) {
                candidates.add(replica);
            }
        }
        return candidates;
    }

    private boolean isValidNewLeader(int replica) {
        boolean eligible = targetIsr.contains(replica) || (elrEnabled && targetIsr.isEmpty() && targetElr.contains(replica));
        return eligible && isAcceptableLeader.test(replica);
    }

    private record ElectionResult(int leader, boolean unclean) {
    }

    private ElectionResult electLeader() {
        return election == Election.PREFERRED ? electPreferredLeader() : electAnyLeader();
    }

    private ElectionResult electPreferredLeader() {
        int preferred = targetReplicas.isEmpty() ? PartitionRegistration.NO_LEADER : targetReplicas.get(0);
        if (preferred != PartitionRegistration.NO_LEADER && isValidNewLeader(preferred)) {
            return new ElectionResult(preferred, false);
        }
        if (partition.hasLeader() && isValidNewLeader(partition.leader())) {
            return new ElectionResult(partition.leader(), false);
        }
        for (int replica : targetReplicas.subList(Math.min(1, targetReplicas.size()), targetReplicas.size())) {
            if (isValidNewLeader(replica)) {
                return new ElectionResult(replica, false);
            }
        }
        return new ElectionResult(PartitionRegistration.NO_LEADER, false);
    }

    private ElectionResult electAnyLeader() {
        if (partition.hasLeader() && isValidNewLeader(partition.leader())) {
            return new ElectionResult(partition.leader(), false);
        }
        for (int replica : targetReplicas) {
            if (isValidNewLeader(replica)) {
                return new ElectionResult(replica, false);
            }
        }
        if (canElectLastKnownLeader()) {
            return new ElectionResult(partition.lastKnownElr()[0], true);
        }
        if (election == Election.UNCLEAN) {
            for (int replica : targetReplicas) {
                if (isAcceptableLeader.test(replica)) {
                    return new ElectionResult(replica, true);
                }
            }
        }
        return new ElectionResult(PartitionRegistration.NO_LEADER, false);
    }

    /**
     * KIP-966 balanced recovery: ISR and ELR empty, one last known leader and it may lead now.
     * (Kafka 4.4's check lacks the negation on acceptability, so it elects the last known leader
     * even when that broker is fenced; Strata elects it only when it may lead.)
     */
    private boolean canElectLastKnownLeader() {
        return elrEnabled && targetIsr.isEmpty() && targetElr.isEmpty() && partition.lastKnownElr().length == 1
            && isAcceptableLeader.test(partition.lastKnownElr()[0]);
    }

    private void tryElection(PartitionChangeRecord record) {
        ElectionResult result = electLeader();
        if (result.leader() == partition.leader()) {
            return;
        }
        if (targetElr.contains(result.leader())) {
            targetIsr = List.of(result.leader());
            List<Integer> elr = new ArrayList<>(targetElr);
            elr.remove(Integer.valueOf(result.leader()));
            targetElr = elr;
        }
        record.setLeader(result.leader());
        if (result.unclean()) {
            record.setIsr(List.of(result.leader()));
            if (partition.leaderRecoveryState() != PartitionRegistration.RECOVERING) {
                record.setLeaderRecoveryState(PartitionRegistration.RECOVERING);
            }
        }
    }

    /** KAFKA-12803: a change that drops a replica from the assignment bumps the leader epoch. */
    private void bumpLeaderEpochIfReplicasRemoved(PartitionChangeRecord record) {
        if (record.leader() != NO_LEADER_CHANGE) {
            return;
        }
        for (int replica : partition.replicas()) {
            if (!targetReplicas.contains(replica)) {
                record.setLeader(partition.leader());
                return;
            }
        }
    }

    private void updateRecordElr(PartitionChangeRecord record) {
        boolean uncleanElection = record.isr() != null;
        if (uncleanElection || !elrEnabled) {
            targetElr = List.of();
        }
        if (!targetElr.equals(PartitionRegistration.toList(partition.elr()))) {
            record.setEligibleLeaderReplicas(targetElr);
        }
    }

    private void updateLastKnownLeader(PartitionChangeRecord record) {
        if (!elrEnabled) {
            return;
        }
        boolean isrBecomesEmpty = record.isr() != null && record.isr().isEmpty();
        boolean alreadyRemembered = partition.lastKnownElr().length == 1 && partition.lastKnownElr()[0] == partition.leader();
        boolean leaderAfter = record.leader() >= 0 || (partition.hasLeader() && record.leader() == NO_LEADER_CHANGE);
        if (isrBecomesEmpty && !alreadyRemembered && partition.hasLeader()) {
            record.setLastKnownElr(List.of(partition.leader()));
        } else if (leaderAfter && partition.lastKnownElr().length > 0) {
            record.setLastKnownElr(List.of());
        }
    }

    private void setAssignmentChanges(PartitionChangeRecord record) {
        if (!targetReplicas.isEmpty() && !targetReplicas.equals(PartitionRegistration.toList(partition.replicas()))) {
            record.setReplicas(targetReplicas);
        }
        if (!targetRemoving.equals(PartitionRegistration.toList(partition.removingReplicas()))) {
            record.setRemovingReplicas(targetRemoving);
        }
        if (!targetAdding.equals(PartitionRegistration.toList(partition.addingReplicas()))) {
            record.setAddingReplicas(targetAdding);
        }
    }

    @Override
    public String toString() {
        return "PartitionChangeBuilder(topicId=" + topicId + ", partitionId=" + partitionId + ", partition=" + partition + ", targetIsr=" + targetIsr
            + ", targetReplicas=" + targetReplicas + ", targetElr=" + targetElr + ", minIsr=" + minIsr + ", elrEnabled=" + elrEnabled
            + ", election=" + election + ", uncleanShutdownReplicas=" + uncleanShutdownReplicas + ", targetLeaderRecoveryState="
            + targetLeaderRecoveryState + ", replicas=" + Arrays.toString(partition.replicas()) + ")";
    }
}
