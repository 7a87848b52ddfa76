package io.strata.server.replica;

import io.strata.common.Time;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.PartitionRegistration;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.message.ListOffsetsRequestData;
import io.strata.protocol.message.ListOffsetsResponseData;
import io.strata.protocol.message.OffsetForLeaderEpochRequestData;
import io.strata.protocol.message.OffsetForLeaderEpochResponseData;
import io.strata.protocol.records.MemoryRecords;
import io.strata.server.replica.fetcher.FailedPartitions;
import io.strata.server.replica.fetcher.FollowerLog;
import io.strata.server.replica.fetcher.InitialFetchState;
import io.strata.server.replica.fetcher.LeaderEndpoint;
import io.strata.server.replica.fetcher.ReplicaFetcher;
import io.strata.server.replica.fetcher.ReplicaFetcherConfig;
import io.strata.storage.EpochOffset;
import io.strata.storage.ErrorCodeException;
import io.strata.storage.FetchDataInfo;
import io.strata.storage.FetchIsolation;
import io.strata.storage.LogConfig;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.stream.Stream;

/**
 * One simulated broker: a real {@link Partition} over a real {@link UnifiedLog} in its own data
 * directory (strata.fsync=on-ack), the leader's real follower-fetch path (the checks of
 * {@code ReplicaManager.readPartition}, {@link FollowerFetch}), and a real {@link ReplicaFetcher}
 * while it follows, over a {@link SimNetwork} endpoint. It applies metadata images in log order as
 * the controller publishes them. {@link #crash} drops everything after the log's recovery point
 * (optionally plus garbage bytes at the tail) and {@link #restart} reopens the log through the
 * storage LogLoader crash path with a new broker epoch. Not thread-safe: the simulation's thread.
 */
final class SimBroker {
    static final TopicPartition TP = new TopicPartition(SimController.TOPIC, 0);
    static final ReplicaFetcherConfig FETCHER_CONFIG = new ReplicaFetcherConfig(0, 1, 4_096, 65_536, 50, 1, 1_000);
    static final long LAG_TIME_MAX_MS = 2_000L;
    /** ListOffsets timestamp -1: the log end offset. */
    private static final long LATEST_TIMESTAMP = -1L;

    final int id;
    private final Path dir;
    private final LogConfig config;
    private final SimScheduler scheduler;
    private final SimNetwork network;
    private final SimController controller;
    private final Map<Integer, SimBroker> brokers;
    private final ScheduledExecutorService logScheduler;
    private final boolean strictMinIsr;
    final FailedPartitions failedPartitions = new FailedPartitions();
    /** A violation seen inside an event (between two invariant checks), or null. */
    String violation;
    /** Unclean elections are enabled: a follower may legitimately truncate below its high watermark. */
    private final boolean unclean;
    /** Fetch answers carrying a DivergingEpoch that reached this broker's fetcher (kept over restarts). */
    long divergingEpochAnswers;
    /** Truncations that removed records right after a DivergingEpoch answer (kept over restarts). */
    long divergingEpochTruncations;
    /** Set when a DivergingEpoch answer arrives; the fetcher's next truncation is the one it asked for. */
    private boolean divergingEpochPending;

    boolean alive = true;
    long brokerEpoch;
    private MetadataImage image = MetadataImage.EMPTY;
    UnifiedLog log;
    Partition partition;
    private ReplicaFetcher fetcher;
    private int fetchingFrom = -1;
    private int fetchingEpoch = -1;
    /** The high watermark as of the last replication-offset-checkpoint write (at each flush). */
    private long checkpointedHighWatermark;

    SimBroker(int id, Path dir, int minIsr, boolean strictMinIsr, boolean unclean, SimScheduler scheduler, SimNetwork network,
              SimController controller, Map<Integer, SimBroker> brokers, ScheduledExecutorService logScheduler) throws IOException {
        this.id = id;
        this.unclean = unclean;
        this.dir = dir;
        this.config = LogConfig.of(Map.of(), Map.of(LogConfig.MIN_IN_SYNC_REPLICAS, Integer.toString(minIsr), LogConfig.SEGMENT_BYTES, "4096"));
        this.scheduler = scheduler;
        this.network = network;
        this.controller = controller;
        this.brokers = brokers;
        this.logScheduler = logScheduler;
        this.strictMinIsr = strictMinIsr;
        this.brokerEpoch = controller.brokerEpoch(id);
        open(0L, true, OptionalLong.empty());
    }

