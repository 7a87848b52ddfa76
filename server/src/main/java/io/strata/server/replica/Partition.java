package io.strata.server.replica;

import io.strata.metadata.PartitionRegistration;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.protocol.records.MemoryRecords;
import io.strata.storage.ErrorCodeException;
import io.strata.storage.FetchDataInfo;
import io.strata.storage.FetchIsolation;
import io.strata.storage.LogAppendInfo;
import io.strata.storage.LogOffsetMetadata;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A partition this broker hosts (it is one of the image's replicas), with its log and its
 * leader/follower state: the leader appends, tracks every other replica's fetches
 * ({@link RemoteReplica}), moves the high watermark and asks the controller to change the ISR;
 * a follower only holds its log for the fetchers.
 *
 * <h2>Transitions</h2>
 * <pre>
 *   from                 call                                    to
 *   None                 makeLeader(reg, now)                    Leader(reg.leaderEpoch)
 *   None                 makeFollower(reg)                       Follower(reg.leaderEpoch)
 *   Leader(e)            makeLeader(reg e' &gt; e)                  Leader(e')   new epoch: epoch start = LEO, replicas reset
 *   Leader(e)            makeLeader(reg e' == e)                 Leader(e)    the image's ISR if its partition epoch is newer
 *   Leader(e)            makeFollower(reg e' &gt;= e)               Follower(e') pending ISR change dropped
 *   Follower(e)          makeLeader(reg e' &gt; e)                  Leader(e')
 *   Follower(e)          makeFollower(reg e' &gt;= e)               Follower(e')
 *   any(e)               make*(reg e' &lt; e)                       IllegalStateException (an epoch never goes down)
 *   Leader, committed    maybeExpandIsr / maybeShrinkIsr         Leader, pending expand / pending shrink (same leader epoch)
 *   Leader, pending      handleAlterPartitionResult(NONE, newer) Leader, committed (the answer's ISR and partition epoch)
 *   Leader, pending      handleAlterPartitionResult(error)       Leader, committed (the last committed ISR)
 * </pre>
 * An ISR change never changes the leader epoch (KAFKA-15021). The image's state always wins:
 * a registration with a newer partition epoch replaces the committed ISR and clears a pending change.
 *
 * <h2>High watermark</h2>
 * The minimum of the leader's end offset (with {@code strata.fsync=on-ack}: its flushed offset,
 * the recovery point) and the end offsets of every replica in {@link PartitionState#maximalIsr()},
 * or caught up and eligible to join it, as Kafka does; it never goes back, and under strict min
 * ISR ({@link ReplicaContext#strictMinIsr()}) it does not move while the committed ISR is below
 * the effective min ISR. With ISR = [self] it follows the end offset (or the fsync) at once, as a
 * single node always did.
 *
 * <h2>Thread-safety</h2>
 * {@code leaderIsrUpdateLock}: read lock for appends (leader and follower, see
 * {@link #changeFollowerLog}), follower fetch updates, high watermark moves and answers; write
 * lock for the transitions, committing ISR changes and replacing the log ({@link #maybeReplaceLog}). Lock order: this lock
 * before the log's lock, never the reverse; {@link ReplicaContext#onHighWatermarkIncremented} and
 * ISR change submissions are called outside both (KAFKA-13254).
 */
public final class Partition {
    private static final Logger LOG = LoggerFactory.getLogger(Partition.class);
    private static final int NO_EPOCH = -1;

    /** The role this node has for the partition. */
    public enum Role { NONE, LEADER, FOLLOWER }

    private final TopicPartition topicPartition;
    private final UUID topicId;
    /**
     * The current log. Replaced only by {@link #maybeReplaceLog} (a move between data
     * directories) under the write lock; readers take it anew on each use.
     */
    private volatile UnifiedLog log;
    private final ReplicaContext context;
    private final int localBrokerId;
    private final ReentrantReadWriteLock leaderIsrUpdateLock = new ReentrantReadWriteLock();
    /** The other replicas while this node leads; empty otherwise. Replaced whole under the write lock. */
    private volatile Map<Integer, RemoteReplica> remoteReplicas = Map.of();

    private volatile Role role = Role.NONE;
    private volatile int leaderEpoch;
    private volatile int leaderId;
    private volatile int partitionEpoch = NO_EPOCH;
    private volatile int[] assignment = new int[0];
    /** The image names adding or removing replicas (KIP-455: a reassignment runs; Kafka's isReassigning). */
    private volatile boolean reassigning;
    /** The image's adding replicas (KIP-455), never modified once published: read on the fetch paths without a copy. */
    private volatile int[] addingReplicas = new int[0];
    private volatile PartitionState partitionState = new PartitionState.Committed(Set.of(), PartitionState.RECOVERED);
    /** The log end offset when this node became leader of the current epoch (-1 when not leader). */
    private volatile long leaderEpochStartOffset = -1L;
    /**
     * Set when the controller refused an ISR change in a way only a newer image resolves
     * (stale partition or leader epoch): no ISR change is tried until the image moves on.
     */
    private volatile boolean awaitingImage;

    /**
     * A partition with no role yet: {@link #makeLeader} or {@link #makeFollower} gives it one.
     */
    public Partition(TopicPartition topicPartition, UUID topicId, UnifiedLog log, ReplicaContext context) {
        this.topicPartition = topicPartition;
        this.topicId = topicId;
        this.log = log;
        this.context = context;
        this.localBrokerId = context.localBrokerId();
        this.leaderId = PartitionRegistration.NO_LEADER;
        this.leaderEpoch = NO_EPOCH;
    }

    public TopicPartition topicPartition() {
        return topicPartition;
    }

    public UUID topicId() {
        return topicId;
    }

    public UnifiedLog log() {
        return log;
    }

    public int leaderEpoch() {
        return leaderEpoch;
    }

    public int leaderId() {
        return leaderId;
    }

    public int partitionEpoch() {
        return partitionEpoch;
    }

    public Role role() {
        return role;
    }

    public boolean isLeader() {
        return role == Role.LEADER;
    }

    public PartitionState partitionState() {
        return partitionState;
    }

    /** The committed ISR. */
    public Set<Integer> isr() {
        return partitionState.isr();
    }

    /** The replicas of the assignment, preferred leader first. */
    public int[] assignment() {
        return assignment.clone();
    }

    /** Whether the latest image names adding or removing replicas: a reassignment runs (Kafka's isReassigning). */
    public boolean isReassigning() {
        return reassigning;
    }

    /**
     * Whether the latest image names {@code replicaId} among the adding replicas of a running
     * reassignment (Kafka's isAddingReplica: its fetches count as ReassignmentBytesOutPerSec on
     * the leader). Allocation-free; thread-safe (one volatile read).
     */
    public boolean isAddingReplica(int replicaId) {
        for (int adding : addingReplicas) {
            if (adding == replicaId) {
                return true;
            }
        }
        return false;
    }

    /** Whether this node is an adding replica of a running reassignment (Kafka's isAddingLocalReplica: ReassignmentBytesInPerSec). */
    public boolean isAddingLocalReplica() {
        return isAddingReplica(localBrokerId);
    }

    /** The log end offset at which this node's current leader epoch began; -1 when not leader. */
    public long leaderEpochStartOffset() {
        return leaderEpochStartOffset;
    }

    /** The state of another replica while this node leads, or null. */
    public RemoteReplica remoteReplica(int brokerId) {
        return remoteReplicas.get(brokerId);
    }

    /** min(min.insync.replicas of the topic, replication factor). */
    public int effectiveMinIsr() {
        return Math.max(1, Math.min(log.config().minInSyncReplicas, Math.max(1, assignment.length)));
    }

    // ---------------------------------------------------------------- transitions

    /**
     * Makes this node the leader of {@code registration} (which must name it). A new leader epoch
     * assigns the epoch's start offset (the log end), resets every other replica (ISR members
     * count as caught up at {@code nowMs}) and recomputes the high watermark; the same epoch only
     * takes the image's ISR if its partition epoch is newer.
     *
     * @return true if this node was not the leader of this epoch before (a new leader epoch or a new leadership)
     * @throws IllegalStateException if the registration does not name this node or its leader epoch is older than the partition's
     */
    public boolean makeLeader(PartitionRegistration registration, long nowMs) {
        if (registration.leader() != localBrokerId) {
            throw new IllegalStateException("makeLeader of " + topicPartition + " on broker " + localBrokerId + " with leader "
                + registration.leader() + " (leader epoch " + registration.leaderEpoch() + ")");
        }
        boolean newEpoch;
        boolean hwMoved;
        leaderIsrUpdateLock.writeLock().lock();
        try {
            checkEpochNotBackwards(registration, Role.LEADER);
            newEpoch = role != Role.LEADER || registration.leaderEpoch() > leaderEpoch;
            if (newEpoch) {
                long startOffset = log.logEndOffset();
                log.maybeAssignEpochStartOffset(registration.leaderEpoch(), startOffset);
                leaderEpochStartOffset = startOffset;
                Map<Integer, RemoteReplica> replicas = new ConcurrentHashMap<>();
                Set<Integer> isr = toSet(registration.isr());
                for (int replica : registration.replicas()) {
                    if (replica != localBrokerId) {
                        RemoteReplica remote = new RemoteReplica(replica);
                        remote.resetForNewLeader(nowMs, isr.contains(replica));
                        replicas.put(replica, remote);
                    }
                }
                remoteReplicas = replicas;
                commitFromImage(registration);
            } else if (registration.partitionEpoch() > partitionEpoch) {
                updateRemoteReplicasForAssignment(registration, nowMs);
                commitFromImage(registration);
            }
            role = Role.LEADER;
            leaderId = localBrokerId;
            leaderEpoch = registration.leaderEpoch();
            hwMoved = maybeIncrementLeaderHighWatermark(nowMs);
        } finally {
            leaderIsrUpdateLock.writeLock().unlock();
        }
        if (hwMoved) {
            context.onHighWatermarkIncremented(topicPartition);
        }
        maybeMarkRecovered(registration);
        return newEpoch;
    }

    /**
     * Makes this node a follower of {@code registration}'s leader (another node, or none): the
     * remote replica state and any pending ISR change are dropped.
     *
     * @return true if the leader or the leader epoch changed (the fetchers must start again)
     * @throws IllegalStateException if the registration names this node as leader or its leader epoch is older
     */
    public boolean makeFollower(PartitionRegistration registration) {
        if (registration.leader() == localBrokerId) {
            throw new IllegalStateException("makeFollower of " + topicPartition + " on broker " + localBrokerId
                + ", which the registration names leader (leader epoch " + registration.leaderEpoch() + ")");
        }
        leaderIsrUpdateLock.writeLock().lock();
        try {
            checkEpochNotBackwards(registration, Role.FOLLOWER);
            boolean changed = role != Role.FOLLOWER || registration.leader() != leaderId || registration.leaderEpoch() != leaderEpoch;
            commitFromImage(registration);
            role = Role.FOLLOWER;
            leaderId = registration.leader();
            leaderEpoch = registration.leaderEpoch();
            remoteReplicas = Map.of();
            leaderEpochStartOffset = -1L;
            return changed;
        } finally {
            leaderIsrUpdateLock.writeLock().unlock();
        }
    }

    private void checkEpochNotBackwards(PartitionRegistration registration, Role target) {
        if (role != Role.NONE && registration.leaderEpoch() < leaderEpoch) {
            throw new IllegalStateException("leader epoch of " + topicPartition + " would go back from " + leaderEpoch + " to "
                + registration.leaderEpoch() + " (" + role + " -> " + target + ", partition epoch " + partitionEpoch + " -> "
                + registration.partitionEpoch() + ")");
        }
    }

    /** The image's ISR replaces the committed one and clears a pending change. Caller holds the write lock. */
    private void commitFromImage(PartitionRegistration registration) {
        boolean leadershipChanges = role == Role.NONE || registration.leaderEpoch() > leaderEpoch
            || (role == Role.LEADER) != (registration.leader() == localBrokerId);
        if (registration.partitionEpoch() > partitionEpoch || leadershipChanges) {
            partitionState = new PartitionState.Committed(toSet(registration.isr()), PartitionState.RECOVERED);
            partitionEpoch = registration.partitionEpoch();
            awaitingImage = false;
        }
        assignment = registration.replicas().clone();
        reassigning = registration.addingReplicas().length > 0 || registration.removingReplicas().length > 0;
        addingReplicas = registration.addingReplicas().clone();
    }

    /** Same epoch, new assignment (a reassignment adds or removes replicas). Caller holds the write lock. */
    private void updateRemoteReplicasForAssignment(PartitionRegistration registration, long nowMs) {
        Map<Integer, RemoteReplica> replicas = new ConcurrentHashMap<>();
        Set<Integer> isr = toSet(registration.isr());
        for (int replica : registration.replicas()) {
            if (replica == localBrokerId) {
                continue;
            }
            RemoteReplica existing = remoteReplicas.get(replica);
            if (existing == null) {
                existing = new RemoteReplica(replica);
                existing.resetForNewLeader(nowMs, isr.contains(replica));
            }
            replicas.put(replica, existing);
        }
        remoteReplicas = replicas;
    }

    // ---------------------------------------------------------------- produce

    /** {@link #appendRecordsToLeader(MemoryRecords, UnifiedLog.AppendOrigin, short)} with acks=1 (no min ISR check). */
    public LogAppendInfo appendRecordsToLeader(MemoryRecords records, UnifiedLog.AppendOrigin origin) throws IOException {
        return appendRecordsToLeader(records, origin, (short) 1);
    }

    /**
     * Appends as leader and moves the high watermark if the ISR allows (ISR = [self]: to the log
     * end at once; with {@code strata.fsync=on-ack} the {@link LogFlusher} moves it after the fsync).
     * The caller completes the purgatories after the append.
     *
     * @throws ErrorCodeException NOT_LEADER_OR_FOLLOWER if this node does not lead the partition;
     *     NOT_ENOUGH_REPLICAS for acks=all while the committed ISR is below the effective min ISR (nothing appended)
     */
    public LogAppendInfo appendRecordsToLeader(MemoryRecords records, UnifiedLog.AppendOrigin origin, short requiredAcks) throws IOException {
        leaderIsrUpdateLock.readLock().lock();
        try {
            if (role != Role.LEADER) {
                throw new ErrorCodeException(ErrorCode.NOT_LEADER_OR_FOLLOWER, "Broker " + localBrokerId + " is not the leader of "
                    + topicPartition + " (leader " + leaderId + ")");
            }
            int isrSize = partitionState.isr().size();
            int minIsr = effectiveMinIsr();
            if (requiredAcks == -1 && isrSize < minIsr) {
                throw new ErrorCodeException(ErrorCode.NOT_ENOUGH_REPLICAS, "The size of the current ISR " + partitionState.isr()
                    + " is insufficient to satisfy the min.isr requirement of " + minIsr + " for partition " + topicPartition);
            }
            LogAppendInfo info;
            try {
                info = log.appendAsLeader(records, leaderEpoch, origin);
            } catch (IOException e) {
                context.onLogDirFailure(log, "appending to " + topicPartition + " as leader", e);
                throw e;
            }
            if (!info.duplicate()) {
                maybeIncrementLeaderHighWatermark(context.time().milliseconds());
            }
            return info;
        } finally {
            leaderIsrUpdateLock.readLock().unlock();
        }
    }

    /** Appends a transaction marker written by the transaction coordinator and moves the high watermark as the ISR allows. */
    public void appendMarkerToLeader(MemoryRecords marker, io.strata.storage.MarkerCheck check) throws IOException {
        leaderIsrUpdateLock.readLock().lock();
        try {
            if (role != Role.LEADER) {
                throw new ErrorCodeException(ErrorCode.NOT_LEADER_OR_FOLLOWER, "Broker " + localBrokerId + " is not the leader of " + topicPartition);
            }
            try {
                log.appendMarker(marker, leaderEpoch, check);
                if (log.fsyncOnAck()) {
                    log.flush(log.logEndOffset());
                }
            } catch (IOException e) {
                context.onLogDirFailure(log, "appending a transaction marker to " + topicPartition, e);
                throw e;
            }
            maybeIncrementLeaderHighWatermark(context.time().milliseconds());
        } finally {
            leaderIsrUpdateLock.readLock().unlock();
        }
    }

    /**
     * Whether a write ending before {@code requiredOffset} may be acknowledged to acks=all:
     * NOT_LEADER_OR_FOLLOWER if this node no longer leads; once the high watermark covers it,
     * NONE if the committed ISR is at least the effective min ISR, else
     * NOT_ENOUGH_REPLICAS_AFTER_APPEND; null while it must wait.
     */
    public ErrorCode checkEnoughReplicasReachOffset(long requiredOffset) {
        leaderIsrUpdateLock.readLock().lock();
        try {
            if (role != Role.LEADER) {
                return ErrorCode.NOT_LEADER_OR_FOLLOWER;
            }
            if (log.highWatermark() < requiredOffset) {
                return null;
            }
            // The maximal ISR, as Kafka: a member being added already holds back the high watermark that covered the write.
            return partitionState.maximalIsr().size() >= effectiveMinIsr() ? ErrorCode.NONE : ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND;
        } finally {
            leaderIsrUpdateLock.readLock().unlock();
        }
    }

    /** Offsets below this were covered by an fsync-on-ack that failed (-1: none failed). */
    private volatile long failedFlushEndOffset = -1;

    /** The flusher's fsync up to (not including) {@code endOffset} failed. */
    void recordFlushFailure(long endOffset) {
        failedFlushEndOffset = Math.max(failedFlushEndOffset, endOffset);
    }

    /** Whether a failed fsync-on-ack covered {@code offset} and no successful one has since. */
    boolean flushFailedFor(long offset) {
        return offset < failedFlushEndOffset && log.recoveryPoint() <= offset;
    }

    /** The flusher fsynced the log: the leader's own offset for the high watermark moved. @return whether the high watermark moved */
    boolean onFlushed() {
        leaderIsrUpdateLock.readLock().lock();
        try {
            return maybeIncrementLeaderHighWatermark(context.time().milliseconds());
        } finally {
            leaderIsrUpdateLock.readLock().unlock();
        }
    }

    // ---------------------------------------------------------------- follower fetches

    /**
     * Records a follower's fetch at {@code fetchOffset} (the follower's log end), then tries to
     * add it to the ISR and to move the high watermark (the context is told outside the locks).
     * A replica that is not in the assignment is not recorded (KAFKA-5758).
     *
     * @return whether the fetch was recorded
     * @throws ErrorCodeException NOT_LEADER_OR_FOLLOWER if this node does not lead, or the fetch
     *     carries an older broker epoch than one seen before (KIP-903)
     */
    public boolean updateFollowerFetchState(int replicaId, long fetchOffset, long followerLogStartOffset, long fetchTimeMs, long leaderEndOffset,
                                            long brokerEpoch) {
        boolean hwMoved;
        RemoteReplica replica;
        leaderIsrUpdateLock.readLock().lock();
        try {
            if (role != Role.LEADER) {
                throw new ErrorCodeException(ErrorCode.NOT_LEADER_OR_FOLLOWER, "Broker " + localBrokerId + " is not the leader of " + topicPartition);
            }
            replica = remoteReplicas.get(replicaId);
            if (replica == null) {
                return false;
            }
            replica.updateFetchState(fetchOffset, followerLogStartOffset, fetchTimeMs, leaderEndOffset, brokerEpoch);
            hwMoved = maybeIncrementLeaderHighWatermark(fetchTimeMs);
        } finally {
            leaderIsrUpdateLock.readLock().unlock();
        }
        maybeExpandIsr(replica);
        if (hwMoved) {
            context.onHighWatermarkIncremented(topicPartition);
        }
        return true;
    }

    /**
     * Sends an AlterPartition adding {@code replica} if it may join: leading, nothing pending, not a
     * member, its end offset at or past both the high watermark and this epoch's start offset
     * (KAFKA-7128), and the image says its broker is unfenced, not shutting down and at the
     * broker epoch its fetch carried (KIP-841, KIP-903).
     */
    void maybeExpandIsr(RemoteReplica replica) {
        if (!needsExpand(replica)) {
            return;
        }
        PartitionState.PendingExpand pending;
        AlterPartitionRequestData.PartitionData change;
        leaderIsrUpdateLock.writeLock().lock();
        try {
            if (!needsExpand(replica)) {
                return;
            }
            pending = new PartitionState.PendingExpand(partitionState.isr(), replica.brokerId(), partitionState.leaderRecoveryState());
            partitionState = pending;
            change = alterPartitionRequest(pending, pending.proposedIsr());
        } finally {
            leaderIsrUpdateLock.writeLock().unlock();
        }
        LOG.info("Expanding the ISR of {} from {} to {} (leader epoch {}, partition epoch {})", topicPartition, pending.isr(),
            pending.proposedIsr(), change.leaderEpoch(), change.partitionEpoch());
        submit(pending, change);
    }

    /**
     * KIP-704: a leader the image shows RECOVERING (elected uncleanly) has nothing more to rebuild
     * before taking writes here (producer state is rebuilt from its own log when it loads), so it
     * tells the controller at once with an AlterPartition of the same ISR and RECOVERED. Logged at
     * WARN: records acknowledged by the previous leaders and missing from this log are lost.
     */
    private void maybeMarkRecovered(PartitionRegistration registration) {
        if (registration.leaderRecoveryState() != PartitionRegistration.RECOVERING) {
            return;
        }
        PartitionState.PendingRecovery pending;
        AlterPartitionRequestData.PartitionData change;
        leaderIsrUpdateLock.writeLock().lock();
        try {
            if (role != Role.LEADER || partitionState.isInflight() || awaitingImage || leaderEpoch != registration.leaderEpoch()) {
                return;
            }
            pending = new PartitionState.PendingRecovery(partitionState.isr());
            partitionState = pending;
            change = alterPartitionRequest(pending, pending.isr());
        } finally {
            leaderIsrUpdateLock.writeLock().unlock();
        }
        LOG.warn("{} is led by this broker after an unclean leader election (leader epoch {}): acknowledged records it lacks are lost; "
            + "marking it RECOVERED", topicPartition, leaderEpoch);
        submit(pending, change);
    }

    private boolean needsExpand(RemoteReplica replica) {
        PartitionState state = partitionState;
        if (role != Role.LEADER || state.isInflight() || awaitingImage || state.isr().contains(replica.brokerId())
            || remoteReplicas.get(replica.brokerId()) != replica) {
            return false;
        }
        long followerEnd = replica.logEndOffset();
        return followerEnd >= log.highWatermark() && leaderEpochStartOffset >= 0 && followerEnd >= leaderEpochStartOffset
            && context.isReplicaIsrEligible(replica.brokerId(), replica.brokerEpoch());
    }

    /**
     * Sends an AlterPartition removing the ISR members that are out of sync: behind the leader's
     * end and not caught up for more than {@code replica.lag.time.max.ms}. Nothing happens while a
     * change is pending.
     *
     * @return whether a shrink was sent
     */
    public boolean maybeShrinkIsr(long nowMs) {
        if (outOfSyncReplicas(nowMs).isEmpty()) {
            return false;
        }
        PartitionState.PendingShrink pending;
        AlterPartitionRequestData.PartitionData change;
        leaderIsrUpdateLock.writeLock().lock();
        try {
            Set<Integer> outOfSync = outOfSyncReplicas(nowMs);
            if (outOfSync.isEmpty()) {
                return false;
            }
            pending = new PartitionState.PendingShrink(partitionState.isr(), outOfSync, partitionState.leaderRecoveryState());
            partitionState = pending;
            change = alterPartitionRequest(pending, pending.proposedIsr());
        } finally {
            leaderIsrUpdateLock.writeLock().unlock();
        }
        LOG.info("Shrinking the ISR of {} from {} to {}: {} out of sync (leader end offset {}, high watermark {})", topicPartition,
            pending.isr(), pending.proposedIsr(), pending.outOfSync(), log.logEndOffset(), log.highWatermark());
        submit(pending, change);
        return true;
    }

    private Set<Integer> outOfSyncReplicas(long nowMs) {
        PartitionState state = partitionState;
        if (role != Role.LEADER || state.isInflight() || awaitingImage) {
            return Set.of();
        }
        long leaderEnd = log.logEndOffset();
        long maxLagMs = context.replicaLagTimeMaxMs();
        Set<Integer> outOfSync = new TreeSet<>();
        for (int member : state.isr()) {
            if (member == localBrokerId) {
                continue;
            }
            RemoteReplica replica = remoteReplicas.get(member);
            if (replica != null && !replica.isCaughtUp(leaderEnd, nowMs, maxLagMs)) {
                outOfSync.add(member);
            }
        }
        return outOfSync;
    }

    /**
     * The AlterPartition entry of {@code pending}, built under the write lock together with the
     * pending state (Kafka's prepareIsrExpand / prepareIsrShrink): the leader epoch, partition epoch
     * and members' broker epochs are those the proposal was made against, so an image applied
     * before it is sent cannot make a stale proposal look current to the controller.
     */
    private AlterPartitionRequestData.PartitionData alterPartitionRequest(PartitionState pending, Set<Integer> proposedIsr) {
        AlterPartitionRequestData.PartitionData change = new AlterPartitionRequestData.PartitionData()
            .setPartitionIndex(topicPartition.partition())
            .setLeaderEpoch(leaderEpoch)
            .setLeaderRecoveryState(pending.leaderRecoveryState())
            .setPartitionEpoch(partitionEpoch);
        for (int member : proposedIsr) {
            RemoteReplica replica = remoteReplicas.get(member);
            long brokerEpoch = replica == null ? RemoteReplica.NO_BROKER_EPOCH : replica.brokerEpoch();
            change.newIsrWithEpochs().add(new AlterPartitionRequestData.BrokerState().setBrokerId(member).setBrokerEpoch(brokerEpoch));
        }
        return change;
    }

    /** Sends {@code change} (outside the partition's locks) and applies the answer to {@code pending}. */
    private void submit(PartitionState pending, AlterPartitionRequestData.PartitionData change) {
        try {
            context.submitIsrChange(topicPartition, topicId, change).whenComplete((answer, failure) -> {
                if (failure != null) {
                    LOG.warn("The ISR change {} of {} could not be sent; it is retried at the next check", pending, topicPartition, failure);
                    handleAlterPartitionResult(pending, errorAnswer(ErrorCode.OPERATION_NOT_ATTEMPTED));
                } else {
                    handleAlterPartitionResult(pending, answer);
                }
            });
        } catch (RuntimeException e) {
            LOG.warn("The ISR change {} of {} could not be sent; it is retried at the next check", pending, topicPartition, e);
            handleAlterPartitionResult(pending, errorAnswer(ErrorCode.OPERATION_NOT_ATTEMPTED));
        }
    }

    private AlterPartitionResponseData.PartitionData errorAnswer(ErrorCode error) {
        return new AlterPartitionResponseData.PartitionData().setPartitionIndex(topicPartition.partition()).setErrorCode(error.code());
    }

    /**
     * Applies the controller's answer to the ISR change {@code sent}, if it is still the pending
     * one. NONE: the answer's ISR and partition epoch become the committed state if its partition
     * epoch is newer than ours (an answer older than the image is ignored); INVALID_UPDATE_VERSION,
     * FENCED_LEADER_EPOCH, NEW_LEADER_ELECTED, UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION,
     * NOT_LEADER_OR_FOLLOWER: the pending change is dropped and no other is tried until the image
     * moves on; any other error (INELIGIBLE_REPLICA, OPERATION_NOT_ATTEMPTED, ...): dropped, tried
     * again at the next check.
     *
     * @return whether the committed state changed
     */
    public boolean handleAlterPartitionResult(PartitionState sent, AlterPartitionResponseData.PartitionData answer) {
        ErrorCode error = ErrorCode.forCode(answer.errorCode());
        boolean changed = false;
        boolean hwMoved = false;
        leaderIsrUpdateLock.writeLock().lock();
        try {
            if (partitionState != sent) {
                LOG.debug("Ignoring the answer {} to {} of {}: the state is now {}", error, sent, topicPartition, partitionState);
                return false;
            }
            switch (error) {
                case NONE -> {
                    if (answer.partitionEpoch() > partitionEpoch && answer.leaderEpoch() == leaderEpoch) {
                        partitionState = new PartitionState.Committed(new LinkedHashSet<>(answer.isr()), answer.leaderRecoveryState());
                        partitionEpoch = answer.partitionEpoch();
                        changed = true;
                        LOG.info("ISR of {} is now {} (partition epoch {})", topicPartition, answer.isr(), partitionEpoch);
                    } else {
                        LOG.info("Ignoring the AlterPartition answer for {} with partition epoch {} (ours {}) and leader epoch {} (ours {})",
                            topicPartition, answer.partitionEpoch(), partitionEpoch, answer.leaderEpoch(), leaderEpoch);
                        partitionState = new PartitionState.Committed(sent.isr(), sent.leaderRecoveryState());
                    }
                }
                case INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH, NEW_LEADER_ELECTED, UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION,
                     NOT_LEADER_OR_FOLLOWER, INVALID_REQUEST -> {
                    // INVALID_REQUEST too, as Kafka: the same proposal would be refused again until the image changes it.
                    LOG.info("The controller refused the ISR change {} of {} with {}; waiting for the metadata image", sent, topicPartition, error);
                    partitionState = new PartitionState.Committed(sent.isr(), sent.leaderRecoveryState());
                    awaitingImage = true;
                }
                default -> {
                    LOG.info("The controller refused the ISR change {} of {} with {}; it is tried again at the next check", sent, topicPartition,
                        error);
                    partitionState = new PartitionState.Committed(sent.isr(), sent.leaderRecoveryState());
                }
            }
            hwMoved = maybeIncrementLeaderHighWatermark(context.time().milliseconds());
        } finally {
            leaderIsrUpdateLock.writeLock().unlock();
        }
        context.recordIsrChange(sent, changed);
        if (hwMoved || changed) {
            context.onHighWatermarkIncremented(topicPartition);
        }
        return changed;
    }

    // ---------------------------------------------------------------- high watermark

    /**
     * Moves the high watermark to the minimum end offset over the leader (its flushed offset with
     * fsync-on-ack) and every replica of the maximal ISR or about to join it. Caller holds the
     * partition lock (read or write). @return whether it moved
     */
    private boolean maybeIncrementLeaderHighWatermark(long nowMs) {
        if (role != Role.LEADER) {
            return false;
        }
        PartitionState state = partitionState;
        if (context.strictMinIsr() && state.isr().size() < effectiveMinIsr()) {
            return false;
        }
        LogOffsetMetadata leaderEnd = log.logEndOffsetMetadata();
        LogOffsetMetadata candidate = leaderEnd;
        if (log.fsyncOnAck()) {
            long flushed = Math.min(log.recoveryPoint(), leaderEnd.messageOffset());
            candidate = flushed == leaderEnd.messageOffset() ? leaderEnd : LogOffsetMetadata.offsetOnly(flushed);
        }
        Set<Integer> maximal = state.maximalIsr();
        long maxLagMs = context.replicaLagTimeMaxMs();
        for (RemoteReplica replica : remoteReplicas.values()) {
            long replicaEnd = replica.logEndOffset();
            if (replicaEnd >= candidate.messageOffset()) {
                continue;
            }
            boolean counts = maximal.contains(replica.brokerId())
                || replica.isCaughtUp(leaderEnd.messageOffset(), nowMs, maxLagMs)
                && context.isReplicaIsrEligible(replica.brokerId(), replica.brokerEpoch());
            if (counts) {
                candidate = LogOffsetMetadata.offsetOnly(Math.max(replicaEnd, 0L));
            }
        }
        return log.maybeIncrementHighWatermark(candidate);
    }

    // ---------------------------------------------------------------- log changes outside produce

    /** A change of the log by its follower side (append, truncation); gets the log in force. */
    @FunctionalInterface
    public interface FollowerLogChange<T> {
        T apply(UnifiedLog log) throws IOException;
    }

    /**
     * Runs a follower's change of the log under the read lock, so that a log swap
     * ({@link #maybeReplaceLog}, write lock) never interleaves with it (Kafka's
     * {@code appendRecordsToFollowerOrFutureReplica} under the same lock as the swap).
     */
    public <T> T changeFollowerLog(FollowerLogChange<T> change) throws IOException {
        leaderIsrUpdateLock.readLock().lock();
        UnifiedLog current = log;
        try {
            return change.apply(current);
        } catch (IOException e) {
            context.onLogDirFailure(current, "changing the follower log of " + topicPartition, e);
            throw e;
        } finally {
            leaderIsrUpdateLock.readLock().unlock();
        }
    }

    /** Builds the replacement of the current log, called under the write lock; null leaves the current log in place. */
    @FunctionalInterface
    public interface LogReplacement {
        UnifiedLog replace(UnifiedLog current) throws IOException;
    }

    /**
     * Replaces the current log (a move between data directories, AlterReplicaLogDirs) under the
     * write lock: no leader or follower append, truncation or high watermark move can run
     * meanwhile, so the replacement sees the final log end. The replacement must hold every
     * offset of the current log, its high watermark and epochs.
     *
     * @return whether the log was replaced
     * @throws IllegalStateException if the replacement is of another partition or ends elsewhere
     */
    public boolean maybeReplaceLog(LogReplacement replacement) throws IOException {
        leaderIsrUpdateLock.writeLock().lock();
        try {
            UnifiedLog current = log;
            UnifiedLog replaced = replacement.replace(current);
            if (replaced == null) {
                return false;
            }
            if (!replaced.topicPartition().equals(topicPartition) || replaced.logEndOffset() != current.logEndOffset()) {
                throw new IllegalStateException("The replacement log of " + topicPartition + " does not match: replacement="
                    + replaced.topicPartition() + " logEndOffset=" + replaced.logEndOffset() + ", currentLogEndOffset=" + current.logEndOffset());
            }
            log = replaced;
            LOG.info("Partition {} now uses its log in {}", topicPartition, replaced.dir());
            return true;
        } finally {
            leaderIsrUpdateLock.writeLock().unlock();
        }
    }

    // ---------------------------------------------------------------- reads

    /** Checks the leader epoch a client believes in against ours (KIP-320). */
    public void checkLeaderEpoch(int currentLeaderEpoch) {
        if (currentLeaderEpoch < 0) {
            return;
        }
        int epoch = leaderEpoch;
        if (currentLeaderEpoch < epoch) {
            throw new ErrorCodeException(ErrorCode.FENCED_LEADER_EPOCH, "leader epoch " + currentLeaderEpoch + " of the request is older than "
                + epoch + " for " + topicPartition);
        }
        if (currentLeaderEpoch > epoch) {
            throw new ErrorCodeException(ErrorCode.UNKNOWN_LEADER_EPOCH, "leader epoch " + currentLeaderEpoch + " of the request is newer than "
                + epoch + " for " + topicPartition);
        }
    }

    /**
     * Whether a new leader's high watermark has not reached its epoch's start offset yet
     * (KIP-207): until then it cannot say where the committed end is.
     */
    public boolean highWatermarkBelowEpochStart() {
        long start = leaderEpochStartOffset;
        return role == Role.LEADER && start > log.highWatermark();
    }

    public FetchDataInfo read(long fetchOffset, int maxBytes, FetchIsolation isolation, boolean minOneMessage) {
        return log.read(fetchOffset, maxBytes, isolation, minOneMessage);
    }

    private static Set<Integer> toSet(int[] values) {
        Set<Integer> set = new LinkedHashSet<>();
        for (int value : values) {
            set.add(value);
        }
        return Collections.unmodifiableSet(set);
    }

    /** The other replicas of the assignment, for tests and metrics. */
    List<Integer> remoteReplicaIds() {
        return new ArrayList<>(remoteReplicas.keySet());
    }

    @Override
    public String toString() {
        return "Partition(" + topicPartition + ", role=" + role + ", leader=" + leaderId + ", leaderEpoch=" + leaderEpoch + ", partitionEpoch="
            + partitionEpoch + ", state=" + partitionState + ", assignment=" + Arrays.toString(assignment) + ")";
    }
}
