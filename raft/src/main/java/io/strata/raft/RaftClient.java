package io.strata.raft;

import io.strata.protocol.ApiMessage;
import io.strata.protocol.ByteBufferWriter;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Message;
import io.strata.protocol.Uuids;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsRequestData;
import io.strata.protocol.message.ApiVersionsResponseData;
import io.strata.protocol.message.UpdateRaftVoterRequestData;
import io.strata.protocol.message.UpdateRaftVoterResponseData;
import io.strata.protocol.message.BeginQuorumEpochRequestData;
import io.strata.protocol.message.BeginQuorumEpochResponseData;
import io.strata.protocol.message.DescribeQuorumResponseData;
import io.strata.protocol.message.EndQuorumEpochRequestData;
import io.strata.protocol.message.EndQuorumEpochResponseData;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.message.FetchSnapshotRequestData;
import io.strata.protocol.message.FetchSnapshotResponseData;
import io.strata.protocol.message.LeaderChangeMessage;
import io.strata.protocol.message.VoteRequestData;
import io.strata.protocol.message.VoteResponseData;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Records;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * One replica of the KRaft quorum (KIP-595): pull-based Raft over one log. Leaders are elected
 * with Vote (after a pre-vote, KIP-996) and announced with BeginQuorumEpoch; followers pull
 * entries with Fetch, which also carries their acknowledgement (the fetch offset) and brings
 * back the high watermark; a follower whose log diverged from the leader's is told where
 * (DivergingEpoch) and truncates. A leader that steps down says so with EndQuorumEpoch.
 *
 * <p>Snapshots (KIP-630): the state machine asks for a snapshot of a committed prefix
 * ({@link #createSnapshot}); once it is frozen the log drops the entries below it (at the next
 * {@link #poll}). A follower whose fetch position lies before the leader's log start, or whose
 * last fetched epoch the leader can no longer place, is answered with the leader's latest
 * SnapshotId instead of records; it then copies that snapshot chunk by chunk with FetchSnapshot
 * (by byte position), freezes it, starts its log at the snapshot's end and fetches on from there.
 *
 * <p>Driven entirely by its owner: {@link #receive} queues an incoming message,
 * {@link #poll(long)} handles the queue and then the current role's timers, sending through
 * the {@link RaftTransport}. No thread, no clock and no randomness of its own, so a whole
 * quorum runs deterministically in one thread under a simulation.
 *
 * <p>Durability: the leader counts only its flushed log towards the high watermark, and a
 * follower flushes what it appended before it fetches again (the next fetch offset is its
 * acknowledgement), so a committed entry is on the disks of a majority.
 *
 * <p>Voters (KIP-853): a static quorum's voters are fixed by configuration (kraft.version 0); a
 * dynamic quorum's are the latest VotersRecord in the snapshot and log ({@link VoterSetHistory}),
 * changed one voter at a time by the leader ({@link #addVoter}, {@link #removeVoter}, and
 * UpdateRaftVoter for endpoints). A replica uses a voter set as soon as its log has it,
 * committed or not; a truncation rolls back to the previous one. Replicas are named by id and
 * directory id ({@link ReplicaKey}) wherever the wire carries it.
 *
 * <p>Not thread-safe.
 */
public final class RaftClient {
    private static final Logger LOG = LoggerFactory.getLogger(RaftClient.class);
    /** The metadata topic's name and id as Kafka's quorum uses them. */
    public static final String TOPIC = io.strata.storage.LogManager.METADATA_TOPIC;
    public static final UUID TOPIC_ID = new UUID(0L, 1L);
    static final int PARTITION = 0;

    /** Told about what the quorum decided. */
    public interface Listener {
        /** The high watermark moved: every entry below {@code highWatermark} is committed. */
        default void onHighWatermark(long highWatermark) {
        }

        /** This replica learned of a new leader ({@code leaderId} -1: unknown) or epoch. */
        default void onLeaderChange(int epoch, int leaderId) {
        }

        /** The log now starts at this snapshot, copied from the leader: the state must be reloaded from it. */
        default void onSnapshotLoaded(OffsetAndEpoch snapshotId) {
        }
    }

    /**
     * How long the leader holds a Fetch that finds nothing new (Kafka's quorum uses 500 ms):
     * the follower learns of new entries and of a moved high watermark as soon as they happen,
     * without polling.
     */
    static final int FETCH_MAX_WAIT_MS = 500;

    /** A Fetch the leader holds until there is something to say or its wait is over. */
    private record ParkedFetch(RaftMessage request, long deadlineMs) {
    }

    /** The snapshot a follower is copying from {@code owner}'s leader (it is dropped when the role changes). */
    private record SnapshotFetch(FollowerState owner, SnapshotWriter writer) {
    }

    /**
     * A candidate refused a vote (a split vote, usually) pre-votes again after a random backoff of
     * up to {@code controller.quorum.election.backoff.max.ms} / this (250 ms by default).
     */
    private static final int LOST_ELECTION_BACKOFF_DIVISOR = 4;

    /** A request sent and not yet answered. */
    private record Pending(int destination, ApiMessageType api, int epoch, boolean preVote, long sentMs) {
    }

    /** How a voter change ended, with Kafka's error code and message. */
    public record VoterChangeResult(ErrorCode error, String message) {
        static final VoterChangeResult OK = new VoterChangeResult(ErrorCode.NONE, null);
    }

    /**
     * The one voter change the leader works on (Kafka allows one at a time). An add first asks the
     * new voter's ApiVersions for the kraft.version it supports, then appends; every kind then
     * waits for its VotersRecord to commit (or answers at once when not {@code ackWhenCommitted}
     * but still blocks other changes until the commit).
     */
    private static final class VoterChange {
        enum Kind { ADD, REMOVE, UPDATE }

        enum Stage { AWAITING_API_VERSIONS, AWAITING_COMMIT }

        final Kind kind;
        final int epoch;
        VoterSet.Voter voter;
        final long deadlineMs;
        final boolean ackWhenCommitted;
        final CompletableFuture<VoterChangeResult> result;
        Stage stage;
        long recordOffset = -1;

        VoterChange(Kind kind, int epoch, VoterSet.Voter voter, Stage stage, long deadlineMs, boolean ackWhenCommitted,
                    CompletableFuture<VoterChangeResult> result) {
            this.kind = kind;
            this.epoch = epoch;
            this.voter = voter;
            this.stage = stage;
            this.deadlineMs = deadlineMs;
            this.ackWhenCommitted = ackWhenCommitted;
            this.result = result;
        }

        void appendedAt(long offset) {
            if (stage == Stage.AWAITING_COMMIT) {
                throw new IllegalStateException(kind + " of voter " + voter.key() + " appended twice: at " + recordOffset + " and " + offset);
            }
            stage = Stage.AWAITING_COMMIT;
            recordOffset = offset;
        }

        @Override
        public String toString() {
            return kind + "(" + voter.key() + ", epoch " + epoch + ", " + stage + (recordOffset >= 0 ? " at " + recordOffset : "") + ")";
        }
    }

    private final int localId;
    private final QuorumSetup setup;
    private final VoterSetHistory history;
    /** Leader endpoints learned from responses and BeginQuorumEpoch (on our listener), by node id. */
    private final Map<Integer, VoterSet.Endpoint> learnedEndpoints = new HashMap<>();
    /** Where to reach a replica being added, until it is in the voter set. */
    private final Map<Integer, VoterSet.Endpoint> probeEndpoints = new HashMap<>();
    private VoterChange voterChange;
    /** The epoch in which this voter's UpdateRaftVoter was accepted (its endpoints are in the log). */
    private int voterUpdatedInEpoch = -1;
    private long nextUpdateVoterMs;
    private final String clusterId;
    private final RaftConfig config;
    private final RaftLog log;
    private final QuorumState quorum;
    private final RaftTransport transport;
    private final Listener listener;
    private final Random random;
    private final ArrayDeque<RaftMessage> inbound = new ArrayDeque<>();
    private final Map<Long, Pending> pending = new HashMap<>();
    private final List<ParkedFetch> parkedFetches = new ArrayList<>();
    /** The highest high watermark sent to each replica in a Fetch answer. */
    private final Map<Integer, Long> highWatermarkSent = new HashMap<>();
    /** Something happened that a held Fetch should hear about (an append, a new high watermark). */
    private boolean wakeParkedFetches;
    private long nextCorrelationId;
    private long nextFetchMs;
    private int lastNotifiedEpoch = -1;
    private int lastNotifiedLeader = -2;
    private SnapshotFetch snapshotFetch;

    /** A static quorum of {@code voters} (kraft.version 0). */
    public RaftClient(int localId, Set<Integer> voters, String clusterId, RaftConfig config, RaftLog log, QuorumStateStore store,
                      RaftTransport transport, Random random, Listener listener) {
        this(QuorumSetup.staticQuorum(localId, voters), clusterId, config, log, store, transport, random, listener);
    }

    public RaftClient(QuorumSetup setup, String clusterId, RaftConfig config, RaftLog log, QuorumStateStore store,
                      RaftTransport transport, Random random, Listener listener) {
        this.localId = setup.localKey().id();
        this.setup = setup;
        this.history = setup.isDynamic() ? VoterSetHistory.dynamic() : VoterSetHistory.staticVoters(VoterSet.ofIds(setup.staticVoters()));
        this.clusterId = clusterId;
        this.config = config;
        this.log = log;
        this.transport = transport;
        this.random = random;
        this.listener = listener;
        this.quorum = new QuorumState(localId, history, config, store, random);
    }

    /** Resumes from the quorum-state file, the latest snapshot and the log. Call once, before anything else. */
    public void initialize(long nowMs) {
        log.latestSnapshotId().flatMap(log::readSnapshot).ifPresent(history::loadSnapshot);
        history.catchUp(log);
        LOG.info("Node {}: voters {}", localId, history);
        quorum.initialize(log.endOffset(), nowMs);
        notifyLeaderChange();
    }

    public int localId() {
        return localId;
    }

    public int epoch() {
        return quorum.epoch();
    }

    /** The leader this replica knows, or -1. */
    public int leaderId() {
        return quorum.leaderId();
    }

    public boolean isLeader() {
        return quorum.isLeader();
    }

    public EpochState state() {
        return quorum.state();
    }

    /** Every entry below this offset is committed (0: nothing known yet). */
    public long highWatermark() {
        return quorum.highWatermark();
    }

    public RaftLog log() {
        return log;
    }

    /** The voter set in effect (the latest in the log, committed or not). */
    public VoterSet voterSet() {
        return history.latest();
    }

    /** The voter set committed as of this replica's high watermark. */
    public VoterSet committedVoterSet() {
        return history.committed(quorum.highWatermark());
    }

    /** The offset of the record of {@link #committedVoterSet()} (-1: static, or not from the log). For tests. */
    long committedVoterSetOffset() {
        return history.committedOffset(quorum.highWatermark());
    }

    /** The finalized kraft.version: 0 for static quorums, 1 once the log or bootstrap checkpoint says so. */
    public short kraftVersion() {
        return history.kraftVersion();
    }

    public ReplicaKey localKey() {
        return setup.localKey();
    }

    /**
     * Where node {@code nodeId} listens for quorum requests, as far as this replica knows: a
     * bootstrap server (negative ids), a replica being added, a voter of the voter set, or a leader
     * that named its endpoint. Empty when only the transport's own configuration can tell (static quorums).
     */
    public Optional<VoterSet.Endpoint> endpointOf(int nodeId) {
        if (nodeId < -1) {
            int index = -2 - nodeId;
            return index < setup.bootstrapServers().size() ? Optional.of(setup.bootstrapServers().get(index)) : Optional.empty();
        }
        VoterSet.Endpoint probe = probeEndpoints.get(nodeId);
        if (probe != null) {
            return Optional.of(probe);
        }
        Optional<VoterSet.Endpoint> voter = history.latest().voter(nodeId).flatMap(v -> v.endpoint(setup.listenerName()));
        if (voter.isPresent()) {
            return voter;
        }
        if (nodeId == localId) {
            return localEndpoint();
        }
        return Optional.ofNullable(learnedEndpoints.get(nodeId));
    }

    /** Whether a bootstrap server is this replica itself (its own address is in the list of every controller). */
    private boolean isLocalAddress(VoterSet.Endpoint bootstrap) {
        for (VoterSet.Endpoint local : setup.localEndpoints()) {
            if (local.host().equals(bootstrap.host()) && local.port() == bootstrap.port()) {
                return true;
            }
        }
        return false;
    }

    private Optional<VoterSet.Endpoint> localEndpoint() {
        for (VoterSet.Endpoint endpoint : setup.localEndpoints()) {
            if (endpoint.listener().equals(setup.listenerName())) {
                return Optional.of(endpoint);
            }
        }
        return Optional.empty();
    }

    /** Queues an incoming request or response for the next {@link #poll}. */
    public void receive(RaftMessage message) {
        if (message.destination() != localId) {
            throw new IllegalArgumentException("node " + localId + " received a message for node " + message.destination() + ": " + message);
        }
        inbound.add(message);
    }

    /**
     * Appends {@code values} as one batch if this replica leads; they are committed once the
     * high watermark passes the returned offset.
     *
     * @return the offset of the last record, or -1 if this replica is not the leader
     */
    public long append(List<byte[]> values, long nowMs) {
        if (!quorum.isLeader() || values.isEmpty()) {
            return -1;
        }
        long lastOffset = log.appendAsLeader(values, quorum.epoch(), nowMs);
        history.skipTo(lastOffset + 1);
        wakeParkedFetches = true;
        return lastOffset;
    }

    /**
     * Starts a snapshot of every entry below {@code snapshotId.offset()}, the last of which has
     * epoch {@code snapshotId.epoch()}; the caller appends the state and freezes it. Kafka's rule:
     * a snapshot covers committed entries only.
     *
     * @return empty if a snapshot at or past that offset exists already
     * @throws IllegalArgumentException if the offset is above the high watermark or the epoch is
     *                                  not the epoch of the entry before the offset
     */
    public Optional<RecordsSnapshotWriter> createSnapshot(OffsetAndEpoch snapshotId, long lastContainedLogTimestampMs) {
        if (snapshotId.offset() > quorum.highWatermark()) {
            throw new IllegalArgumentException("node " + localId + ": snapshot " + snapshotId + " would cover uncommitted entries: the high watermark is "
                + quorum.highWatermark());
        }
        Optional<OffsetAndEpoch> latest = log.latestSnapshotId();
        if (latest.isPresent() && latest.get().offset() >= snapshotId.offset()) {
            return Optional.empty();
        }
        OffsetAndEpoch end = log.endOffsetForEpoch(snapshotId.epoch());
        boolean epochEndsAtOrAfter = end.epoch() == snapshotId.epoch() && end.offset() >= snapshotId.offset();
        boolean earlierEpochsEndBefore = snapshotId.epoch() == 0 || log.endOffsetForEpoch(snapshotId.epoch() - 1).offset() < snapshotId.offset();
        if (snapshotId.offset() <= log.logStartOffset() || !epochEndsAtOrAfter || !earlierEpochsEndBefore) {
            throw new IllegalArgumentException("node " + localId + ": snapshot " + snapshotId + " does not name an entry of the log (log start "
                + log.logStartOffset() + ", end for epoch " + snapshotId.epoch() + ": " + end + ")");
        }
        SnapshotWriter raw = log.createSnapshot(snapshotId);
        if (history.isStatic()) {
            return Optional.of(new RecordsSnapshotWriter(raw, lastContainedLogTimestampMs));
        }
        // The snapshot replaces the log below it: it must carry the voter set in effect there.
        return Optional.of(new RecordsSnapshotWriter(raw, lastContainedLogTimestampMs, history.kraftVersion(), history.committed(snapshotId.offset())));
    }

    /** Leaves leadership (graceful shutdown): the voters are told to elect another leader at once. */
    public void resign(long nowMs) {
        if (quorum.isLeader()) {
            quorum.transitionToResigned(quorum.leaderStateOrThrow().successorsByEndOffset(), nowMs);
            notifyLeaderChange();
        }
    }

    /** Handles every queued message, then the current role's timers. */
    public void poll(long nowMs) {
        RaftMessage message;
        while ((message = inbound.poll()) != null) {
            if (message.isRequest()) {
                handleRequest(message, nowMs);
            } else {
                handleResponse(message, nowMs);
            }
        }
        expirePending(nowMs);
        dropStaleSnapshotFetch();
        if (log.deleteBeforeSnapshot(quorum.highWatermark())) {
            history.trimBefore(log.logStartOffset());
        }
        pollVoterChange(nowMs);
        pollState(nowMs);
        completeParkedFetches(nowMs);
        notifyLeaderChange();
    }

    /**
     * Answers the held Fetch requests that are due: all of them after an append, a new high
     * watermark or a change of role, else those whose wait is over. The leader flushes before
     * answering, so an entry it sends is durable here first.
     */
    private void completeParkedFetches(long nowMs) {
        if (parkedFetches.isEmpty()) {
            wakeParkedFetches = false;
            return;
        }
        if (wakeParkedFetches && quorum.state() instanceof LeaderState leader) {
            pollLeader(leader, nowMs);
        }
        boolean all = wakeParkedFetches || !quorum.isLeader();
        wakeParkedFetches = false;
        List<ParkedFetch> due = new ArrayList<>();
        Iterator<ParkedFetch> parked = parkedFetches.iterator();
        while (parked.hasNext()) {
            ParkedFetch fetch = parked.next();
            if (all || nowMs >= fetch.deadlineMs()) {
                due.add(fetch);
                parked.remove();
            }
        }
        for (ParkedFetch fetch : due) {
            FetchResponseData response = handleFetchRequest((FetchRequestData) fetch.request().data(), nowMs);
            sendFetchAnswer(fetch.request(), response);
        }
    }

    // ------------------------------------------------------------------ roles

    private void pollState(long nowMs) {
        EpochState state = quorum.state();
        if (state instanceof LeaderState leader) {
            pollLeader(leader, nowMs);
        } else if (state instanceof CandidateState candidate) {
            if (candidate.electionTimer.isExpired(nowMs)) {
                startPreVote(nowMs);
            } else {
                sendVoteRequests(candidate.tally, candidate.epoch(), false, nowMs);
            }
        } else if (state instanceof ProspectiveState prospective) {
            if (prospective.electionTimer.isExpired(nowMs)) {
                startPreVote(nowMs);
            } else {
                sendVoteRequests(prospective.tally, prospective.epoch() + 1, true, nowMs);
            }
        } else if (state instanceof FollowerState follower) {
            pollFollower(follower, nowMs);
        } else if (state instanceof UnattachedState unattached) {
            if (quorum.isVoter() && unattached.electionTimer.isExpired(nowMs)) {
                startPreVote(nowMs);
            } else if (!quorum.isVoter() && nowMs >= nextFetchMs && !hasPending(ApiMessageType.FETCH)) {
                sendDiscoveryFetch(unattached.epoch(), -1, nowMs); // an observer discovers the leader by fetching
            }
        } else if (state instanceof ResignedState resigned) {
            if (resigned.electionTimer.isExpired(nowMs) && !quorum.isVoter()) {
                quorum.transitionToObserverAfterResigning(nowMs); // it removed itself: it waits for the next leader
            } else if (resigned.electionTimer.isExpired(nowMs)) {
                startPreVote(nowMs);
            } else {
                sendEndQuorumEpoch(resigned, nowMs);
            }
        }
    }

    private void pollLeader(LeaderState leader, long nowMs) {
        if (log.flushedOffset() < log.endOffset().offset()) {
            log.flush();
        }
        if (leader.updateLocal(log.flushedOffset())) {
            publishHighWatermark(leader.highWatermark());
        }
        if (!history.isStatic() && !leader.isLocalVoter() && !history.committed(leader.highWatermark()).isVoter(localId)
            && !history.hasUncommittedChange(leader.highWatermark())) {
            // It removed itself and the removal is committed: it led until then, now the remaining voters elect (KIP-853).
            LOG.info("Node {}: no longer a voter of {} (committed below {}); resigning epoch {}", localId, history.latest(),
                leader.highWatermark(), leader.epoch());
            quorum.transitionToResigned(leader.successorsByEndOffset(), nowMs);
            return;
        }
        if (!quorum.voterSet().isOnlyVoter(localId) && !leader.hasMajorityContact(nowMs, config.checkQuorumTimeoutMs())) {
            LOG.warn("Node {}: no fetch from a majority of voters for {} ms in epoch {}; resigning (check-quorum)", localId,
                config.checkQuorumTimeoutMs(), leader.epoch());
            quorum.transitionToResigned(leader.successorsByEndOffset(), nowMs);
            return;
        }
        maybeUpdateLocalVoter(leader, nowMs);
        if (!leader.beginEpochUnacked().isEmpty() && leader.beginEpochRetryTimer.isExpired(nowMs)) {
            for (int voter : leader.beginEpochUnacked()) {
                send(voter, beginQuorumEpochRequest(leader.epoch(), voter), new Pending(voter, ApiMessageType.BEGIN_QUORUM_EPOCH,
                    leader.epoch(), false, nowMs));
            }
            leader.beginEpochRetryTimer.reset(nowMs + config.requestTimeoutMs());
        }
    }

    private void pollFollower(FollowerState follower, long nowMs) {
        if (follower.fetchTimer.isExpired(nowMs)) {
            if (quorum.isVoter()) {
                LOG.info("Node {}: no successful fetch from leader {} for {} ms in epoch {}; starting a pre-vote", localId,
                    follower.leaderId(), config.fetchTimeoutMs(), follower.epoch());
                startPreVote(nowMs);
                return;
            }
            // An observer cannot campaign: it asks a bootstrap server or a random voter, whose answer names the leader.
            // The fetch timer stays expired (so this replica grants pre-votes, as one that lost its leader should).
            if (!hasPending(ApiMessageType.FETCH) && nowMs >= nextFetchMs) {
                sendDiscoveryFetch(follower.epoch(), follower.leaderId(), nowMs);
            }
            return;
        }
        maybeSendUpdateVoter(follower, nowMs);
        if (nowMs < nextFetchMs || hasPending(ApiMessageType.FETCH) || hasPending(ApiMessageType.FETCH_SNAPSHOT)) {
            return;
        }
        if (snapshotFetch != null) {
            sendFetchSnapshot(follower, snapshotFetch.writer(), nowMs);
        } else {
            sendFetch(follower.leaderId(), follower.epoch(), nowMs);
        }
    }

    /** A snapshot copy belongs to one epoch's leader: a change of role abandons it. */
    private void dropStaleSnapshotFetch() {
        if (snapshotFetch != null && snapshotFetch.owner() != quorum.state()) {
            snapshotFetch.writer().close();
            snapshotFetch = null;
        }
    }

    private void startPreVote(long nowMs) {
        quorum.transitionToProspective(nowMs);
        ProspectiveState prospective = (ProspectiveState) quorum.state();
        if (prospective.tally.isWon()) {
            becomeCandidate(nowMs); // a single voter needs nobody else
        } else {
            sendVoteRequests(prospective.tally, prospective.epoch() + 1, true, nowMs);
        }
    }

    private void becomeCandidate(long nowMs) {
        quorum.transitionToCandidate(nowMs);
        CandidateState candidate = (CandidateState) quorum.state();
        LOG.info("Node {}: won the pre-vote, candidate in epoch {}", localId, candidate.epoch());
        if (candidate.tally.isWon()) {
            becomeLeader(nowMs);
        } else {
            sendVoteRequests(candidate.tally, candidate.epoch(), false, nowMs);
        }
    }

    private void becomeLeader(long nowMs) {
        CandidateState candidate = (CandidateState) quorum.state();
        Set<Integer> granting = candidate.tally.granted();
        long epochStartOffset = log.endOffset().offset();
        LeaderState leader = quorum.transitionToLeader(epochStartOffset, nowMs);
        long offset = log.appendControlAsLeader(ControlRecordType.LEADER_CHANGE, leaderChangeMessage(leader.epoch(), granting), leader.epoch(), nowMs);
        history.skipTo(offset + 1);
        if (!history.isStatic() && history.latestOffset() < 0 && !history.latest().isEmpty()) {
            // The voters come from the bootstrap checkpoint only: put them in the log, where replicas fetching from 0 find them.
            long versionOffset = log.appendControlAsLeader(ControlRecordType.KRAFT_VERSION,
                RecordsSnapshotWriter.kraftVersionRecord(history.kraftVersion()), leader.epoch(), nowMs);
            history.skipTo(versionOffset + 1);
            appendVoters(leader, history.latest(), nowMs);
        }
        LOG.info("Node {}: elected leader of epoch {} at offset {} with the votes of {}", localId, leader.epoch(), epochStartOffset, granting);
        pollLeader(leader, nowMs);
    }

    private byte[] leaderChangeMessage(int epoch, Set<Integer> granting) {
        LeaderChangeMessage message = new LeaderChangeMessage().setVersion((short) 0).setLeaderId(localId);
        for (int voter : new TreeSet<>(quorum.voters())) {
            message.voters().add(new LeaderChangeMessage.Voter().setVoterId(voter));
        }
        for (int voter : new TreeSet<>(granting)) {
            message.grantingVoters().add(new LeaderChangeMessage.Voter().setVoterId(voter));
        }
        return encode(message, (short) 0);
    }

    /** Appends a VotersRecord naming {@code voters}, which take effect at once; returns its offset. */
    private long appendVoters(LeaderState leader, VoterSet voters, long nowMs) {
        long offset = log.appendControlAsLeader(ControlRecordType.KRAFT_VOTERS, encode(voters.toRecord(), (short) 0), leader.epoch(), nowMs);
        history.appended(offset, voters);
        leader.updateVoters(voters.ids(), log.endOffset().offset(), nowMs);
        wakeParkedFetches = true;
        LOG.info("Node {}: voters {} appended at offset {} in epoch {}", localId, voters, offset, leader.epoch());
        return offset;
    }

    static byte[] encode(Message message, short version) {
        ByteBuffer buffer = ByteBuffer.allocate(message.size(version));
        message.write(new ByteBufferWriter(buffer), version);
        return buffer.array();
    }

    /**
     * The quorum as the leader sees it, for DescribeQuorum: leader, epoch, high watermark, and
     * per voter and observer the log end offset and the last fetch and caught-up times. A
     * replica that is not the leader answers NOT_LEADER_OR_FOLLOWER, as Kafka's do.
     */
    public DescribeQuorumResponseData.PartitionData describeQuorum(long nowMs) {
        DescribeQuorumResponseData.PartitionData partition = new DescribeQuorumResponseData.PartitionData().setPartitionIndex(PARTITION);
        if (!(quorum.state() instanceof LeaderState leader)) {
            return partition.setErrorCode(ErrorCode.NOT_LEADER_OR_FOLLOWER.code()).setLeaderId(quorum.leaderId()).setLeaderEpoch(quorum.epoch());
        }
        partition.setErrorCode(ErrorCode.NONE.code())
            .setLeaderId(localId)
            .setLeaderEpoch(leader.epoch())
            .setHighWatermark(quorum.highWatermark());
        for (VoterSet.Voter voter : quorum.voterSet().voters()) {
            partition.currentVoters().add(replicaState(voter.key().id(), leader, nowMs).setReplicaDirectoryId(voter.key().directoryId()));
        }
        for (int replica : new TreeSet<>(leader.progress().keySet())) {
            if (!quorum.isVoter(replica)) {
                partition.observers().add(replicaState(replica, leader, nowMs).setReplicaDirectoryId(leader.progress().get(replica).directoryId()));
            }
        }
        return partition;
    }

    private DescribeQuorumResponseData.ReplicaState replicaState(int replicaId, LeaderState leader, long nowMs) {
        DescribeQuorumResponseData.ReplicaState state = new DescribeQuorumResponseData.ReplicaState().setReplicaId(replicaId);
        if (replicaId == localId) {
            return state.setLogEndOffset(log.endOffset().offset()).setLastFetchTimestamp(nowMs).setLastCaughtUpTimestamp(nowMs);
        }
        LeaderState.ReplicaProgress progress = leader.progress().get(replicaId);
        if (progress == null) {
            return state.setLogEndOffset(-1).setLastFetchTimestamp(-1).setLastCaughtUpTimestamp(-1);
        }
        return state.setLogEndOffset(progress.logEndOffset()).setLastFetchTimestamp(progress.lastFetchMs())
            .setLastCaughtUpTimestamp(progress.lastCaughtUpMs());
    }

    // ------------------------------------------------------------------ voter changes (KIP-853)

    /**
     * Adds {@code key} to the voters (AddRaftVoter), refusing as Kafka's AddVoterHandler does, in
     * its order: NOT_LEADER_OR_FOLLOWER off the leader; REQUEST_TIMED_OUT while another change is
     * under way, before the leader committed in its epoch, or while the latest voter set is not
     * committed; UNSUPPORTED_VERSION at kraft.version 0; DUPLICATE_VOTER for a voter id already in
     * the set; INVALID_REQUEST without an endpoint on the quorum's listener (or a directory id).
     * Then it asks the new voter's ApiVersions: no answer or an error is REQUEST_TIMED_OUT, a
     * kraft.version range without the finalized level is INVALID_REQUEST; the replica must be an
     * observer of this leader with that directory id that caught up within the check-quorum
     * timeout, else REQUEST_TIMED_OUT. The VotersRecord is then appended; the answer comes when it
     * commits (at once if not {@code ackWhenCommitted}), or REQUEST_TIMED_OUT after {@code timeoutMs}.
     */
    public CompletableFuture<VoterChangeResult> addVoter(ReplicaKey key, List<VoterSet.Endpoint> endpoints, boolean ackWhenCommitted,
                                                         long timeoutMs, long nowMs) {
        CompletableFuture<VoterChangeResult> result = new CompletableFuture<>();
        VoterChangeResult refusal = refuseVoterChange("adding");
        Optional<VoterSet.Endpoint> endpoint = endpoints.stream().filter(e -> e.listener().equals(setup.listenerName())).findFirst();
        if (refusal == null && quorum.voterSet().isVoter(key.id())) {
            refusal = new VoterChangeResult(ErrorCode.DUPLICATE_VOTER, "The voter id for " + key + " is already part of the set of voters "
                + quorum.voterSet() + ".");
        } else if (refusal == null && endpoint.isEmpty()) {
            refusal = new VoterChangeResult(ErrorCode.INVALID_REQUEST, "Provided listeners " + endpoints + " do not contain a listener for "
                + setup.listenerName());
        } else if (refusal == null && !key.hasDirectoryId()) {
            refusal = new VoterChangeResult(ErrorCode.INVALID_REQUEST, "The voter " + key + " has no directory id");
        }
        if (refusal != null) {
            result.complete(refusal);
            return result;
        }
        LeaderState leader = quorum.leaderStateOrThrow();
        VoterSet.Voter voter = new VoterSet.Voter(key, endpoints, VoterSet.KRAFT_VERSION_MIN, VoterSet.KRAFT_VERSION_MAX);
        voterChange = new VoterChange(VoterChange.Kind.ADD, leader.epoch(), voter, VoterChange.Stage.AWAITING_API_VERSIONS,
            nowMs + Math.max(0, timeoutMs), ackWhenCommitted, result);
        probeEndpoints.put(key.id(), endpoint.get());
        ApiVersionsRequestData probe = new ApiVersionsRequestData().setClientSoftwareName("strata-raft").setClientSoftwareVersion("1");
        send(key.id(), probe, new Pending(key.id(), ApiMessageType.API_VERSIONS, leader.epoch(), false, nowMs));
        LOG.info("Node {}: adding voter {} at {}; asking its ApiVersions", localId, key, endpoint.get());
        return result;
    }

    /**
     * Removes {@code key} from the voters (RemoveRaftVoter), with the refusals of {@link #addVoter}
     * and VOTER_NOT_FOUND for a key that is not a voter (or the last voter). A leader that removes
     * itself goes on leading, without counting itself, until the change commits, then resigns.
     */
    public CompletableFuture<VoterChangeResult> removeVoter(ReplicaKey key, long nowMs) {
        CompletableFuture<VoterChangeResult> result = new CompletableFuture<>();
        VoterChangeResult refusal = refuseVoterChange("removing");
        Optional<VoterSet> next = quorum.voterSet().remove(key);
        if (refusal == null && next.isEmpty()) {
            refusal = new VoterChangeResult(ErrorCode.VOTER_NOT_FOUND, "Cannot remove voter " + key + " from the set of voters " + quorum.voterSet());
        }
        if (refusal != null) {
            result.complete(refusal);
            return result;
        }
        LeaderState leader = quorum.leaderStateOrThrow();
        voterChange = new VoterChange(VoterChange.Kind.REMOVE, leader.epoch(), quorum.voterSet().voter(key.id()).orElseThrow(),
            VoterChange.Stage.AWAITING_API_VERSIONS, nowMs + config.requestTimeoutMs(), true, result);
        voterChange.appendedAt(appendVoters(leader, next.get(), nowMs));
        return result;
    }

    /** Why no voter change can start now, or null. */
    private VoterChangeResult refuseVoterChange(String what) {
        if (!(quorum.state() instanceof LeaderState leader)) {
            return new VoterChangeResult(ErrorCode.NOT_LEADER_OR_FOLLOWER, "node " + localId + " is not the leader; the leader is "
                + quorum.leaderId() + " in epoch " + quorum.epoch());
        }
        if (voterChange != null) {
            return new VoterChangeResult(ErrorCode.REQUEST_TIMED_OUT, "Request timed out waiting for leader to handle previous voter change request");
        }
        if (leader.highWatermark() <= leader.epochStartOffset()) {
            return new VoterChangeResult(ErrorCode.REQUEST_TIMED_OUT, "Request timed out waiting for leader to establish HWM and fence previous voter changes");
        }
        if (history.kraftVersion() < 1) {
            return new VoterChangeResult(ErrorCode.UNSUPPORTED_VERSION, "Cluster doesn't support " + what + " voter because the kraft.version feature is "
                + history.kraftVersion());
        }
        if (history.hasUncommittedChange(leader.highWatermark())) {
            return new VoterChangeResult(ErrorCode.REQUEST_TIMED_OUT, "Request timed out waiting for voters to commit the latest voter change at "
                + history.latestOffset() + " with HWM " + leader.highWatermark());
        }
        return null;
    }

    /** Completes the voter change whose record committed, or that lost its leader or its time. */
    private void pollVoterChange(long nowMs) {
        VoterChange change = voterChange;
        if (change == null) {
            return;
        }
        if (change.stage == VoterChange.Stage.AWAITING_COMMIT && quorum.highWatermark() > change.recordOffset) {
            LOG.info("Node {}: voter change {} committed; voters {}", localId, change, history.latest());
            finishVoterChange(VoterChangeResult.OK);
        } else if (!(quorum.state() instanceof LeaderState leader) || leader.epoch() != change.epoch) {
            finishVoterChange(new VoterChangeResult(ErrorCode.NOT_LEADER_OR_FOLLOWER, "node " + localId + " lost the leadership of epoch "
                + change.epoch + " during " + change));
        } else if (nowMs >= change.deadlineMs) {
            String message = change.stage == VoterChange.Stage.AWAITING_API_VERSIONS ? "New voter " + change.voter.key() + " is not ready to receive requests"
                : "Request timed out waiting for voters to commit the latest voter change at " + change.recordOffset + " with HWM " + quorum.highWatermark();
            finishVoterChange(new VoterChangeResult(ErrorCode.REQUEST_TIMED_OUT, message));
        }
    }

    private void finishVoterChange(VoterChangeResult result) {
        VoterChange change = voterChange;
        voterChange = null;
        probeEndpoints.remove(change.voter.key().id());
        change.result.complete(result);
    }

    /** The new voter's ApiVersions: the kraft.version it supports, then whether it caught up; then the VotersRecord. */
    private void handleApiVersionsResponse(Pending request, ApiVersionsResponseData response, long nowMs) {
        VoterChange change = voterChange;
        if (change == null || change.kind != VoterChange.Kind.ADD || change.stage != VoterChange.Stage.AWAITING_API_VERSIONS
            || change.voter.key().id() != request.destination() || !(quorum.state() instanceof LeaderState leader) || leader.epoch() != change.epoch) {
            return; // pollVoterChange ends a change that lost its leader
        }
        ReplicaKey key = change.voter.key();
        if (response.errorCode() != ErrorCode.NONE.code()) {
            finishVoterChange(new VoterChangeResult(ErrorCode.REQUEST_TIMED_OUT, "Aborted add voter operation for " + key
                + " since API_VERSIONS returned an error " + ErrorCode.forCode(response.errorCode())));
            return;
        }
        short min = 0;
        short max = 0;
        for (ApiVersionsResponseData.SupportedFeatureKey feature : response.supportedFeatures()) {
            if (feature.name().equals("kraft.version")) {
                min = feature.minVersion();
                max = feature.maxVersion();
            }
        }
        short finalized = history.kraftVersion();
        if (finalized < min || finalized > max) {
            finishVoterChange(new VoterChangeResult(ErrorCode.INVALID_REQUEST, "Aborted add voter operation for " + key + " since the kraft.version range (min: "
                + min + ", max: " + max + ") doesn't support the finalized version " + finalized));
            return;
        }
        LeaderState.ReplicaProgress progress = leader.progress().get(key.id());
        boolean caughtUp = progress != null && progress.directoryId().equals(key.directoryId())
            && progress.lastCaughtUpMs() >= 0 && nowMs - progress.lastCaughtUpMs() <= config.checkQuorumTimeoutMs();
        if (!caughtUp) {
            finishVoterChange(new VoterChangeResult(ErrorCode.REQUEST_TIMED_OUT, "Aborted add voter operation for " + key + " since it is lagging behind"));
            return;
        }
        change.voter = new VoterSet.Voter(key, change.voter.endpoints(), min, max);
        VoterSet next = quorum.voterSet().add(change.voter).orElseThrow(() -> new IllegalStateException("node " + localId + ": voter " + key
            + " joined " + quorum.voterSet() + " during its own addition"));
        change.appendedAt(appendVoters(leader, next, nowMs));
        if (!change.ackWhenCommitted) {
            change.result.complete(VoterChangeResult.OK); // still the change under way until it commits
        }
    }

    /**
     * UpdateRaftVoter from a voter whose endpoints (or kraft.version range) differ from the voter
     * set's. Answered when the new VotersRecord commits; null means "answered later".
     */
    private UpdateRaftVoterResponseData handleUpdateVoterRequest(UpdateRaftVoterRequestData request, long nowMs, RaftMessage message) {
        if (wrongCluster(request.clusterId())) {
            return updateVoterResponse(ErrorCode.INCONSISTENT_CLUSTER_ID);
        }
        if (!quorum.isLeader()) {
            return updateVoterResponse(ErrorCode.NOT_LEADER_OR_FOLLOWER);
        }
        if (request.currentLeaderEpoch() != quorum.epoch()) {
            return updateVoterResponse(request.currentLeaderEpoch() < quorum.epoch() ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.UNKNOWN_LEADER_EPOCH);
        }
        if (history.isStatic()) {
            return updateVoterResponse(ErrorCode.NONE); // static voters' endpoints are the configuration's
        }
        VoterChangeResult refusal = refuseVoterChange("updating");
        if (refusal != null) {
            return updateVoterResponse(refusal.error());
        }
        List<VoterSet.Endpoint> endpoints = new ArrayList<>();
        for (UpdateRaftVoterRequestData.Listener listener : request.listeners()) {
            endpoints.add(new VoterSet.Endpoint(listener.name(), listener.host(), listener.port()));
        }
        short min = request.kRaftVersionFeature().minSupportedVersion();
        short max = request.kRaftVersionFeature().maxSupportedVersion();
        if (endpoints.stream().noneMatch(e -> e.listener().equals(setup.listenerName())) || history.kraftVersion() < min
            || history.kraftVersion() > max || max < min) {
            return updateVoterResponse(ErrorCode.INVALID_REQUEST);
        }
        ReplicaKey key = new ReplicaKey(request.voterId(), request.voterDirectoryId() == null ? Uuids.ZERO : request.voterDirectoryId());
        VoterSet.Voter voter = new VoterSet.Voter(key, endpoints, min, max);
        Optional<VoterSet> next = quorum.voterSet().update(voter);
        if (next.isEmpty()) {
            return updateVoterResponse(ErrorCode.VOTER_NOT_FOUND);
        }
        if (next.get().equals(quorum.voterSet())) {
            return updateVoterResponse(ErrorCode.NONE);
        }
        LeaderState leader = quorum.leaderStateOrThrow();
        CompletableFuture<VoterChangeResult> result = new CompletableFuture<>();
        voterChange = new VoterChange(VoterChange.Kind.UPDATE, leader.epoch(), voter, VoterChange.Stage.AWAITING_API_VERSIONS,
            nowMs + config.requestTimeoutMs(), true, result);
        voterChange.appendedAt(appendVoters(leader, next.get(), nowMs));
        result.thenAccept(done -> transport.send(new RaftMessage(localId, message.source(), message.correlationId(),
            updateVoterResponse(done.error()), false)));
        return null;
    }

    private UpdateRaftVoterResponseData updateVoterResponse(ErrorCode error) {
        UpdateRaftVoterResponseData response = new UpdateRaftVoterResponseData().setErrorCode(error.code());
        response.currentLeader().setLeaderId(quorum.leaderId()).setLeaderEpoch(quorum.epoch());
        endpointOf(quorum.leaderId()).ifPresent(endpoint -> response.currentLeader().setHost(endpoint.host()).setPort(endpoint.port()));
        return response;
    }

    /** Whether this replica's endpoints and kraft.version range are what {@code voter} in the log says. */
    private boolean matchesLocal(VoterSet.Voter voter) {
        return new java.util.HashSet<>(voter.endpoints()).equals(new java.util.HashSet<>(setup.localEndpoints()))
            && voter.minKRaftVersion() == VoterSet.KRAFT_VERSION_MIN && voter.maxKRaftVersion() == VoterSet.KRAFT_VERSION_MAX;
    }

    /** A voter following a leader tells it its endpoints once per epoch if the voter set has others (KIP-853). */
    private void maybeSendUpdateVoter(FollowerState follower, long nowMs) {
        if (history.isStatic() || history.kraftVersion() < 1 || setup.localEndpoints().isEmpty() || voterUpdatedInEpoch == follower.epoch()) {
            return;
        }
        Optional<VoterSet.Voter> voter = history.latest().voter(localId).filter(v -> v.key().matches(setup.localKey()));
        if (voter.isEmpty()) {
            return;
        }
        if (matchesLocal(voter.get())) {
            voterUpdatedInEpoch = follower.epoch();
            return;
        }
        if (nowMs < nextUpdateVoterMs || hasPending(ApiMessageType.UPDATE_RAFT_VOTER)) {
            return;
        }
        UpdateRaftVoterRequestData request = new UpdateRaftVoterRequestData().setClusterId(clusterId).setCurrentLeaderEpoch(follower.epoch())
            .setVoterId(localId).setVoterDirectoryId(setup.localKey().directoryId());
        for (VoterSet.Endpoint endpoint : setup.localEndpoints()) {
            request.listeners().add(new UpdateRaftVoterRequestData.Listener().setName(endpoint.listener()).setHost(endpoint.host()).setPort(endpoint.port()));
        }
        request.kRaftVersionFeature().setMinSupportedVersion(VoterSet.KRAFT_VERSION_MIN).setMaxSupportedVersion(VoterSet.KRAFT_VERSION_MAX);
        nextUpdateVoterMs = nowMs + config.requestTimeoutMs();
        send(follower.leaderId(), request, new Pending(follower.leaderId(), ApiMessageType.UPDATE_RAFT_VOTER, follower.epoch(), false, nowMs));
    }

    private void handleUpdateVoterResponse(Pending request, UpdateRaftVoterResponseData response, long nowMs) {
        if (response.errorCode() == ErrorCode.NONE.code()) {
            voterUpdatedInEpoch = Math.max(voterUpdatedInEpoch, request.epoch());
        } else {
            nextUpdateVoterMs = Math.min(nextUpdateVoterMs, nowMs + config.retryBackoffMs() * 10L);
        }
    }

    /** The leader brings its own endpoints in the voter set up to date (the format step may have named other ports). */
    private void maybeUpdateLocalVoter(LeaderState leader, long nowMs) {
        if (history.isStatic() || setup.localEndpoints().isEmpty() || voterChange != null || refuseVoterChange("updating") != null) {
            return;
        }
        Optional<VoterSet.Voter> voter = history.latest().voter(localId).filter(v -> v.key().matches(setup.localKey()));
        if (voter.isEmpty() || matchesLocal(voter.get())) {
            return;
        }
        VoterSet.Voter updated = new VoterSet.Voter(voter.get().key(), setup.localEndpoints(), VoterSet.KRAFT_VERSION_MIN, VoterSet.KRAFT_VERSION_MAX);
        appendVoters(leader, history.latest().update(updated).orElseThrow(), nowMs);
    }

    // ------------------------------------------------------------------ requests

    private void handleRequest(RaftMessage request, long nowMs) {
        ApiMessage response = switch (request.api()) {
            case VOTE -> handleVoteRequest((VoteRequestData) request.data(), nowMs);
            case BEGIN_QUORUM_EPOCH -> handleBeginQuorumEpochRequest((BeginQuorumEpochRequestData) request.data(), nowMs);
            case END_QUORUM_EPOCH -> handleEndQuorumEpochRequest((EndQuorumEpochRequestData) request.data(), nowMs);
            case FETCH -> handleFetchRequest((FetchRequestData) request.data(), nowMs);
            case FETCH_SNAPSHOT -> handleFetchSnapshotRequest((FetchSnapshotRequestData) request.data(), nowMs);
            case UPDATE_RAFT_VOTER -> handleUpdateVoterRequest((UpdateRaftVoterRequestData) request.data(), nowMs, request);
            default -> throw new IllegalArgumentException("node " + localId + " got a request the quorum does not serve: " + request);
        };
        if (response == null) {
            return; // answered later (an UpdateRaftVoter waits for its record to commit)
        }
        if (response instanceof FetchResponseData fetch && isEmptyAnswer(fetch) && ((FetchRequestData) request.data()).maxWaitMs() > 0
            && !tellsNewHighWatermark(request.source(), fetch)) {
            // Replace an earlier held Fetch of the same replica: it gave up on that one.
            parkedFetches.removeIf(parked -> parked.request().source() == request.source());
            long waitMs = Math.min(((FetchRequestData) request.data()).maxWaitMs(), FETCH_MAX_WAIT_MS);
            parkedFetches.add(new ParkedFetch(request, nowMs + waitMs));
            return;
        }
        sendFetchAnswer(request, response);
    }

    /** Sends a Fetch answer (or any answer), remembering the high watermark told to a fetching replica. */
    private void sendFetchAnswer(RaftMessage request, ApiMessage response) {
        if (response instanceof FetchResponseData fetch && !fetch.responses().isEmpty() && !fetch.responses().get(0).partitions().isEmpty()) {
            highWatermarkSent.merge(request.source(), fetch.responses().get(0).partitions().get(0).highWatermark(), Math::max);
        }
        transport.send(new RaftMessage(localId, request.source(), request.correlationId(), response, false));
    }

    /**
     * Whether an answer without records still carries news: a high watermark above the last one
     * told to that replica (it committed while the replica was already caught up). Held, the
     * replica would learn of the commit only at the end of the wait, and so would its metadata.
     */
    private boolean tellsNewHighWatermark(int replicaId, FetchResponseData fetch) {
        long highWatermark = fetch.responses().get(0).partitions().get(0).highWatermark();
        return highWatermark > highWatermarkSent.getOrDefault(replicaId, -1L);
    }

    /** A successful Fetch answer without records or divergence: worth holding until there is news. */
    private static boolean isEmptyAnswer(FetchResponseData response) {
        if (response.errorCode() != ErrorCode.NONE.code() || response.responses().isEmpty()) {
            return false;
        }
        FetchResponseData.PartitionData data = response.responses().get(0).partitions().get(0);
        return data.errorCode() == ErrorCode.NONE.code() && data.divergingEpoch().epoch() < 0 && data.snapshotId().epoch() < 0
            && (data.records() == null || data.records().sizeInBytes() == 0);
    }

    /** Whether a request meant for ({@code voterId}, {@code directoryId}) is meant for this replica (-1 and zero: anyone). */
    private boolean isLocalKey(int voterId, UUID directoryId) {
        boolean idMatches = voterId < 0 || voterId == localId;
        boolean directoryMatches = directoryId == null || directoryId.equals(Uuids.ZERO) || !setup.localKey().hasDirectoryId()
            || directoryId.equals(setup.localKey().directoryId());
        return idMatches && directoryMatches;
    }

    private boolean wrongCluster(String requestClusterId) {
        return requestClusterId != null && !requestClusterId.equals(clusterId);
    }

    private VoteResponseData handleVoteRequest(VoteRequestData request, long nowMs) {
        if (wrongCluster(request.clusterId())) {
            return new VoteResponseData().setErrorCode(ErrorCode.INCONSISTENT_CLUSTER_ID.code());
        }
        VoteRequestData.PartitionData partition = request.topics().get(0).partitions().get(0);
        int candidateId = partition.replicaId();
        int candidateEpoch = partition.replicaEpoch();
        boolean preVote = partition.preVote();
        if (!quorum.isDynamic() && !quorum.isVoter(candidateId)) {
            return voteResponse(ErrorCode.INVALID_VOTER_KEY, false);
        }
        if (quorum.isDynamic() && (!isLocalKey(request.voterId(), partition.voterDirectoryId()) || candidateId == localId || candidateId < 0)) {
            // Meant for another replica of this id (a wiped disk), or nonsense: Kafka's INVALID_VOTER_KEY.
            return voteResponse(ErrorCode.INVALID_VOTER_KEY, false);
        }
        if (!preVote && candidateEpoch > quorum.epoch()) {
            quorum.transitionToUnattached(candidateEpoch, nowMs);
        }
        OffsetAndEpoch candidateEnd = new OffsetAndEpoch(partition.lastOffset(), partition.lastOffsetEpoch());
        boolean logUpToDate = candidateEnd.compareTo(log.endOffset()) >= 0;
        boolean granted;
        if (candidateEpoch < quorum.epoch()) {
            granted = false;
        } else if (preVote) {
            granted = logUpToDate && grantsPreVote(nowMs);
        } else {
            granted = logUpToDate && grantVote(candidateId, nowMs);
        }
        return voteResponse(ErrorCode.NONE, granted);
    }

    /**
     * A pre-vote is refused while this replica has a leader it hears from: a leader, or a
     * follower whose fetch timer has not expired (KIP-996). That keeps a voter that was cut
     * off from disrupting a working quorum when it returns.
     */
    private boolean grantsPreVote(long nowMs) {
        EpochState state = quorum.state();
        if (state instanceof LeaderState) {
            return false;
        }
        if (state instanceof FollowerState follower) {
            return !follower.hasFetchedFromLeader() || follower.fetchTimer.isExpired(nowMs);
        }
        return true;
    }

    /** Grants the vote of the current epoch to {@code candidateId} if it is still free (or already theirs). */
    private boolean grantVote(int candidateId, long nowMs) {
        EpochState state = quorum.state();
        int votedId = state.election().votedId();
        if (votedId == candidateId) {
            return true; // a retried request
        }
        if (votedId != ElectionState.NONE || !(state instanceof UnattachedState || state instanceof ProspectiveState)) {
            return false;
        }
        quorum.transitionToVoted(quorum.epoch(), candidateId, nowMs);
        return true;
    }

    private VoteResponseData voteResponse(ErrorCode partitionError, boolean granted) {
        VoteResponseData.PartitionData partition = new VoteResponseData.PartitionData()
            .setPartitionIndex(PARTITION)
            .setErrorCode(partitionError.code())
            .setLeaderId(quorum.leaderId())
            .setLeaderEpoch(quorum.epoch())
            .setVoteGranted(granted);
        VoteResponseData.TopicData topic = new VoteResponseData.TopicData().setTopicName(TOPIC);
        topic.partitions().add(partition);
        VoteResponseData response = new VoteResponseData();
        response.topics().add(topic);
        return response;
    }

    private BeginQuorumEpochResponseData handleBeginQuorumEpochRequest(BeginQuorumEpochRequestData request, long nowMs) {
        if (wrongCluster(request.clusterId())) {
            return new BeginQuorumEpochResponseData().setErrorCode(ErrorCode.INCONSISTENT_CLUSTER_ID.code());
        }
        BeginQuorumEpochRequestData.PartitionData partition = request.topics().get(0).partitions().get(0);
        ErrorCode error = ErrorCode.NONE;
        if (partition.leaderEpoch() < quorum.epoch()) {
            error = ErrorCode.FENCED_LEADER_EPOCH;
        } else if (quorum.isDynamic() && !isLocalKey(request.voterId(), partition.voterDirectoryId())) {
            error = ErrorCode.INVALID_VOTER_KEY;
        } else if (!quorum.canFollow(partition.leaderId())) {
            error = ErrorCode.INVALID_REQUEST;
        } else {
            for (BeginQuorumEpochRequestData.LeaderEndpoint endpoint : request.leaderEndpoints()) {
                if (endpoint.name().equals(setup.listenerName())) {
                    learnedEndpoints.put(partition.leaderId(), new VoterSet.Endpoint(endpoint.name(), endpoint.host(), endpoint.port()));
                }
            }
            maybeFollow(partition.leaderEpoch(), partition.leaderId(), nowMs);
        }
        BeginQuorumEpochResponseData.TopicData topic = new BeginQuorumEpochResponseData.TopicData().setTopicName(TOPIC);
        topic.partitions().add(new BeginQuorumEpochResponseData.PartitionData()
            .setPartitionIndex(PARTITION)
            .setErrorCode(error.code())
            .setLeaderId(quorum.leaderId())
            .setLeaderEpoch(quorum.epoch()));
        BeginQuorumEpochResponseData response = new BeginQuorumEpochResponseData();
        response.topics().add(topic);
        return response;
    }

    private EndQuorumEpochResponseData handleEndQuorumEpochRequest(EndQuorumEpochRequestData request, long nowMs) {
        if (wrongCluster(request.clusterId())) {
            return new EndQuorumEpochResponseData().setErrorCode(ErrorCode.INCONSISTENT_CLUSTER_ID.code());
        }
        EndQuorumEpochRequestData.PartitionData partition = request.topics().get(0).partitions().get(0);
        ErrorCode error = ErrorCode.NONE;
        if (partition.leaderEpoch() < quorum.epoch()) {
            error = ErrorCode.FENCED_LEADER_EPOCH;
        } else if (partition.leaderEpoch() > quorum.epoch()) {
            quorum.transitionToUnattached(partition.leaderEpoch(), nowMs);
        } else if (quorum.state() instanceof FollowerState follower && follower.leaderId() == partition.leaderId()) {
            // The leader is gone: campaign soon, the preferred successors first.
            int position = 0;
            for (EndQuorumEpochRequestData.ReplicaInfo candidate : partition.preferredCandidates()) {
                if (candidate.candidateId() == localId) {
                    break;
                }
                position++;
            }
            long backoffMs = position == 0 ? 0 : Math.min(config.electionBackoffMaxMs(), (long) config.retryBackoffMs() << Math.min(position, 16));
            follower.fetchTimer.reset(Math.min(follower.fetchTimer.deadlineMs(), nowMs + backoffMs));
        }
        EndQuorumEpochResponseData.TopicData topic = new EndQuorumEpochResponseData.TopicData().setTopicName(TOPIC);
        topic.partitions().add(new EndQuorumEpochResponseData.PartitionData()
            .setPartitionIndex(PARTITION)
            .setErrorCode(error.code())
            .setLeaderId(quorum.leaderId())
            .setLeaderEpoch(quorum.epoch()));
        EndQuorumEpochResponseData response = new EndQuorumEpochResponseData();
        response.topics().add(topic);
        return response;
    }

    private FetchResponseData handleFetchRequest(FetchRequestData request, long nowMs) {
        if (wrongCluster(request.clusterId())) {
            return new FetchResponseData().setErrorCode(ErrorCode.INCONSISTENT_CLUSTER_ID.code());
        }
        FetchRequestData.FetchPartition partition = request.topics().get(0).partitions().get(0);
        int replicaId = request.replicaState().replicaId();
        FetchResponseData.PartitionData data = new FetchResponseData.PartitionData().setPartitionIndex(PARTITION);
        data.currentLeader().setLeaderId(quorum.leaderId()).setLeaderEpoch(quorum.epoch());
        if (!quorum.isLeader()) {
            data.setErrorCode(ErrorCode.NOT_LEADER_OR_FOLLOWER.code());
        } else if (partition.currentLeaderEpoch() < quorum.epoch()) {
            data.setErrorCode(ErrorCode.FENCED_LEADER_EPOCH.code());
        } else if (partition.currentLeaderEpoch() > quorum.epoch()) {
            data.setErrorCode(ErrorCode.UNKNOWN_LEADER_EPOCH.code());
        } else if (partition.fetchOffset() < 0) {
            data.setErrorCode(ErrorCode.INVALID_REQUEST.code());
        } else {
            serveFetch(quorum.leaderStateOrThrow(), replicaId, partition.replicaDirectoryId() == null ? Uuids.ZERO : partition.replicaDirectoryId(),
                partition, data, nowMs);
        }
        FetchResponseData.FetchableTopicResponse topic = new FetchResponseData.FetchableTopicResponse().setTopic(TOPIC).setTopicId(TOPIC_ID);
        topic.partitions().add(data);
        FetchResponseData response = new FetchResponseData();
        response.responses().add(topic);
        addLeaderEndpoint(response.nodeEndpoints(), quorum.leaderId());
        return response;
    }

    /** Names the leader's quorum endpoint in an answer (Fetch v16+, FetchSnapshot v1 NodeEndpoints), when known. */
    private void addLeaderEndpoint(List<FetchResponseData.NodeEndpoint> endpoints, int leaderId) {
        if (leaderId < 0 || quorum.isLeader() && quorum.leaderId() != leaderId) {
            return;
        }
        endpointOf(leaderId).ifPresent(endpoint -> endpoints.add(new FetchResponseData.NodeEndpoint().setNodeId(leaderId)
            .setHost(endpoint.host()).setPort(endpoint.port())));
    }

    private void serveFetch(LeaderState leader, int replicaId, UUID directoryId, FetchRequestData.FetchPartition partition,
                            FetchResponseData.PartitionData data, long nowMs) {
        long fetchOffset = partition.fetchOffset();
        long logStart = log.logStartOffset();
        OffsetAndEpoch end = log.endOffsetForEpoch(partition.lastFetchedEpoch());
        boolean diverged = end.epoch() != partition.lastFetchedEpoch() || end.offset() < fetchOffset;
        if (logStart > 0 && (fetchOffset < logStart || (diverged && (end.offset() < logStart || end.equals(OffsetAndEpoch.ZERO))))) {
            // What the follower needs next (or where its log diverges) is below our log start: only the snapshot has it.
            OffsetAndEpoch snapshotId = log.latestSnapshotId().orElseThrow(() -> new IllegalStateException("node " + localId
                + ": log start " + logStart + " without a snapshot"));
            data.snapshotId().setEndOffset(snapshotId.offset()).setEpoch(snapshotId.epoch());
            data.setHighWatermark(leader.highWatermark()).setLogStartOffset(logStart).setRecords(MemoryRecords.EMPTY);
            leader.updateContact(replicaId, nowMs);
            return;
        }
        if (diverged) {
            // The follower's log holds entries this leader does not have: tell it where ours end.
            data.divergingEpoch().setEpoch(end.epoch()).setEndOffset(end.offset());
            data.setHighWatermark(leader.highWatermark()).setLogStartOffset(logStart).setRecords(MemoryRecords.EMPTY);
            return;
        }
        boolean matchesVoter = quorum.voterSet().isVoter(new ReplicaKey(Math.max(0, replicaId), directoryId));
        if (leader.updateReplica(replicaId, directoryId, matchesVoter, fetchOffset, log.endOffset().offset(), nowMs)) {
            publishHighWatermark(leader.highWatermark());
        }
        Records records = fetchOffset < log.endOffset().offset() ? log.read(fetchOffset, config.fetchMaxBytes()) : MemoryRecords.EMPTY;
        data.setErrorCode(ErrorCode.NONE.code())
            .setHighWatermark(leader.highWatermark())
            .setLogStartOffset(logStart)
            .setRecords(records);
    }

    /**
     * Serves one chunk of a snapshot: up to the smaller of the request's and our max bytes from
     * the requested byte position. Only the leader serves, and only the current epoch.
     */
    private FetchSnapshotResponseData handleFetchSnapshotRequest(FetchSnapshotRequestData request, long nowMs) {
        if (wrongCluster(request.clusterId())) {
            return new FetchSnapshotResponseData().setErrorCode(ErrorCode.INCONSISTENT_CLUSTER_ID.code());
        }
        FetchSnapshotRequestData.PartitionSnapshot partition = request.topics().get(0).partitions().get(0);
        FetchSnapshotResponseData.PartitionSnapshot data = new FetchSnapshotResponseData.PartitionSnapshot().setIndex(PARTITION);
        data.currentLeader().setLeaderId(quorum.leaderId()).setLeaderEpoch(quorum.epoch());
        data.snapshotId().setEndOffset(partition.snapshotId().endOffset()).setEpoch(partition.snapshotId().epoch());
        data.setUnalignedRecords(MemoryRecords.EMPTY);
        FetchSnapshotResponseData response = new FetchSnapshotResponseData();
        FetchSnapshotResponseData.TopicSnapshot topic = new FetchSnapshotResponseData.TopicSnapshot().setName(TOPIC);
        topic.partitions().add(data);
        response.topics().add(topic);
        if (!quorum.isLeader()) {
            data.setErrorCode(ErrorCode.NOT_LEADER_OR_FOLLOWER.code());
            return response;
        }
        if (partition.currentLeaderEpoch() != quorum.epoch()) {
            ErrorCode error = partition.currentLeaderEpoch() < quorum.epoch() ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.UNKNOWN_LEADER_EPOCH;
            data.setErrorCode(error.code());
            return response;
        }
        OffsetAndEpoch snapshotId = new OffsetAndEpoch(Math.max(0, partition.snapshotId().endOffset()), Math.max(0, partition.snapshotId().epoch()));
        Optional<SnapshotReader> snapshot = log.readSnapshot(snapshotId);
        if (snapshot.isEmpty()) {
            data.setErrorCode(ErrorCode.SNAPSHOT_NOT_FOUND.code());
            return response;
        }
        long size = snapshot.get().sizeInBytes();
        if (partition.position() < 0 || partition.position() >= size) {
            data.setErrorCode(ErrorCode.POSITION_OUT_OF_RANGE.code());
            return response;
        }
        quorum.leaderStateOrThrow().updateContact(request.replicaId(), nowMs);
        int maxBytes = Math.min(Math.max(1, request.maxBytes()), config.fetchSnapshotMaxBytes());
        ByteBuffer chunk = snapshot.get().read(partition.position(), maxBytes);
        data.setErrorCode(ErrorCode.NONE.code()).setSize(size).setPosition(partition.position())
            .setUnalignedRecords(MemoryRecords.readableRecords(chunk));
        return response;
    }

    // ------------------------------------------------------------------ responses

    private void handleResponse(RaftMessage response, long nowMs) {
        Pending request = pending.remove(response.correlationId());
        if (request == null || request.destination() != response.source()) {
            return; // expired, or not ours: its answer no longer matters
        }
        switch (response.api()) {
            case VOTE -> handleVoteResponse(response.source(), request, (VoteResponseData) response.data(), nowMs);
            case BEGIN_QUORUM_EPOCH -> handleBeginQuorumEpochResponse(response.source(), request,
                (BeginQuorumEpochResponseData) response.data(), nowMs);
            case END_QUORUM_EPOCH -> handleEndQuorumEpochResponse(response.source(), request, (EndQuorumEpochResponseData) response.data(), nowMs);
            case FETCH -> handleFetchResponse(request, (FetchResponseData) response.data(), nowMs);
            case FETCH_SNAPSHOT -> handleFetchSnapshotResponse(request, (FetchSnapshotResponseData) response.data(), nowMs);
            case API_VERSIONS -> handleApiVersionsResponse(request, (ApiVersionsResponseData) response.data(), nowMs);
            case UPDATE_RAFT_VOTER -> handleUpdateVoterResponse(request, (UpdateRaftVoterResponseData) response.data(), nowMs);
            default -> throw new IllegalArgumentException("node " + localId + " got a response to a request it never sends: " + response);
        }
    }

    /**
     * Moves to what a peer's answer reveals: a higher epoch (with its leader if named), or the
     * leader of the current epoch if this replica does not know it yet. Returns whether the
     * role changed, in which case the answer itself is stale.
     */
    private boolean maybeAdvance(int epoch, int leaderId, long nowMs) {
        if (epoch > quorum.epoch()) {
            if (quorum.canFollow(leaderId)) {
                quorum.transitionToFollower(epoch, leaderId, nowMs);
            } else {
                quorum.transitionToUnattached(epoch, nowMs);
            }
            return true;
        }
        return epoch == quorum.epoch() && maybeFollow(epoch, leaderId, nowMs);
    }

    /** Follows {@code leaderId} in {@code epoch} unless this replica already follows or leads it. */
    private boolean maybeFollow(int epoch, int leaderId, long nowMs) {
        if (!quorum.canFollow(leaderId)) {
            return false;
        }
        EpochState state = quorum.state();
        boolean leaderUnknown = state.leaderId() == ElectionState.NONE
            && (state instanceof UnattachedState || state instanceof ProspectiveState || state instanceof CandidateState);
        if (epoch > state.epoch() || (epoch == state.epoch() && leaderUnknown)) {
            quorum.transitionToFollower(epoch, leaderId, nowMs);
            nextFetchMs = nowMs;
            return true;
        }
        return false;
    }

    private void handleVoteResponse(int source, Pending request, VoteResponseData response, long nowMs) {
        if (response.errorCode() != ErrorCode.NONE.code() || response.topics().isEmpty()) {
            return; // retried by the next poll
        }
        VoteResponseData.PartitionData partition = response.topics().get(0).partitions().get(0);
        if (partition.errorCode() != ErrorCode.NONE.code() || maybeAdvance(partition.leaderEpoch(), partition.leaderId(), nowMs)) {
            return;
        }
        EpochState state = quorum.state();
        if (request.preVote() && state instanceof ProspectiveState prospective && request.epoch() == prospective.epoch() + 1) {
            prospective.tally.record(source, partition.voteGranted());
            if (prospective.tally.isWon()) {
                becomeCandidate(nowMs);
            } else if (prospective.tally.isLost()) {
                quorum.transitionAfterLostPreVote(nowMs);
                nextFetchMs = nowMs;
            }
        } else if (!request.preVote() && state instanceof CandidateState candidate && request.epoch() == candidate.epoch()) {
            candidate.tally.record(source, partition.voteGranted());
            if (candidate.tally.isWon()) {
                becomeLeader(nowMs);
            } else if (!partition.voteGranted() && candidate.tally.isLostIfOneMoreFails()) {
                // Most likely a split vote: two voters that timed out together both won the pre-vote
                // and voted for themselves, and with the third voter down neither can ever win. Pre-vote
                // again after a short random backoff instead of the rest of the 1-2 s election timeout
                // (Kafka 4.4 waits it out); a retry that cannot win stops at the pre-vote, without raising
                // the epoch. Only once the refusals leave no room for a silent voter: with five voters a
                // single refusal does not end an election the others may still win.
                long backoffMs = 1 + random.nextInt(Math.max(1, config.electionBackoffMaxMs() / LOST_ELECTION_BACKOFF_DIVISOR));
                candidate.electionTimer.reset(Math.min(candidate.electionTimer.deadlineMs(), nowMs + backoffMs));
            }
        }
    }

    private void handleBeginQuorumEpochResponse(int source, Pending request, BeginQuorumEpochResponseData response, long nowMs) {
        if (response.errorCode() != ErrorCode.NONE.code() || response.topics().isEmpty()) {
            return;
        }
        BeginQuorumEpochResponseData.PartitionData partition = response.topics().get(0).partitions().get(0);
        if (maybeAdvance(partition.leaderEpoch(), partition.leaderId(), nowMs)) {
            return;
        }
        if (partition.errorCode() == ErrorCode.NONE.code() && quorum.state() instanceof LeaderState leader && leader.epoch() == request.epoch()) {
            leader.acknowledgeBeginEpoch(source);
        }
    }

    private void handleEndQuorumEpochResponse(int source, Pending request, EndQuorumEpochResponseData response, long nowMs) {
        if (response.errorCode() != ErrorCode.NONE.code() || response.topics().isEmpty()) {
            return;
        }
        EndQuorumEpochResponseData.PartitionData partition = response.topics().get(0).partitions().get(0);
        if (quorum.state() instanceof ResignedState resigned && resigned.epoch() == request.epoch()) {
            resigned.endEpochUnacked().remove(source);
        }
        maybeAdvance(partition.leaderEpoch(), partition.leaderId(), nowMs);
    }

    private void handleFetchResponse(Pending request, FetchResponseData response, long nowMs) {
        for (FetchResponseData.NodeEndpoint endpoint : response.nodeEndpoints()) {
            if (endpoint.nodeId() >= 0 && endpoint.nodeId() != localId) {
                learnedEndpoints.put(endpoint.nodeId(), new VoterSet.Endpoint(setup.listenerName(), endpoint.host(), endpoint.port()));
            }
        }
        if (!(quorum.state() instanceof FollowerState follower) || follower.epoch() != request.epoch()
            || follower.leaderId() != request.destination()) {
            learnLeaderFromFetch(request, response, nowMs);
            return;
        }
        if (response.errorCode() != ErrorCode.NONE.code() || response.responses().isEmpty()
            || response.responses().get(0).partitions().isEmpty()) {
            nextFetchMs = nowMs + config.retryBackoffMs();
            return;
        }
        FetchResponseData.PartitionData data = response.responses().get(0).partitions().get(0);
        ErrorCode error = ErrorCode.forCode(data.errorCode());
        if (error != ErrorCode.NONE) {
            FetchResponseData.LeaderIdAndEpoch leader = data.currentLeader();
            if (!maybeAdvance(leader.leaderEpoch(), leader.leaderId(), nowMs)) {
                nextFetchMs = nowMs + config.retryBackoffMs();
            }
            return;
        }
        follower.fetchTimer.reset(nowMs + config.fetchTimeoutMs());
        follower.onSuccessfulFetch();
        FetchResponseData.EpochEndOffset diverging = data.divergingEpoch();
        if (diverging.epoch() >= 0 && diverging.endOffset() >= 0) {
            truncateToDivergence(follower, diverging);
            nextFetchMs = nowMs;
            return;
        }
        FetchResponseData.SnapshotId snapshotId = data.snapshotId();
        if (snapshotId.epoch() >= 0 && snapshotId.endOffset() >= 0) {
            startSnapshotFetch(follower, new OffsetAndEpoch(snapshotId.endOffset(), snapshotId.epoch()));
            nextFetchMs = nowMs;
            return;
        }
        Records records = data.records();
        boolean appended = records != null && records.sizeInBytes() > 0;
        if (appended) {
            log.appendAsFollower(records);
            history.scan(records);
            log.flush(); // the next fetch offset acknowledges these entries: they must be durable first
        }
        long highWatermark = Math.min(data.highWatermark(), log.endOffset().offset());
        if (highWatermark > follower.highWatermark()) {
            follower.updateHighWatermark(highWatermark);
            publishHighWatermark(follower.highWatermark());
        }
        nextFetchMs = nowMs; // an empty answer was held by the leader already: ask again at once
    }

    private void startSnapshotFetch(FollowerState follower, OffsetAndEpoch snapshotId) {
        if (snapshotFetch != null) {
            snapshotFetch.writer().close();
            snapshotFetch = null;
        }
        if (log.readSnapshot(snapshotId).isPresent()) {
            installSnapshot(follower, snapshotId); // frozen before a crash, not installed yet
            return;
        }
        LOG.info("Node {}: leader {} of epoch {} has no log below {}; fetching its snapshot {}", localId, follower.leaderId(), follower.epoch(),
            snapshotId.offset(), snapshotId);
        snapshotFetch = new SnapshotFetch(follower, log.createSnapshot(snapshotId));
    }

    private void handleFetchSnapshotResponse(Pending request, FetchSnapshotResponseData response, long nowMs) {
        if (!(quorum.state() instanceof FollowerState follower) || follower.epoch() != request.epoch()
            || follower.leaderId() != request.destination() || snapshotFetch == null || snapshotFetch.owner() != follower) {
            return;
        }
        if (response.errorCode() != ErrorCode.NONE.code() || response.topics().isEmpty() || response.topics().get(0).partitions().isEmpty()) {
            nextFetchMs = nowMs + config.retryBackoffMs();
            return;
        }
        FetchSnapshotResponseData.PartitionSnapshot data = response.topics().get(0).partitions().get(0);
        ErrorCode error = ErrorCode.forCode(data.errorCode());
        if (error == ErrorCode.SNAPSHOT_NOT_FOUND || error == ErrorCode.POSITION_OUT_OF_RANGE) {
            // The leader moved on to a newer snapshot: abandon this copy; the next Fetch names the new one.
            snapshotFetch.writer().close();
            snapshotFetch = null;
            nextFetchMs = nowMs + config.retryBackoffMs();
            return;
        }
        if (error != ErrorCode.NONE) {
            if (!maybeAdvance(data.currentLeader().leaderEpoch(), data.currentLeader().leaderId(), nowMs)) {
                nextFetchMs = nowMs + config.retryBackoffMs();
            }
            return;
        }
        SnapshotWriter writer = snapshotFetch.writer();
        OffsetAndEpoch answered = new OffsetAndEpoch(Math.max(0, data.snapshotId().endOffset()), Math.max(0, data.snapshotId().epoch()));
        if (!answered.equals(writer.snapshotId()) || data.position() != writer.sizeInBytes()) {
            nextFetchMs = nowMs; // an answer to an earlier request: ask again from where we are
            return;
        }
        follower.fetchTimer.reset(nowMs + config.fetchTimeoutMs());
        follower.onSuccessfulFetch();
        Records chunk = data.unalignedRecords();
        ByteBuffer bytes = ByteBuffer.allocate(chunk == null ? 0 : chunk.sizeInBytes());
        if (chunk != null) {
            chunk.writeTo(new ByteBufferWriter(bytes));
        }
        if (writer.sizeInBytes() + bytes.capacity() > data.size() || bytes.capacity() == 0) {
            // Bad input from the network, not a bug here: drop the copy and start over with the next Fetch.
            LOG.warn("Node {}: snapshot {} chunk of {} bytes at {} does not fit its size {}; abandoning the copy", localId, answered,
                bytes.capacity(), data.position(), data.size());
            writer.close();
            snapshotFetch = null;
            nextFetchMs = nowMs + config.retryBackoffMs();
            return;
        }
        writer.append(bytes.flip());
        nextFetchMs = nowMs;
        if (writer.sizeInBytes() == data.size()) {
            writer.freeze();
            snapshotFetch = null;
            installSnapshot(follower, answered);
        }
    }

    /** Starts the log at a frozen snapshot of the leader's: every entry below its end is committed. */
    private void installSnapshot(FollowerState follower, OffsetAndEpoch snapshotId) {
        if (quorum.highWatermark() > snapshotId.offset()) {
            throw new IllegalStateException("node " + localId + ": leader " + follower.leaderId() + " of epoch " + follower.epoch()
                + " sent snapshot " + snapshotId + " below the high watermark " + quorum.highWatermark() + ": committed entries would be lost");
        }
        log.truncateFullyAndStartAt(snapshotId);
        history.loadSnapshot(log.readSnapshot(snapshotId).orElseThrow(() -> new IllegalStateException("node " + localId + ": snapshot "
            + snapshotId + " vanished while loading it")));
        LOG.info("Node {}: loaded snapshot {} from leader {}; the log starts at {}", localId, snapshotId, follower.leaderId(), snapshotId.offset());
        listener.onSnapshotLoaded(snapshotId);
    }

    /**
     * An answer to a Fetch sent to a replica that is not (or no longer) our leader, as an
     * observer sends them to find the leader: follow whoever it names.
     */
    private void learnLeaderFromFetch(Pending request, FetchResponseData response, long nowMs) {
        if (request.epoch() != quorum.epoch() || response.responses().isEmpty() || response.responses().get(0).partitions().isEmpty()) {
            return;
        }
        FetchResponseData.LeaderIdAndEpoch leader = response.responses().get(0).partitions().get(0).currentLeader();
        if (!maybeAdvance(leader.leaderEpoch(), leader.leaderId(), nowMs)) {
            nextFetchMs = nowMs + config.retryBackoffMs();
        }
    }

    /**
     * An observer (or a replica that lost its leader and cannot campaign) asks someone who may
     * know the leader: a bootstrap server if configured (Kafka's rule), else another voter.
     */
    private void sendDiscoveryFetch(int epoch, int currentLeader, long nowMs) {
        // Bootstrap servers may all have left the voters since: the voters of the log (with an address) are asked too,
        // and the leader it follows (a successful fetch from it ends the search).
        List<Integer> targets = new ArrayList<>();
        if (currentLeader >= 0) {
            targets.add(currentLeader);
        }
        for (int index = 0; index < setup.bootstrapServers().size(); index++) {
            if (!isLocalAddress(setup.bootstrapServers().get(index))) {
                targets.add(QuorumSetup.bootstrapId(index));
            }
        }
        for (int voter : new TreeSet<>(quorum.voters())) {
            if (voter != localId && voter != currentLeader && (history.isStatic() || endpointOf(voter).isPresent())) {
                targets.add(voter);
            }
        }
        nextFetchMs = nowMs + config.retryBackoffMs();
        if (!targets.isEmpty()) {
            sendFetch(targets.get(random.nextInt(targets.size())), epoch, nowMs);
        }
    }

    private void truncateToDivergence(FollowerState follower, FetchResponseData.EpochEndOffset diverging) {
        OffsetAndEpoch local = log.endOffsetForEpoch(diverging.epoch());
        long truncateTo = Math.min(local.offset(), diverging.endOffset());
        if (truncateTo < quorum.highWatermark()) {
            throw new IllegalStateException("node " + localId + ": leader " + follower.leaderId() + " of epoch " + follower.epoch()
                + " asks to truncate to " + truncateTo + ", below the high watermark " + quorum.highWatermark() + ": committed data would be lost");
        }
        LOG.info("Node {}: log diverges from leader {} at epoch {} end offset {}; truncating to {}", localId, follower.leaderId(),
            diverging.epoch(), diverging.endOffset(), truncateTo);
        log.truncateTo(truncateTo);
        history.truncateTo(truncateTo);
    }

    // ------------------------------------------------------------------ sending

    private void sendVoteRequests(VoteTally tally, int requestEpoch, boolean preVote, long nowMs) {
        OffsetAndEpoch end = log.endOffset();
        for (int voter : tally.unanswered()) {
            if (hasPendingTo(voter, ApiMessageType.VOTE)) {
                continue;
            }
            VoteRequestData.PartitionData partition = new VoteRequestData.PartitionData()
                .setPartitionIndex(PARTITION)
                .setReplicaEpoch(requestEpoch)
                .setReplicaId(localId)
                .setLastOffsetEpoch(end.epoch())
                .setLastOffset(end.offset())
                .setPreVote(preVote);
            if (quorum.isDynamic()) {
                partition.setReplicaDirectoryId(setup.localKey().directoryId())
                    .setVoterDirectoryId(quorum.voterSet().voter(voter).map(v -> v.key().directoryId()).orElse(Uuids.ZERO));
            }
            VoteRequestData.TopicData topic = new VoteRequestData.TopicData().setTopicName(TOPIC);
            topic.partitions().add(partition);
            VoteRequestData request = new VoteRequestData().setClusterId(clusterId).setVoterId(voter);
            request.topics().add(topic);
            send(voter, request, new Pending(voter, ApiMessageType.VOTE, requestEpoch, preVote, nowMs));
        }
    }

    private BeginQuorumEpochRequestData beginQuorumEpochRequest(int epoch, int voter) {
        BeginQuorumEpochRequestData.PartitionData partition = new BeginQuorumEpochRequestData.PartitionData()
            .setPartitionIndex(PARTITION)
            .setLeaderId(localId)
            .setLeaderEpoch(epoch);
        BeginQuorumEpochRequestData.TopicData topic = new BeginQuorumEpochRequestData.TopicData().setTopicName(TOPIC);
        topic.partitions().add(partition);
        BeginQuorumEpochRequestData request = new BeginQuorumEpochRequestData().setClusterId(clusterId);
        request.topics().add(topic);
        if (quorum.isDynamic()) {
            request.setVoterId(voter);
            partition.setVoterDirectoryId(quorum.voterSet().voter(voter).map(v -> v.key().directoryId()).orElse(Uuids.ZERO));
            for (VoterSet.Endpoint endpoint : setup.localEndpoints()) {
                request.leaderEndpoints().add(new BeginQuorumEpochRequestData.LeaderEndpoint().setName(endpoint.listener())
                    .setHost(endpoint.host()).setPort(endpoint.port()));
            }
        }
        return request;
    }

    private void sendEndQuorumEpoch(ResignedState resigned, long nowMs) {
        if (resigned.endEpochUnacked().isEmpty() || !resigned.endEpochRetryTimer.isExpired(nowMs)) {
            return;
        }
        for (int voter : resigned.endEpochUnacked()) {
            EndQuorumEpochRequestData.PartitionData partition = new EndQuorumEpochRequestData.PartitionData()
                .setPartitionIndex(PARTITION)
                .setLeaderId(localId)
                .setLeaderEpoch(resigned.epoch());
            for (int successor : resigned.preferredSuccessors()) {
                partition.preferredCandidates().add(new EndQuorumEpochRequestData.ReplicaInfo().setCandidateId(successor)
                    .setCandidateDirectoryId(quorum.voterSet().voter(successor).map(v -> v.key().directoryId()).orElse(Uuids.ZERO)));
            }
            EndQuorumEpochRequestData.TopicData topic = new EndQuorumEpochRequestData.TopicData().setTopicName(TOPIC);
            topic.partitions().add(partition);
            EndQuorumEpochRequestData request = new EndQuorumEpochRequestData().setClusterId(clusterId);
            request.topics().add(topic);
            if (quorum.isDynamic()) {
                for (VoterSet.Endpoint endpoint : setup.localEndpoints()) {
                    request.leaderEndpoints().add(new EndQuorumEpochRequestData.LeaderEndpoint().setName(endpoint.listener())
                        .setHost(endpoint.host()).setPort(endpoint.port()));
                }
            }
            send(voter, request, new Pending(voter, ApiMessageType.END_QUORUM_EPOCH, resigned.epoch(), false, nowMs));
        }
        resigned.endEpochRetryTimer.reset(nowMs + config.requestTimeoutMs());
    }

    private void sendFetch(int destination, int epoch, long nowMs) {
        OffsetAndEpoch end = log.endOffset();
        FetchRequestData.FetchPartition partition = new FetchRequestData.FetchPartition()
            .setPartition(PARTITION)
            .setCurrentLeaderEpoch(epoch)
            .setFetchOffset(end.offset())
            .setLastFetchedEpoch(end.epoch())
            .setLogStartOffset(log.logStartOffset())
            .setPartitionMaxBytes(config.fetchMaxBytes())
            .setReplicaDirectoryId(setup.localKey().directoryId());
        FetchRequestData.FetchTopic topic = new FetchRequestData.FetchTopic().setTopic(TOPIC).setTopicId(TOPIC_ID);
        topic.partitions().add(partition);
        FetchRequestData request = new FetchRequestData()
            .setClusterId(clusterId)
            .setReplicaState(new FetchRequestData.ReplicaState().setReplicaId(localId).setReplicaEpoch(-1))
            .setMaxWaitMs(FETCH_MAX_WAIT_MS)
            .setMinBytes(0)
            .setMaxBytes(config.fetchMaxBytes());
        request.topics().add(topic);
        send(destination, request, new Pending(destination, ApiMessageType.FETCH, epoch, false, nowMs));
    }

    private void sendFetchSnapshot(FollowerState follower, SnapshotWriter writer, long nowMs) {
        FetchSnapshotRequestData.PartitionSnapshot partition = new FetchSnapshotRequestData.PartitionSnapshot()
            .setPartition(PARTITION)
            .setCurrentLeaderEpoch(follower.epoch())
            .setPosition(writer.sizeInBytes())
            .setReplicaDirectoryId(setup.localKey().directoryId());
        partition.snapshotId().setEndOffset(writer.snapshotId().offset()).setEpoch(writer.snapshotId().epoch());
        FetchSnapshotRequestData.TopicSnapshot topic = new FetchSnapshotRequestData.TopicSnapshot().setName(TOPIC);
        topic.partitions().add(partition);
        FetchSnapshotRequestData request = new FetchSnapshotRequestData()
            .setClusterId(clusterId)
            .setReplicaId(localId)
            .setMaxBytes(config.fetchSnapshotMaxBytes());
        request.topics().add(topic);
        send(follower.leaderId(), request, new Pending(follower.leaderId(), ApiMessageType.FETCH_SNAPSHOT, follower.epoch(), false, nowMs));
    }

    private void send(int destination, ApiMessage request, Pending expectation) {
        long correlationId = nextCorrelationId++;
        pending.put(correlationId, expectation);
        transport.send(new RaftMessage(localId, destination, correlationId, request, true));
    }

    private boolean hasPending(ApiMessageType api) {
        for (Pending request : pending.values()) {
            if (request.api() == api) {
                return true;
            }
        }
        return false;
    }

    private boolean hasPendingTo(int destination, ApiMessageType api) {
        for (Pending request : pending.values()) {
            if (request.api() == api && request.destination() == destination) {
                return true;
            }
        }
        return false;
    }

    /** Forgets requests unanswered for the request timeout; their senders resend on their timers. */
    private void expirePending(long nowMs) {
        Iterator<Pending> requests = pending.values().iterator();
        while (requests.hasNext()) {
            if (nowMs - requests.next().sentMs() >= config.requestTimeoutMs()) {
                requests.remove();
            }
        }
    }

    private void publishHighWatermark(long highWatermark) {
        if (highWatermark > quorum.highWatermark()) {
            quorum.updateHighWatermark(highWatermark);
            wakeParkedFetches = true;
            listener.onHighWatermark(highWatermark);
        }
    }

    private void notifyLeaderChange() {
        if (quorum.epoch() != lastNotifiedEpoch || quorum.leaderId() != lastNotifiedLeader) {
            lastNotifiedEpoch = quorum.epoch();
            lastNotifiedLeader = quorum.leaderId();
            listener.onLeaderChange(lastNotifiedEpoch, lastNotifiedLeader);
        }
    }

    /** The requests in flight, for debugging tests. */
    String pendingSummary() {
        return pending.toString() + " nextFetchMs=" + nextFetchMs + " snapshotFetch=" + (snapshotFetch != null);
    }

    List<Long> pendingCorrelationIds() {
        return new ArrayList<>(pending.keySet());
    }
}