    private void open(long recoveryPoint, boolean clean, OptionalLong highWatermark) throws IOException {
        log = UnifiedLog.load(dir, TP, config, scheduler.time, logScheduler,
            new UnifiedLog.LoadParams(0L, recoveryPoint, clean, 86_400_000L, true, highWatermark));
        partition = new Partition(TP, SimController.TOPIC_ID, log, new Context());
        image = MetadataImage.EMPTY;
        fetchingFrom = -1;
        fetchingEpoch = -1;
    }

    // ---------------------------------------------------------------- metadata

    /** Applies a published image (the caller delivers them in log order). */
    void applyImage(MetadataImage next) {
        if (!alive || next.offset() <= image.offset()) {
            return;
        }
        image = next;
        PartitionRegistration registration = next.topic(SimController.TOPIC).partition(0);
        if (registration.leaderEpoch() < partition.leaderEpoch() && partition.role() != Partition.Role.NONE) {
            return; // an image older than the state this partition already took (cannot happen in log order)
        }
        if (registration.leader() == id) {
            stopFetcher();
            partition.makeLeader(registration, scheduler.nowMs());
        } else {
            partition.makeFollower(registration);
            if (registration.leader() != fetchingFrom || registration.leaderEpoch() != fetchingEpoch) {
                stopFetcher();
                if (registration.leader() >= 0) {
                    startFetcher(registration.leader(), registration.leaderEpoch());
                }
            }
        }
    }

    private void startFetcher(int leader, int leaderEpoch) {
        fetcher = new ReplicaFetcher(0, id, () -> brokerEpoch, new Endpoint(leader), FETCHER_CONFIG, failedPartitions);
        fetcher.addPartitions(Map.of(TP, new InitialFetchState(SimController.TOPIC_ID, leader, leaderEpoch, new SimFollowerLog())));
        fetchingFrom = leader;
        fetchingEpoch = leaderEpoch;
    }

    private void stopFetcher() {
        if (fetcher != null) {
            fetcher.close();
            fetcher = null;
        }
        fetchingFrom = -1;
        fetchingEpoch = -1;
    }

    MetadataImage image() {
        return image;
    }

    // ---------------------------------------------------------------- periodic work

    void pollFetcher() {
        if (alive && fetcher != null) {
            fetcher.poll(scheduler.nowMs());
        }
    }

    void maybeShrinkIsr() {
        if (alive) {
            partition.maybeShrinkIsr(scheduler.nowMs());
        }
    }

    /** The log flusher: fsync to the log end, write the high watermark checkpoint, let the leader's high watermark follow. */
    void flush() {
        if (!alive) {
            return;
        }
        try {
            log.flush(log.logEndOffset());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        checkpointedHighWatermark = log.highWatermark();
        partition.onFlushed();
    }

    // ---------------------------------------------------------------- crash and restart

    /** Power loss: the fetcher stops, and everything after the recovery point is gone (plus {@code garbageBytes} at the tail). */
    void crash(Random random, int garbageBytes) throws IOException {
        if (!alive) {
            return;
        }
        alive = false;
        stopFetcher();
        long recoveryPoint = log.recoveryPoint();
        log.close();
        UnifiedLog cut = UnifiedLog.load(dir, TP, config, scheduler.time, logScheduler,
            new UnifiedLog.LoadParams(0L, recoveryPoint, true, 86_400_000L, true, OptionalLong.empty()));
        cut.truncateTo(recoveryPoint);
        durableBatches = ReplicationSimulation.batchList(cut, Long.MAX_VALUE);
        cut.close();
        if (garbageBytes > 0) {
            byte[] garbage = new byte[garbageBytes];
            random.nextBytes(garbage);
            try (FileChannel channel = FileChannel.open(lastSegmentFile(), StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
                channel.write(ByteBuffer.wrap(garbage));
            }
        }
        crashedRecoveryPoint = recoveryPoint;
    }

    private long crashedRecoveryPoint;
    /** While crashed: the batches that survived the crash (what a restart recovers); empty while running. */
    List<ReplicationSimulation.Batch> durableBatches = List.of();

    private Path lastSegmentFile() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(file -> file.getFileName().toString().endsWith(".log")).max(Path::compareTo)
                .orElseThrow(() -> new IllegalStateException("no segment in " + dir));
        }
    }

