package io.strata.server.replica.fetcher;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.message.ListOffsetsRequestData;
import io.strata.protocol.message.ListOffsetsResponseData;
import io.strata.protocol.message.OffsetForLeaderEpochRequestData;
import io.strata.protocol.message.OffsetForLeaderEpochResponseData;
import io.strata.protocol.records.CorruptRecordException;
import io.strata.protocol.records.MemoryRecords;
import io.strata.server.replica.ReplicaQuota;
import io.strata.storage.ErrorCodeException;
import io.strata.storage.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Replicates the partitions one leader leads into their local follower logs: Kafka's
 * {@code AbstractFetcherThread} + {@code ReplicaFetcherThread} as a poll-driven state machine
 * (one per leader and fetcher id; {@link ReplicaFetcherThread} is its thin runner).
 *
 * <p>Each {@link #poll} first settles the request in flight, if it has completed, then sends at
 * most one new request, in this order of need:
 * <ol>
 *   <li>TRUNCATING partitions without a local epoch truncate to their high watermark, locally
 *       (KIP-101 without epochs); those with one ask OffsetForLeaderEpoch (KIP-101/279, only when
 *       the leader does not answer DivergingEpoch).</li>
 *   <li>RESET_TO_END / RESET_TO_START partitions ask ListOffsets latest / earliest (Kafka's
 *       {@code handleOutOfRangeError}: leader end below ours → truncate to it; our end below the
 *       leader's start → {@code truncateFullyAndStartAt(leader start)}).</li>
 *   <li>FETCHING partitions that are not delayed go into one Fetch v18: ReplicaState {this broker,
 *       its broker epoch}, per partition CurrentLeaderEpoch, FetchOffset (= log end),
 *       LastFetchedEpoch, LogStartOffset, PartitionMaxBytes, HighWatermark (KIP-1166), in an
 *       incremental fetch session ({@link FollowerFetchSession}, KIP-227): after the first full
 *       Fetch only changed partitions are sent and only partitions with news come back.</li>
 * </ol>
 * Per partition of a Fetch answer: DivergingEpoch → truncate ({@link TruncationPoint}) and use
 * nothing else of the answer, so the high watermark never moves over data about to be truncated
 * (KAFKA-14704); records → {@link FetchedRecords} (complete batches) → {@code appendAsFollower} (which checks them) → then
 * {@code updateHighWatermark(leader HW)} and {@code maybeIncrementLogStartOffset(leader log start)};
 * OFFSET_OUT_OF_RANGE → RESET_TO_END; FENCED_LEADER_EPOCH for the epoch still followed → the
 * partition fails until it is added again with a newer epoch (Kafka's {@code onPartitionFenced});
 * UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID,
 * INCONSISTENT_TOPIC_ID, corrupt batches and any other error → the partition is delayed
 * {@code replica.fetch.backoff.ms}; a local storage error or unexpected exception → the partition
 * fails ({@link FailedPartitions}), the others go on. An answer for a partition whose fetch offset
 * or leader epoch changed since the request (it was truncated, removed or re-added) is ignored.
 * A request without an answer (connection lost, timed out) backs the whole fetcher off
 * {@code replica.fetch.backoff.ms}.
 *
 * <p>Fairness: a partition that got bytes, or an error, moves to the end of the request order, so a
 * response size limit does not starve the partitions listed last (as Kafka's PartitionStates).
 *
 * <p>Thread-safety: every method is synchronized on this fetcher; {@link #poll} never blocks (it
 * only inspects futures), and futures wake the runner through {@link #setWakeup}. Partition
 * changes come from the metadata thread through {@link #addPartitions} / {@link #removePartitions}.
 */
public final class ReplicaFetcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaFetcher.class);

    /**
     * How long past {@code replica.socket.timeout.ms} an unanswered request is abandoned. The
     * client times requests out itself; this only guards against a future nobody completes.
     */
    static final long IN_FLIGHT_DEADLINE_SLACK_MS = 5_000;
    /** ListOffsets timestamps (Kafka's ListOffsetsRequest.LATEST_TIMESTAMP / EARLIEST_TIMESTAMP). */
    static final long LATEST_TIMESTAMP = -1L;
    static final long EARLIEST_TIMESTAMP = -2L;
    private static final int NO_EPOCH = -1;

    private final String name;
    private final String logPrefix;
    private final int fetcherId;
    private final int brokerId;
    private final LongSupplier brokerEpoch;
    private final LeaderEndpoint leader;
    private final ReplicaFetcherConfig config;
    private final FailedPartitions failedPartitions;
    private final FollowerFetchSession session;
    /** The follower side's replication throttle ({@code follower.replication.throttled.*}). */
    private final ReplicaQuota quota;
    /** In request order; a partition moves to the end when it changes. */
    private final LinkedHashMap<TopicPartition, Replica> partitions = new LinkedHashMap<>();
    private InFlight inFlight;
    private long backoffUntilMs = Long.MIN_VALUE;
    /** When the last request left throttled partitions out and sent nothing: when to look at the quota again. */
    private long throttledRetryMs = Long.MAX_VALUE;
    private long requests;
    private long failedRequests;
    private long bytesAppended;
    private volatile Runnable wakeup = () -> { };
    private boolean closed;

    /** A partition of this fetcher: its log and its state. */
    private record Replica(FollowerLog log, PartitionFetchState state) {
    }

    /** What a request asked for one partition, to match the answer with the partition's current state. */
    private record Sent(TopicPartition topicPartition, long fetchOffset, int leaderEpoch) {
    }

    private record IdPartition(UUID topicId, int partition) {
    }

    private sealed interface InFlight permits FetchInFlight, EpochInFlight, OffsetsInFlight {
        CompletableFuture<?> future();

        long deadlineMs();
    }

    private record FetchInFlight(CompletableFuture<FetchResponseData> future, long deadlineMs, Map<IdPartition, Sent> sent)
        implements InFlight {
    }

    private record EpochInFlight(CompletableFuture<OffsetForLeaderEpochResponseData> future, long deadlineMs, Map<TopicPartition, Sent> sent)
        implements InFlight {
    }

    private record OffsetsInFlight(CompletableFuture<ListOffsetsResponseData> future, long deadlineMs, long timestamp,
                                   Map<TopicPartition, Sent> sent) implements InFlight {
    }

    /**
     * @param brokerEpoch this broker's epoch from its registration (ReplicaState.ReplicaEpoch, KIP-903), -1 if unknown
     */
    public ReplicaFetcher(int fetcherId, int brokerId, LongSupplier brokerEpoch, LeaderEndpoint leader, ReplicaFetcherConfig config,
                          FailedPartitions failedPartitions) {
        this(fetcherId, brokerId, brokerEpoch, leader, config, failedPartitions, ReplicaQuota.UNBOUNDED);
    }

    /**
     * A fetcher under a follower-side replication throttle: a partition of {@code quota} that is not
     * caught up with the leader's high watermark (lag above 0 or unknown) is left out of the Fetch
     * while the quota is exceeded (Kafka's {@code shouldFollowerThrottle}); bytes appended for a
     * throttled partition are recorded in the quota. When every ready partition is held back the
     * fetcher polls again after {@code replica.fetch.backoff.ms}, as Kafka's fetcher waits when its
     * request is empty.
     *
     * @param brokerEpoch this broker's epoch from its registration (ReplicaState.ReplicaEpoch, KIP-903), -1 if unknown
     */
    public ReplicaFetcher(int fetcherId, int brokerId, LongSupplier brokerEpoch, LeaderEndpoint leader, ReplicaFetcherConfig config,
                          FailedPartitions failedPartitions, ReplicaQuota quota) {
        this.quota = Objects.requireNonNull(quota, "quota");
        this.fetcherId = fetcherId;
        this.brokerId = brokerId;
        this.brokerEpoch = Objects.requireNonNull(brokerEpoch, "brokerEpoch");
        this.leader = Objects.requireNonNull(leader, "leader");
        this.config = Objects.requireNonNull(config, "config");
        this.failedPartitions = Objects.requireNonNull(failedPartitions, "failedPartitions");
        this.name = threadName(fetcherId, leader.leaderId());
        this.logPrefix = "[ReplicaFetcher replicaId=" + brokerId + ", leaderId=" + leader.leaderId() + ", fetcherId=" + fetcherId + "] ";
        this.session = new FollowerFetchSession(logPrefix);
    }

    /** Kafka's fetcher thread name, also the {@code clientId} label of its metrics. */
    public static String threadName(int fetcherId, int leaderId) {
        return "ReplicaFetcherThread-" + fetcherId + "-" + leaderId;
    }

    public String name() {
        return name;
    }

    public int fetcherId() {
        return fetcherId;
    }

    public int leaderId() {
        return leader.leaderId();
    }

    /** Called (on any thread) when a request completes or partitions are added: the runner should poll. */
    /** The leader endpoint this fetcher replicates from. */
    LeaderEndpoint leader() {
        return leader;
    }

    public void setWakeup(Runnable wakeup) {
        this.wakeup = Objects.requireNonNull(wakeup, "wakeup");
    }

    // ---------------------------------------------------------------- partitions

    /**
     * Starts (or restarts) fetching the given partitions from their log end offsets. A partition
     * already here in the same leader epoch keeps its state (Kafka's rule); any other replaces it.
     * The partitions leave {@link FailedPartitions}.
     *
     * @throws IllegalArgumentException if a state names another leader
     */
    public synchronized void addPartitions(Map<TopicPartition, InitialFetchState> states) {
        if (closed) {
            throw new IllegalStateException(logPrefix + "closed; cannot add " + states.keySet());
        }
        for (Map.Entry<TopicPartition, InitialFetchState> entry : states.entrySet()) {
            TopicPartition topicPartition = entry.getKey();
            InitialFetchState initial = entry.getValue();
            if (initial.leaderId() != leader.leaderId()) {
                throw new IllegalArgumentException(logPrefix + "partition " + topicPartition + " follows leader " + initial.leaderId());
            }
            failedPartitions.remove(topicPartition);
            Replica current = partitions.get(topicPartition);
            if (current != null && current.log() == initial.log() && current.state().currentLeaderEpoch() == initial.leaderEpoch()) {
                continue;
            }
            FollowerLog log = initial.log();
            boolean truncateFirst = log.latestEpoch().isEmpty() || !leader.isTruncationOnFetchSupported();
            put(topicPartition, new Replica(log, PartitionFetchState.initial(initial.topicId(), log.logEndOffset(), initial.leaderEpoch(),
                log.latestEpoch(), truncateFirst)));
            LOG.info("{}Added {} at offset {} in leader epoch {}", logPrefix, topicPartition, log.logEndOffset(), initial.leaderEpoch());
        }
        wakeup.run();
    }

    /** Stops fetching the given partitions; returns the states of those that were here. */
    public synchronized Map<TopicPartition, PartitionFetchState> removePartitions(Set<TopicPartition> topicPartitions) {
        Map<TopicPartition, PartitionFetchState> removed = new LinkedHashMap<>();
        for (TopicPartition topicPartition : topicPartitions) {
            Replica replica = partitions.remove(topicPartition);
            if (replica != null) {
                removed.put(topicPartition, replica.state());
            }
        }
        return removed;
    }

    public synchronized int partitionCount() {
        return partitions.size();
    }

    /** A snapshot of every partition's state, in request order. */
    public synchronized Map<TopicPartition, PartitionFetchState> partitionStates() {
        Map<TopicPartition, PartitionFetchState> states = new LinkedHashMap<>();
        partitions.forEach((topicPartition, replica) -> states.put(topicPartition, replica.state()));
        return states;
    }

    /** The largest known lag of this fetcher's partitions (0 if none is known). */
    public synchronized long maxLag() {
        long max = 0;
        for (Replica replica : partitions.values()) {
            max = Math.max(max, replica.state().lag());
        }
        return max;
    }

    /** Requests sent so far (Kafka's FetcherStats RequestsPerSec counts Fetches; this counts every kind). */
    public synchronized long requests() {
        return requests;
    }

    /** Requests that got no answer so far. */
    public synchronized long failedRequests() {
        return failedRequests;
    }

    /** Bytes of complete batches appended so far. */
    public synchronized long bytesAppended() {
        return bytesAppended;
    }

    // ---------------------------------------------------------------- polling

    /**
     * Settles the request in flight if it completed (or passed its deadline), then sends the next
     * request if there is work. Never blocks.
     *
     * @param nowMs monotonic milliseconds
     * @return the monotonic time by which to poll again even if nothing wakes the runner
     *     ({@link Long#MAX_VALUE}: only a wake-up brings new work)
     */
    public synchronized long poll(long nowMs) {
        if (closed) {
            return Long.MAX_VALUE;
        }
        if (inFlight != null) {
            InFlight settled = inFlight;
            if (!settled.future().isDone()) {
                if (nowMs < settled.deadlineMs()) {
                    return settled.deadlineMs();
                }
                onRequestFailed(settled, new TimeoutException("no answer by the fetcher's deadline"), nowMs);
            } else {
                settle(settled, nowMs);
            }
            inFlight = null;
        }
        if (nowMs < backoffUntilMs) {
            return backoffUntilMs;
        }
        truncateWithoutEpochs(nowMs);
        throttledRetryMs = Long.MAX_VALUE;
        InFlight next = nextRequest(nowMs);
        if (next == null) {
            return Math.min(nextDelayExpiryMs(nowMs), throttledRetryMs);
        }
        inFlight = next;
        requests++;
        next.future().whenComplete((result, error) -> wakeup.run());
        return next.deadlineMs();
    }

    private void settle(InFlight settled, long nowMs) {
        Object result;
        try {
            result = settled.future().join();
        } catch (CompletionException | CancellationException e) {
            onRequestFailed(settled, e.getCause() != null ? e.getCause() : e, nowMs);
            return;
        }
        if (settled instanceof FetchInFlight fetch) {
            onFetchResponse(fetch, (FetchResponseData) result, nowMs);
        } else if (settled instanceof EpochInFlight epochs) {
            onEpochResponse(epochs, (OffsetForLeaderEpochResponseData) result, nowMs);
        } else if (settled instanceof OffsetsInFlight offsets) {
            onOffsetsResponse(offsets, (ListOffsetsResponseData) result, nowMs);
        }
    }

    private void onRequestFailed(InFlight failed, Throwable cause, long nowMs) {
        if (failed instanceof FetchInFlight) {
            session.onRequestFailed();
        }
        backOff(failed.getClass().getSimpleName().replace("InFlight", "") + " to leader " + leader.leaderId() + " failed (" + cause + ")",
            nowMs);
    }

    /** A request failed as a whole (no answer, or a top-level error): count it and back the whole fetcher off. */
    private void backOff(String what, long nowMs) {
        failedRequests++;
        backoffUntilMs = nowMs + config.fetchBackoffMs();
        LOG.warn("{}{}; backing off {} ms", logPrefix, what, config.fetchBackoffMs());
    }

    private InFlight nextRequest(long nowMs) {
        Map<TopicPartition, Replica> truncating = select(replica -> replica.state().state() == PartitionFetchState.State.TRUNCATING
            && !replica.state().isDelayed(nowMs) && replica.log().latestEpoch().isPresent());
        if (!truncating.isEmpty()) {
            return sendEpochRequest(truncating, nowMs);
        }
        Map<TopicPartition, Replica> toEnd = select(replica -> replica.state().state() == PartitionFetchState.State.RESET_TO_END
            && !replica.state().isDelayed(nowMs));
        if (!toEnd.isEmpty()) {
            return sendListOffsets(toEnd, LATEST_TIMESTAMP, nowMs);
        }
        Map<TopicPartition, Replica> toStart = select(replica -> replica.state().state() == PartitionFetchState.State.RESET_TO_START
            && !replica.state().isDelayed(nowMs));
        if (!toStart.isEmpty()) {
            return sendListOffsets(toStart, EARLIEST_TIMESTAMP, nowMs);
        }
        Map<TopicPartition, Replica> ready = select(replica -> replica.state().isReadyForFetch(nowMs));
        int readyCount = ready.size();
        if (readyCount > 0 && quota.isQuotaExceeded()) {
            ready.entrySet().removeIf(entry -> shouldFollowerThrottle(entry.getKey(), entry.getValue()));
            if (ready.isEmpty()) {
                throttledRetryMs = nowMs + config.fetchBackoffMs();
                LOG.debug("{}Every one of {} ready partitions is throttled; fetching again in {} ms", logPrefix, readyCount,
                    config.fetchBackoffMs());
            }
        }
        return ready.isEmpty() ? null : sendFetch(ready, nowMs);
    }

    /** Kafka's {@code shouldFollowerThrottle}, the quota already known exceeded: a throttled replica not caught up. */
    private boolean shouldFollowerThrottle(TopicPartition topicPartition, Replica replica) {
        boolean caughtUp = replica.state().lag() == 0;
        return !caughtUp && quota.isThrottled(topicPartition);
    }

    private Map<TopicPartition, Replica> select(Predicate<Replica> filter) {
        Map<TopicPartition, Replica> selected = new LinkedHashMap<>();
        partitions.forEach((topicPartition, replica) -> {
            if (filter.test(replica)) {
                selected.put(topicPartition, replica);
            }
        });
        return selected;
    }

    private long nextDelayExpiryMs(long nowMs) {
        long next = Long.MAX_VALUE;
        for (Replica replica : partitions.values()) {
            if (replica.state().isDelayed(nowMs)) {
                next = Math.min(next, replica.state().delayedUntilMs());
            }
        }
        return next;
    }

    private long deadline(long nowMs) {
        return nowMs + config.socketTimeoutMs() + IN_FLIGHT_DEADLINE_SLACK_MS;
    }

    // ---------------------------------------------------------------- Fetch

    private InFlight sendFetch(Map<TopicPartition, Replica> ready, long nowMs) {
        LinkedHashMap<FollowerFetchSession.Key, FollowerFetchSession.PartitionRequest> next = new LinkedHashMap<>();
        Map<IdPartition, Sent> sent = new LinkedHashMap<>();
        ready.forEach((topicPartition, replica) -> {
            PartitionFetchState state = replica.state();
            next.put(new FollowerFetchSession.Key(state.topicId(), topicPartition.partition()), new FollowerFetchSession.PartitionRequest(
                topicPartition.topic(), state.fetchOffset(), state.currentLeaderEpoch(), state.lastFetchedEpoch().orElse(NO_EPOCH),
                replica.log().logStartOffset(), config.fetchMaxBytes(), replica.log().highWatermark()));
            sent.put(new IdPartition(state.topicId(), topicPartition.partition()),
                new Sent(topicPartition, state.fetchOffset(), state.currentLeaderEpoch()));
        });
        FollowerFetchSession.Built built = session.build(next);
        FetchRequestData request = new FetchRequestData()
            .setReplicaState(new FetchRequestData.ReplicaState().setReplicaId(brokerId).setReplicaEpoch(brokerEpoch.getAsLong()))
            .setMaxWaitMs(config.fetchWaitMaxMs())
            .setMinBytes(config.fetchMinBytes())
            .setMaxBytes(config.fetchResponseMaxBytes())
            .setIsolationLevel((byte) 0)
            .setSessionId(built.sessionId())
            .setSessionEpoch(built.sessionEpoch())
            .setTopics(built.topics())
            .setForgottenTopicsData(built.forgotten());
        return new FetchInFlight(leader.fetch(request), deadline(nowMs), sent);
    }

    private void onFetchResponse(FetchInFlight fetch, FetchResponseData response, long nowMs) {
        boolean incremental = session.isOpen();
        if (!session.onResponse(response)) {
            ErrorCode error = ErrorCode.forCode(response.errorCode());
            if (incremental && (error == ErrorCode.FETCH_SESSION_ID_NOT_FOUND || error == ErrorCode.INVALID_FETCH_SESSION_EPOCH)) {
                // Kafka's fetcher uses nothing of the answer and sends a full Fetch at once (no back-off).
                LOG.info("{}Leader {} answered {} for fetch session {}; sending a full fetch", logPrefix, leader.leaderId(), error,
                    response.sessionId());
            } else {
                backOff("Fetch to leader " + leader.leaderId() + " answered " + error, nowMs);
            }
            return;
        }
        for (FetchResponseData.FetchableTopicResponse topic : response.responses()) {
            for (FetchResponseData.PartitionData data : topic.partitions()) {
                Sent sent = fetch.sent().get(new IdPartition(topic.topicId(), data.partitionIndex()));
                Replica replica = sent == null ? null : partitions.get(sent.topicPartition());
                if (replica == null || replica.state().fetchOffset() != sent.fetchOffset()
                    || replica.state().currentLeaderEpoch() != sent.leaderEpoch() || !replica.state().isReadyForFetch(nowMs)) {
                    continue; // removed, re-added, truncated or not asked for since: the answer is stale
                }
                onPartitionData(sent.topicPartition(), replica, data, nowMs);
            }
        }
    }

    private void onPartitionData(TopicPartition topicPartition, Replica replica, FetchResponseData.PartitionData data, long nowMs) {
        ErrorCode error = ErrorCode.forCode(data.errorCode());
        switch (error) {
            case NONE -> {
                if (leader.isTruncationOnFetchSupported() && data.divergingEpoch().epoch() >= 0) {
                    FetchResponseData.EpochEndOffset diverging = data.divergingEpoch();
                    FollowerLog log = replica.log();
                    truncate(topicPartition, replica, TruncationPoint.of(diverging.epoch(), diverging.endOffset(),
                        log.endOffsetForEpoch(diverging.epoch()), log.logEndOffset(), replica.state().fetchOffset()),
                        "diverging epoch " + diverging.epoch() + " ending at " + diverging.endOffset());
                } else {
                    appendFetched(topicPartition, replica, data, nowMs);
                }
            }
            case OFFSET_OUT_OF_RANGE -> {
                LOG.info("{}Fetch offset {} of {} is out of range on the leader; asking its log end offset", logPrefix,
                    replica.state().fetchOffset(), topicPartition);
                put(topicPartition, new Replica(replica.log(), replica.state().outOfRange()));
            }
            case FENCED_LEADER_EPOCH -> onFenced(topicPartition, replica);
            case UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, INCONSISTENT_TOPIC_ID -> {
                LOG.info("{}Leader answered {} for {} in leader epoch {}; retrying in {} ms", logPrefix, error, topicPartition,
                    replica.state().currentLeaderEpoch(), config.fetchBackoffMs());
                delay(topicPartition, replica, nowMs);
            }
            default -> {
                LOG.error("{}Leader answered {} for {} at offset {}; retrying in {} ms", logPrefix, error, topicPartition,
                    replica.state().fetchOffset(), config.fetchBackoffMs());
                delay(topicPartition, replica, nowMs);
            }
        }
    }

    private void appendFetched(TopicPartition topicPartition, Replica replica, FetchResponseData.PartitionData data, long nowMs) {
        FollowerLog log = replica.log();
        PartitionFetchState state = replica.state();
        try {
            long logEndOffset = log.logEndOffset();
            if (logEndOffset != state.fetchOffset()) {
                throw new IllegalStateException("offset mismatch for " + topicPartition + ": fetchOffset=" + state.fetchOffset()
                    + ", logEndOffset=" + logEndOffset);
            }
            MemoryRecords records = FetchedRecords.checked(data.records(), log);
            long newLogEndOffset = records.sizeInBytes() > 0 ? log.appendAsFollower(records, state.currentLeaderEpoch()) : log.logEndOffset();
            // Only now, after this answer's append (and never over a pending truncation): KAFKA-14704.
            log.updateHighWatermark(data.highWatermark());
            if (data.logStartOffset() >= 0) {
                log.maybeIncrementLogStartOffset(Math.min(data.logStartOffset(), log.highWatermark()));
            }
            bytesAppended += records.sizeInBytes();
            if (records.sizeInBytes() > 0 && quota.isThrottled(topicPartition)) {
                quota.record(records.sizeInBytes());
            }
            long lag = Math.max(0, data.highWatermark() - newLogEndOffset);
            Replica fetched = new Replica(log, state.fetched(newLogEndOffset, log.latestEpoch(), lag));
            if (records.sizeInBytes() > 0) {
                put(topicPartition, fetched);
            } else {
                // Nothing appended: keep its place (Kafka moves a partition to the end only when it got bytes), so a
                // partition whose next batch did not fit this answer comes first, where the leader returns a whole batch (KIP-74).
                partitions.put(topicPartition, fetched);
            }
        } catch (CorruptRecordException e) {
            // Batch lengths that can never be valid (the log checks the rest: CRC, offsets, epochs).
            LOG.error("{}Found invalid batches for {} at offset {}; retrying in {} ms", logPrefix, topicPartition, state.fetchOffset(),
                config.fetchBackoffMs(), e);
            delay(topicPartition, replica, nowMs);
        } catch (ErrorCodeException e) {
            if (e.error() == ErrorCode.CORRUPT_MESSAGE || e.error() == ErrorCode.INVALID_RECORD) {
                LOG.error("{}The log refused the batches of {} at offset {}: {}; retrying in {} ms", logPrefix, topicPartition,
                    state.fetchOffset(), e, config.fetchBackoffMs());
                delay(topicPartition, replica, nowMs);
            } else {
                markFailed(topicPartition, "appending at offset " + state.fetchOffset(), e);
            }
        } catch (IOException | RuntimeException e) {
            markFailed(topicPartition, "appending at offset " + state.fetchOffset(), e);
        }
    }

    // ---------------------------------------------------------------- truncation

    private void truncate(TopicPartition topicPartition, Replica replica, TruncationPoint point, String reason) {
        FollowerLog log = replica.log();
        try {
            if (point.offset() < log.highWatermark()) {
                LOG.warn("{}Truncating {} to {} below its high watermark {} ({}): the leader does not have these offsets", logPrefix,
                    topicPartition, point.offset(), log.highWatermark(), reason);
            } else {
                LOG.info("{}Truncating {} to {} ({})", logPrefix, topicPartition, point.offset(), reason);
            }
            log.truncateTo(point.offset());
            boolean done = point.done() || leader.isTruncationOnFetchSupported();
            put(topicPartition, new Replica(log, replica.state().truncated(log.logEndOffset(), log.latestEpoch(), done)));
        } catch (IOException | RuntimeException e) {
            markFailed(topicPartition, "truncating to " + point.offset(), e);
        }
    }

    /** TRUNCATING partitions without a local epoch have nothing to ask the leader: truncate to the high watermark (KIP-101). */
    private void truncateWithoutEpochs(long nowMs) {
        Map<TopicPartition, Replica> withoutEpochs = select(replica -> replica.state().state() == PartitionFetchState.State.TRUNCATING
            && !replica.state().isDelayed(nowMs) && replica.log().latestEpoch().isEmpty());
        withoutEpochs.forEach((topicPartition, replica) -> truncate(topicPartition, replica,
            new TruncationPoint(replica.log().highWatermark(), true), "no leader epoch in the local log: truncating to the high watermark"));
    }

    private InFlight sendEpochRequest(Map<TopicPartition, Replica> truncating, long nowMs) {
        OffsetForLeaderEpochRequestData request = new OffsetForLeaderEpochRequestData().setReplicaId(brokerId);
        Map<String, OffsetForLeaderEpochRequestData.OffsetForLeaderTopic> topics = new LinkedHashMap<>();
        Map<TopicPartition, Sent> sent = new LinkedHashMap<>();
        truncating.forEach((topicPartition, replica) -> {
            PartitionFetchState state = replica.state();
            topics.computeIfAbsent(topicPartition.topic(), topic -> new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic(topic))
                .partitions().add(new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition()
                    .setPartition(topicPartition.partition())
                    .setCurrentLeaderEpoch(state.currentLeaderEpoch())
                    .setLeaderEpoch(replica.log().latestEpoch().orElseThrow()));
            sent.put(topicPartition, new Sent(topicPartition, state.fetchOffset(), state.currentLeaderEpoch()));
        });
        request.setTopics(new ArrayList<>(topics.values()));
        return new EpochInFlight(leader.fetchEpochEndOffsets(request), deadline(nowMs), sent);
    }

    private void onEpochResponse(EpochInFlight epochs, OffsetForLeaderEpochResponseData response, long nowMs) {
        Set<TopicPartition> answered = new HashSet<>();
        for (OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult topic : response.topics()) {
            for (OffsetForLeaderEpochResponseData.EpochEndOffset answer : topic.partitions()) {
                TopicPartition topicPartition = new TopicPartition(topic.topic(), answer.partition());
                Replica replica = current(epochs.sent().get(topicPartition), PartitionFetchState.State.TRUNCATING);
                if (replica == null) {
                    continue;
                }
                answered.add(topicPartition);
                ErrorCode error = ErrorCode.forCode(answer.errorCode());
                if (error == ErrorCode.NONE) {
                    FollowerLog log = replica.log();
                    truncate(topicPartition, replica, TruncationPoint.of(answer.leaderEpoch(), answer.endOffset(),
                        log.endOffsetForEpoch(answer.leaderEpoch()), log.logEndOffset(), replica.state().fetchOffset()),
                        "leader's end of epoch " + answer.leaderEpoch() + " is " + answer.endOffset());
                } else if (error == ErrorCode.FENCED_LEADER_EPOCH) {
                    onFenced(topicPartition, replica);
                } else {
                    LOG.info("{}OffsetForLeaderEpoch for {} answered {}; retrying in {} ms", logPrefix, topicPartition, error,
                        config.fetchBackoffMs());
                    delay(topicPartition, replica, nowMs);
                }
            }
        }
        delayUnanswered(epochs.sent(), answered, PartitionFetchState.State.TRUNCATING, nowMs);
    }

    // ---------------------------------------------------------------- out of range

    private InFlight sendListOffsets(Map<TopicPartition, Replica> resetting, long timestamp, long nowMs) {
        ListOffsetsRequestData request = new ListOffsetsRequestData().setReplicaId(brokerId).setIsolationLevel((byte) 0)
            .setTimeoutMs(config.socketTimeoutMs());
        Map<String, ListOffsetsRequestData.ListOffsetsTopic> topics = new LinkedHashMap<>();
        Map<TopicPartition, Sent> sent = new LinkedHashMap<>();
        resetting.forEach((topicPartition, replica) -> {
            PartitionFetchState state = replica.state();
            topics.computeIfAbsent(topicPartition.topic(), topic -> new ListOffsetsRequestData.ListOffsetsTopic().setName(topic))
                .partitions().add(new ListOffsetsRequestData.ListOffsetsPartition()
                    .setPartitionIndex(topicPartition.partition())
                    .setCurrentLeaderEpoch(state.currentLeaderEpoch())
                    .setTimestamp(timestamp));
            sent.put(topicPartition, new Sent(topicPartition, state.fetchOffset(), state.currentLeaderEpoch()));
        });
        request.setTopics(new ArrayList<>(topics.values()));
        return new OffsetsInFlight(leader.listOffsets(request), deadline(nowMs), timestamp, sent);
    }

    private void onOffsetsResponse(OffsetsInFlight offsets, ListOffsetsResponseData response, long nowMs) {
        PartitionFetchState.State expected = offsets.timestamp() == LATEST_TIMESTAMP
            ? PartitionFetchState.State.RESET_TO_END : PartitionFetchState.State.RESET_TO_START;
        Set<TopicPartition> answered = new HashSet<>();
        for (ListOffsetsResponseData.ListOffsetsTopicResponse topic : response.topics()) {
            for (ListOffsetsResponseData.ListOffsetsPartitionResponse answer : topic.partitions()) {
                TopicPartition topicPartition = new TopicPartition(topic.name(), answer.partitionIndex());
                Replica replica = current(offsets.sent().get(topicPartition), expected);
                if (replica == null) {
                    continue;
                }
                answered.add(topicPartition);
                ErrorCode error = ErrorCode.forCode(answer.errorCode());
                if (error == ErrorCode.NONE && expected == PartitionFetchState.State.RESET_TO_END) {
                    onLeaderEndOffset(topicPartition, replica, answer.offset());
                } else if (error == ErrorCode.NONE) {
                    onLeaderStartOffset(topicPartition, replica, answer.offset());
                } else if (error == ErrorCode.FENCED_LEADER_EPOCH) {
                    onFenced(topicPartition, replica);
                } else {
                    LOG.info("{}ListOffsets for {} answered {}; retrying in {} ms", logPrefix, topicPartition, error, config.fetchBackoffMs());
                    delay(topicPartition, replica, nowMs);
                }
            }
        }
        delayUnanswered(offsets.sent(), answered, expected, nowMs);
    }

    /** Unclean election: the new leader may end below us. Truncate to its end and fetch on; else ask its start. */
    private void onLeaderEndOffset(TopicPartition topicPartition, Replica replica, long leaderEndOffset) {
        FollowerLog log = replica.log();
        long logEndOffset = log.logEndOffset();
        if (leaderEndOffset >= logEndOffset) {
            put(topicPartition, new Replica(log, replica.state().needLeaderStart(leaderEndOffset - logEndOffset)));
            return;
        }
        try {
            LOG.warn("{}Resetting the fetch offset of {} from {} to the leader's log end offset {}", logPrefix, topicPartition,
                logEndOffset, leaderEndOffset);
            log.truncateTo(leaderEndOffset);
            put(topicPartition, new Replica(log, replica.state().resetTo(log.logEndOffset(), log.latestEpoch(), 0)));
        } catch (IOException | RuntimeException e) {
            markFailed(topicPartition, "truncating to the leader's log end offset " + leaderEndOffset, e);
        }
    }

    /** Our end below the leader's start (we were away while it deleted old segments): start over at its start. */
    private void onLeaderStartOffset(TopicPartition topicPartition, Replica replica, long leaderStartOffset) {
        FollowerLog log = replica.log();
        long logEndOffset = log.logEndOffset();
        try {
            if (leaderStartOffset > logEndOffset) {
                LOG.warn("{}Resetting {} from {} to the leader's log start offset {}", logPrefix, topicPartition, logEndOffset,
                    leaderStartOffset);
                log.truncateFullyAndStartAt(leaderStartOffset);
            }
            long fetchOffset = log.logEndOffset();
            long lag = Math.max(0, replica.state().lag() - (fetchOffset - logEndOffset));
            put(topicPartition, new Replica(log, replica.state().resetTo(fetchOffset, log.latestEpoch(), lag)));
        } catch (IOException | RuntimeException e) {
            markFailed(topicPartition, "starting at the leader's log start offset " + leaderStartOffset, e);
        }
    }

    // ---------------------------------------------------------------- partition outcomes

    /** The partition still in the state a request saw, or null if the answer is stale. */
    private Replica current(Sent sent, PartitionFetchState.State expected) {
        if (sent == null) {
            return null;
        }
        Replica replica = partitions.get(sent.topicPartition());
        if (replica == null || replica.state().state() != expected || replica.state().currentLeaderEpoch() != sent.leaderEpoch()
            || replica.state().fetchOffset() != sent.fetchOffset()) {
            return null;
        }
        return replica;
    }

    private void delayUnanswered(Map<TopicPartition, Sent> sent, Set<TopicPartition> answered, PartitionFetchState.State expected, long nowMs) {
        for (Sent asked : sent.values()) {
            Replica replica = answered.contains(asked.topicPartition()) ? null : current(asked, expected);
            if (replica != null) {
                LOG.info("{}The leader did not answer for {}; retrying in {} ms", logPrefix, asked.topicPartition(), config.fetchBackoffMs());
                delay(asked.topicPartition(), replica, nowMs);
            }
        }
    }

    /**
     * The leader has a newer epoch than the one this replica follows (answers are only handled for
     * the epoch still followed): wait for the metadata to name it (Kafka's onPartitionFenced).
     */
    private void onFenced(TopicPartition topicPartition, Replica replica) {
        LOG.info("{}Partition {} has an older leader epoch ({}) than the leader; it waits for the new epoch from the metadata", logPrefix,
            topicPartition, replica.state().currentLeaderEpoch());
        markFailed(topicPartition, "fenced in leader epoch " + replica.state().currentLeaderEpoch(), null);
    }

    private void markFailed(TopicPartition topicPartition, String what, Throwable cause) {
        partitions.remove(topicPartition);
        failedPartitions.add(topicPartition);
        if (cause != null) {
            LOG.error("{}Partition {} failed while {}; it stays out of replication until it is added again", logPrefix, topicPartition,
                what, cause);
        } else {
            LOG.warn("{}Partition {} marked as failed: {}", logPrefix, topicPartition, what);
        }
    }

    private void delay(TopicPartition topicPartition, Replica replica, long nowMs) {
        put(topicPartition, new Replica(replica.log(), replica.state().delayed(nowMs, nowMs + config.fetchBackoffMs())));
    }

    private void put(TopicPartition topicPartition, Replica replica) {
        partitions.remove(topicPartition);
        partitions.put(topicPartition, replica);
    }

    /** Stops the fetcher: the leader connection closes and a pending request fails. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            inFlight = null;
        }
        leader.close();
        wakeup.run();
    }

    public synchronized boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return name;
    }

    /** The partitions of this fetcher (for moving them to other fetchers). */
    synchronized List<TopicPartition> topicPartitions() {
        return new ArrayList<>(partitions.keySet());
    }
}