    /** Reopens the log after a crash (LogLoader's recovery from the recovery point) and registers with a new broker epoch. */
    void restart() throws IOException {
        if (alive) {
            throw new IllegalStateException("broker " + id + " restarted while running");
        }
        open(crashedRecoveryPoint, false, OptionalLong.of(Math.min(checkpointedHighWatermark, crashedRecoveryPoint)));
        alive = true;
        durableBatches = List.of();
        brokerEpoch = controller.register(id);
    }

    void close() throws IOException {
        stopFetcher();
        if (!log.isClosed()) {
            log.close();
        }
    }

    // ---------------------------------------------------------------- produce (leader)

    /** An acks=all append: the error, or null with {@code info} set. */
    io.strata.storage.LogAppendInfo appendAcksAll(MemoryRecords records) {
        try {
            return partition.appendRecordsToLeader(records, UnifiedLog.AppendOrigin.CLIENT, (short) -1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    // ---------------------------------------------------------------- the leader's follower-facing handlers

    private FetchResponseData handleFetch(FetchRequestData request) {
        if (!alive) {
            return null;
        }
        FetchParams params = FetchParams.follower(request.maxWaitMs(), request.minBytes(), request.maxBytes(), request.replicaState().replicaId(),
            request.replicaState().replicaEpoch());
        FetchResponseData response = new FetchResponseData();
        for (FetchRequestData.FetchTopic topic : request.topics()) {
            FetchResponseData.FetchableTopicResponse topicResponse = new FetchResponseData.FetchableTopicResponse().setTopicId(topic.topicId());
            for (FetchRequestData.FetchPartition fetch : topic.partitions()) {
                PartitionFetchInfo info = new PartitionFetchInfo(fetch.fetchOffset(), fetch.partitionMaxBytes(), fetch.currentLeaderEpoch(),
                    fetch.lastFetchedEpoch(), fetch.logStartOffset());
                FetchPartitionData data = readForFollower(params, info, Math.min(request.maxBytes(), fetch.partitionMaxBytes()));
                FetchResponseData.PartitionData answer = new FetchResponseData.PartitionData().setPartitionIndex(fetch.partition())
                    .setErrorCode(data.error().code()).setHighWatermark(data.highWatermark()).setLastStableOffset(data.lastStableOffset())
                    .setLogStartOffset(data.logStartOffset()).setPreferredReadReplica(-1).setRecords(data.records());
                if (data.divergingEpoch() != null) {
                    answer.setDivergingEpoch(new FetchResponseData.EpochEndOffset().setEpoch(data.divergingEpoch().epoch())
                        .setEndOffset(data.divergingEpoch().endOffset()));
                }
                topicResponse.partitions().add(answer);
            }
            response.responses().add(topicResponse);
        }
        return response;
    }

    /** ReplicaManager.readPartition's order for a follower: leadership, epoch, known replica, divergence, read, record. */
    private FetchPartitionData readForFollower(FetchParams params, PartitionFetchInfo info, int maxBytes) {
        if (!partition.isLeader()) {
            return FetchPartitionData.error(ErrorCode.NOT_LEADER_OR_FOLLOWER, "not the leader");
        }
        try {
            partition.checkLeaderEpoch(info.currentLeaderEpoch());
            if (partition.remoteReplica(params.replicaId()) == null) {
                throw new ErrorCodeException(ErrorCode.UNKNOWN_LEADER_EPOCH, "not a replica");
            }
            if (info.lastFetchedEpoch() >= 0) {
                FetchPartitionData diverging = FollowerFetch.divergingEpoch(partition, info);
                if (diverging != null) {
                    return diverging;
                }
            }
            long leaderEndOffset = log.logEndOffset();
            FetchDataInfo read = partition.read(info.fetchOffset(), maxBytes, FetchIsolation.LOG_END, true);
            FollowerFetch.record(partition, params, info, leaderEndOffset, scheduler.nowMs());
            // Copied now, as the network layer writes the response before the log can change (a segment closed by a crash or truncation).
            return new FetchPartitionData(ErrorCode.NONE, log.highWatermark(), log.lastStableOffset(), log.logStartOffset(),
                MemoryRecords.of(read.records()), null, null);
        } catch (ErrorCodeException e) {
            return new FetchPartitionData(e.error(), log.highWatermark(), log.lastStableOffset(), log.logStartOffset(), MemoryRecords.EMPTY,
                null, e.getMessage());
        }
    }

    private ErrorCode epochError(int currentLeaderEpoch) {
        if (!partition.isLeader()) {
            return ErrorCode.NOT_LEADER_OR_FOLLOWER;
        }
        try {
            partition.checkLeaderEpoch(currentLeaderEpoch);
            return ErrorCode.NONE;
        } catch (ErrorCodeException e) {
            return e.error();
        }
    }

    private OffsetForLeaderEpochResponseData handleEpochs(OffsetForLeaderEpochRequestData request) {
        if (!alive) {
            return null;
        }
        OffsetForLeaderEpochResponseData response = new OffsetForLeaderEpochResponseData();
        for (OffsetForLeaderEpochRequestData.OffsetForLeaderTopic topic : request.topics()) {
            OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult result =
                new OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult().setTopic(topic.topic());
            for (OffsetForLeaderEpochRequestData.OffsetForLeaderPartition asked : topic.partitions()) {
                ErrorCode error = epochError(asked.currentLeaderEpoch());
                OffsetForLeaderEpochResponseData.EpochEndOffset answer = new OffsetForLeaderEpochResponseData.EpochEndOffset()
                    .setPartition(asked.partition()).setErrorCode(error.code()).setLeaderEpoch(-1).setEndOffset(-1);
                if (error == ErrorCode.NONE) {
                    log.endOffsetForEpoch(asked.leaderEpoch()).ifPresent(end -> answer.setLeaderEpoch(end.epoch()).setEndOffset(end.endOffset()));
                }
                result.partitions().add(answer);
            }
            response.topics().add(result);
        }
        return response;
    }

    private ListOffsetsResponseData handleListOffsets(ListOffsetsRequestData request) {
        if (!alive) {
            return null;
        }
        ListOffsetsResponseData response = new ListOffsetsResponseData();
        for (ListOffsetsRequestData.ListOffsetsTopic topic : request.topics()) {
            ListOffsetsResponseData.ListOffsetsTopicResponse result = new ListOffsetsResponseData.ListOffsetsTopicResponse().setName(topic.name());
            for (ListOffsetsRequestData.ListOffsetsPartition asked : topic.partitions()) {
                ErrorCode error = epochError(asked.currentLeaderEpoch());
                ListOffsetsResponseData.ListOffsetsPartitionResponse answer = new ListOffsetsResponseData.ListOffsetsPartitionResponse()
                    .setPartitionIndex(asked.partitionIndex()).setErrorCode(error.code()).setOffset(-1).setTimestamp(-1);
                if (error == ErrorCode.NONE) {
                    answer.setOffset(asked.timestamp() == LATEST_TIMESTAMP ? log.logEndOffset() : log.logStartOffset());
                }
                result.partitions().add(answer);
            }
            response.topics().add(result);
        }
        return response;
    }

    // ---------------------------------------------------------------- adapters

    /** Notes a DivergingEpoch in an answer about to reach the fetcher (one partition here, so at most one). */
    private FetchResponseData noteDivergingEpoch(FetchResponseData response) {
        if (response != null) {
            for (FetchResponseData.FetchableTopicResponse topic : response.responses()) {
                for (FetchResponseData.PartitionData data : topic.partitions()) {
                    if (data.divergingEpoch().epoch() >= 0) {
                        divergingEpochAnswers++;
                        divergingEpochPending = true;
                    }
                }
            }
        }
        return response;
    }

    /** The fetcher's view of the leader: requests over the simulated network to the leader broker's handlers. */
    private final class Endpoint implements LeaderEndpoint {
        private final int leaderId;

        Endpoint(int leaderId) {
            this.leaderId = leaderId;
        }

        @Override
        public int leaderId() {
            return leaderId;
        }

        @Override
        public CompletableFuture<FetchResponseData> fetch(FetchRequestData request) {
            return network.request(id, leaderId, "Fetch", () -> brokers.get(leaderId).handleFetch(request))
                .thenApply(SimBroker.this::noteDivergingEpoch);
        }

        @Override
        public CompletableFuture<OffsetForLeaderEpochResponseData> fetchEpochEndOffsets(OffsetForLeaderEpochRequestData request) {
            return network.request(id, leaderId, "OffsetForLeaderEpoch", () -> brokers.get(leaderId).handleEpochs(request));
        }

        @Override
        public CompletableFuture<ListOffsetsResponseData> listOffsets(ListOffsetsRequestData request) {
            return network.request(id, leaderId, "ListOffsets", () -> brokers.get(leaderId).handleListOffsets(request));
        }

        @Override
        public void close() {
        }
    }

    /** What the broker's PartitionFollowerLog does, over this broker's current log (fsync on every follower append). */
    private final class SimFollowerLog implements FollowerLog {
        @Override
        public TopicPartition topicPartition() {
            return TP;
        }

        @Override
        public UUID topicId() {
            return SimController.TOPIC_ID;
        }

        @Override
        public long logStartOffset() {
            return log.logStartOffset();
        }

        @Override
        public long logEndOffset() {
            return log.logEndOffset();
        }

        @Override
        public long highWatermark() {
            return log.highWatermark();
        }

        @Override
        public OptionalInt latestEpoch() {
            return log.latestEpoch();
        }

        @Override
        public Optional<EpochOffset> endOffsetForEpoch(int epoch) {
            return log.endOffsetForEpoch(epoch);
        }

        @Override
        public void truncateTo(long offset) throws IOException {
            if (!unclean && offset < log.highWatermark() && violation == null) {
                // Committed data is on every eligible leader (no unclean election), so a follower never truncates below its HW.
                violation = "broker " + id + " truncated to " + offset + " below its high watermark " + log.highWatermark();
            }
            if (divergingEpochPending && offset < log.logEndOffset()) {
                divergingEpochTruncations++;
            }
            divergingEpochPending = false;
            log.truncateTo(offset);
        }

        @Override
        public void truncateFullyAndStartAt(long offset) throws IOException {
            log.truncateFullyAndStartAt(offset);
        }

        @Override
        public long appendAsFollower(MemoryRecords records, int currentLeaderEpoch) throws IOException {
            log.appendAsFollower(records, currentLeaderEpoch);
            log.flush(log.logEndOffset());
            return log.logEndOffset();
        }

        @Override
        public void updateHighWatermark(long leaderHighWatermark) {
            long target = Math.min(leaderHighWatermark, log.logEndOffset());
            if (target > log.highWatermark()) {
                log.updateHighWatermark(target);
            }
        }

        @Override
        public void maybeIncrementLogStartOffset(long leaderLogStartOffset) throws IOException {
            log.maybeIncrementLogStartOffset(leaderLogStartOffset);
        }
    }

    /** The broker's ReplicaContext: ISR eligibility from its own image, ISR changes over the network to the controller. */
    private final class Context implements ReplicaContext {
        @Override
        public int localBrokerId() {
            return id;
        }

        @Override
        public Time time() {
            return scheduler.time;
        }

        @Override
        public long replicaLagTimeMaxMs() {
            return LAG_TIME_MAX_MS;
        }

        @Override
        public boolean isReplicaIsrEligible(int brokerId, long fetchBrokerEpoch) {
            var broker = image.brokers().get(brokerId);
            return broker != null && !broker.fenced() && !broker.inControlledShutdown()
                && (fetchBrokerEpoch == RemoteReplica.NO_BROKER_EPOCH || broker.epoch() == fetchBrokerEpoch);
        }

        @Override
        public boolean strictMinIsr() {
            return strictMinIsr;
        }

        @Override
        public CompletableFuture<AlterPartitionResponseData.PartitionData> submitIsrChange(TopicPartition topicPartition, UUID topicId,
                                                                                            AlterPartitionRequestData.PartitionData change) {
            long epoch = brokerEpoch;
            return network.request(id, SimNetwork.CONTROLLER, "AlterPartition", () -> controller.alterPartition(id, epoch, change));
        }

        @Override
        public void onHighWatermarkIncremented(TopicPartition topicPartition) {
        }
    }
}
