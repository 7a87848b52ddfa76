package io.strata.raft;

import io.strata.common.Time;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.DescribeQuorumResponseData;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.Records;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Runs one {@link RaftClient} on its own thread for a real node: requests from the network and
 * appends from the controller reach it through one bounded queue; the thread polls the client
 * at least every {@link #POLL_INTERVAL_MS} ms and whenever something arrives.
 *
 * <p>Outgoing requests go through a {@link RequestSender} (the inter-broker client), whose
 * answers come back through the queue; answers to incoming requests complete the future that
 * {@link #handleRequest} returned. Nothing here blocks the network threads: a full queue fails
 * the request at once, and the peer retries on its timers as it would after a lost message.
 *
 * <p>The state other threads read ({@link #leaderId()}, {@link #epoch()},
 * {@link #highWatermark()}) is published after every poll.
 */
public final class RaftNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RaftNode.class);
    /** The longest the thread sleeps between polls; the client's timers are at least this coarse. */
    static final long POLL_INTERVAL_MS = 10;
    /** Inbound requests, answers and appends that may wait for the thread. */
    static final int QUEUE_CAPACITY = 10_000;

    /** Sends a request to another node; the future completes with its answer or fails. */
    @FunctionalInterface
    public interface RequestSender {
        CompletableFuture<ApiMessage> send(int destination, ApiMessageType api, short version, ApiMessage request);

        /**
         * Sends to {@code destination} at {@code endpoint} when the quorum knows where it listens (dynamic quorums:
         * bootstrap servers, voters of the log, a voter being added); null leaves it to the sender's configuration.
         */
        default CompletableFuture<ApiMessage> send(int destination, VoterSet.Endpoint endpoint, ApiMessageType api, short version,
                                                   ApiMessage request) {
            return send(destination, api, version, request);
        }
    }

    private sealed interface Event permits Inbound, Append, Stop, Task {
    }

    /** Work that must run on the quorum's thread (it reads the client's state). */
    private record Task(Runnable work, CompletableFuture<?> result) implements Event {
    }

    /** Ends the thread after resigning if {@code resign}. */
    private record Stop(boolean resign) implements Event {
    }

    private record Inbound(RaftMessage message) implements Event {
    }

    private record Append(List<byte[]> values, CompletableFuture<Long> result) implements Event {
    }

    private final int localId;
    private final RaftClient client;
    private final RequestSender sender;
    private final Time time;
    private final BlockingQueue<Event> queue = new ArrayBlockingQueue<>(QUEUE_CAPACITY);
    /** Answers owed to the network, by the correlation id given to the request here. */
    private final Map<Long, CompletableFuture<ApiMessage>> owedAnswers = new HashMap<>();
    private final AtomicLong nextInboundCorrelationId = new AtomicLong();
    private final Thread thread;
    private final CommitReader commits;
    private volatile boolean running = true;
    private volatile int publishedEpoch;
    private volatile int publishedLeaderId = -1;
    private volatile long publishedHighWatermark;
    private volatile short publishedKRaftVersion;
    private volatile VoterSet publishedVoterSet = VoterSet.EMPTY;

    /**
     * @param listener told about committed offsets and leader changes, on the quorum's thread
     */
    public RaftNode(int localId, Set<Integer> voters, String clusterId, RaftConfig config, RaftLog log, QuorumStateStore store,
                    RequestSender sender, Time time, java.util.Random random, RaftClient.Listener listener) {
        this(localId, voters, clusterId, config, log, store, sender, time, random, listener, null);
    }

    /**
     * @param listener told about committed offsets and leader changes, on the quorum's thread
     * @param commits  if not null, given every committed batch and snapshot ({@link CommitListener}), on the quorum's thread;
     *                 the latest snapshot and the committed part of the log are delivered as the quorum learns the high watermark
     */
    public RaftNode(int localId, Set<Integer> voters, String clusterId, RaftConfig config, RaftLog log, QuorumStateStore store,
                    RequestSender sender, Time time, java.util.Random random, RaftClient.Listener listener, CommitListener commits) {
        this(QuorumSetup.staticQuorum(localId, voters), clusterId, config, log, store, sender, time, random, listener, commits);
    }

    /** A replica of a static or dynamic quorum ({@link QuorumSetup}). */
    public RaftNode(QuorumSetup setup, String clusterId, RaftConfig config, RaftLog log, QuorumStateStore store,
                    RequestSender sender, Time time, java.util.Random random, RaftClient.Listener listener, CommitListener commits) {
        int localId = setup.localKey().id();
        this.localId = localId;
        this.sender = sender;
        this.time = time;
        this.commits = commits == null ? null : new CommitReader(log, commits);
        RaftClient.Listener events = this.commits == null ? listener : new RaftClient.Listener() {
            @Override
            public void onHighWatermark(long highWatermark) {
                listener.onHighWatermark(highWatermark);
                RaftNode.this.commits.deliverUpTo(highWatermark);
            }

            @Override
            public void onLeaderChange(int epoch, int leaderId) {
                listener.onLeaderChange(epoch, leaderId);
                // A replica that led this epoch before a restart resumes Resigned: it names itself but must not act as the leader.
                commits.handleLeaderChange(epoch, leaderId == localId && !client.isLeader() ? -1 : leaderId);
            }

            @Override
            public void onSnapshotLoaded(OffsetAndEpoch snapshotId) {
                listener.onSnapshotLoaded(snapshotId);
                RaftNode.this.commits.deliverSnapshot(snapshotId);
            }
        };
        if (this.commits != null) {
            this.commits.start();
        }
        this.client = new RaftClient(setup, clusterId, config, log, store, this::transmit, random, events);
        this.client.initialize(time.milliseconds());
        publish();
        this.thread = new Thread(this::run, "strata-raft-" + localId);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    public int localId() {
        return localId;
    }

    public int epoch() {
        return publishedEpoch;
    }

    public int leaderId() {
        return publishedLeaderId;
    }

    public boolean isLeader() {
        return publishedLeaderId == localId;
    }

    public long highWatermark() {
        return publishedHighWatermark;
    }

    /**
     * Hands a quorum request from node {@code sourceId} to the replica; the future completes
     * with the answer to send back, or fails if the replica cannot take it now (the peer then
     * retries as after a lost message).
     */
    public CompletableFuture<ApiMessage> handleRequest(int sourceId, ApiMessage request) {
        CompletableFuture<ApiMessage> answer = new CompletableFuture<>();
        long correlationId = nextInboundCorrelationId.getAndIncrement();
        synchronized (owedAnswers) {
            owedAnswers.put(correlationId, answer);
        }
        if (!offer(new Inbound(new RaftMessage(sourceId, localId, correlationId, request, true)))) {
            synchronized (owedAnswers) {
                owedAnswers.remove(correlationId);
            }
            answer.completeExceptionally(new IllegalStateException("the quorum of node " + localId + " is busy or stopped"));
        }
        return answer;
    }

    /**
     * Appends {@code values} as one batch if this node leads; the future completes with the last
     * offset (committed once the high watermark passes it), or -1 if it does not lead.
     */
    public CompletableFuture<Long> append(List<byte[]> values) {
        CompletableFuture<Long> result = new CompletableFuture<>();
        if (!offer(new Append(List.copyOf(values), result))) {
            result.complete(-1L);
        }
        return result;
    }

    /** AddRaftVoter on the quorum's thread; the future completes with Kafka's error code (NONE once committed). */
    public CompletableFuture<RaftClient.VoterChangeResult> addVoter(ReplicaKey key, List<VoterSet.Endpoint> endpoints, boolean ackWhenCommitted,
                                                                    long timeoutMs) {
        return call(() -> client.addVoter(key, endpoints, ackWhenCommitted, timeoutMs, time.milliseconds())).thenCompose(result -> result);
    }

    /** RemoveRaftVoter on the quorum's thread. */
    public CompletableFuture<RaftClient.VoterChangeResult> removeVoter(ReplicaKey key) {
        return call(() -> client.removeVoter(key, time.milliseconds())).thenCompose(result -> result);
    }

    /** The voter set in effect and the finalized kraft.version, read on the quorum's thread. */
    public CompletableFuture<VoterSet> voterSet() {
        return call(client::voterSet);
    }

    /** The finalized kraft.version as last published (0 for static quorums). */
    public short kraftVersion() {
        return publishedKRaftVersion;
    }

    /** The voter set in effect as last published. */
    public VoterSet publishedVoterSet() {
        return publishedVoterSet;
    }

    /** The quorum as DescribeQuorum reports it, read on the quorum's thread. */
    public CompletableFuture<DescribeQuorumResponseData.PartitionData> describeQuorum() {
        return call(() -> client.describeQuorum(time.milliseconds()));
    }

    /**
     * Writes a snapshot of the committed state below {@code snapshotId.offset()} with these data
     * records, on the quorum's thread; completes with whether one was written (false when a
     * snapshot at or past that offset exists). The log prefix it covers is dropped by a later poll.
     */
    public CompletableFuture<Boolean> createSnapshot(OffsetAndEpoch snapshotId, long lastContainedLogTimestampMs, List<byte[]> values) {
        return call(() -> {
            Optional<RecordsSnapshotWriter> writer = client.createSnapshot(snapshotId, lastContainedLogTimestampMs);
            if (writer.isEmpty()) {
                return false;
            }
            try (RecordsSnapshotWriter snapshot = writer.get()) {
                int from = 0;
                while (from < values.size()) {
                    int to = Math.min(values.size(), from + 1000);
                    snapshot.append(values.subList(from, to), lastContainedLogTimestampMs);
                    from = to;
                }
                snapshot.freeze(lastContainedLogTimestampMs);
            }
            return true;
        });
    }

    private <T> CompletableFuture<T> call(java.util.function.Supplier<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Task task = new Task(() -> {
            try {
                result.complete(work.get());
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        }, result);
        if (!offer(task)) {
            result.completeExceptionally(new IllegalStateException("the quorum of node " + localId + " is busy or stopped"));
        }
        return result;
    }

    private boolean offer(Event event) {
        return running && queue.offer(event);
    }

    /** The client's outgoing messages: requests to the sender, answers to whoever is owed one. */
    private void transmit(RaftMessage message) {
        if (!message.isRequest()) {
            CompletableFuture<ApiMessage> answer;
            synchronized (owedAnswers) {
                answer = owedAnswers.remove(message.correlationId());
            }
            if (answer != null) {
                answer.complete(message.data());
            }
            return;
        }
        short version = RaftMessage.version(message.api());
        VoterSet.Endpoint endpoint = client.endpointOf(message.destination()).orElse(null);
        sender.send(message.destination(), endpoint, message.api(), version, message.data()).whenComplete((response, failure) -> {
            if (failure == null && response != null) {
                offer(new Inbound(new RaftMessage(message.destination(), localId, message.correlationId(), response, false)));
            }
            // A failed request is forgotten here; the client times it out and resends on its timers.
        });
    }

    private void run() {
        while (running) {
            try {
                Event event = queue.poll(POLL_INTERVAL_MS, TimeUnit.MILLISECONDS);
                while (event != null && running) {
                    handle(event);
                    event = running ? queue.poll() : null;
                }
                if (running) {
                    client.poll(time.milliseconds());
                }
                publish();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                // A bug or an I/O failure of the log: the replica cannot go on safely.
                LOG.error("The quorum replica of node {} failed and stops", localId, e);
                running = false;
            }
        }
    }

    private void handle(Event event) {
        long nowMs = time.milliseconds();
        if (event instanceof Inbound inbound) {
            client.receive(inbound.message());
        } else if (event instanceof Append append) {
            append.result().complete(client.append(append.values(), nowMs));
        } else if (event instanceof Task task) {
            task.work().run();
        } else if (event instanceof Stop stop) {
            if (stop.resign()) {
                client.resign(nowMs);
                client.poll(nowMs); // sends EndQuorumEpoch
            }
            running = false;
        }
    }

    private void publish() {
        publishedEpoch = client.epoch();
        publishedLeaderId = client.leaderId();
        publishedHighWatermark = client.highWatermark();
        publishedKRaftVersion = client.kraftVersion();
        publishedVoterSet = client.voterSet();
    }

    /** Whether the thread still runs (it stops on close or after a failure it cannot survive). */
    public boolean isRunning() {
        return running && thread.isAlive();
    }

    /**
     * Stops the replica: a leader first resigns and tells the voters (EndQuorumEpoch), so they
     * elect a successor at once instead of after a fetch timeout.
     */
    @Override
    public void close() throws InterruptedException {
        if (running && queue.offer(new Stop(true))) {
            thread.join(5_000);
        }
        halt();
    }

    /** Stops the replica at once, without resigning: as if the process died. */
    public void halt() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(5_000);
        Event left;
        while ((left = queue.poll()) != null) {
            if (left instanceof Task task) {
                task.result().completeExceptionally(new IllegalStateException("the quorum of node " + localId + " stopped"));
            } else if (left instanceof Append append) {
                append.result().complete(-1L);
            }
        }
        synchronized (owedAnswers) {
            for (CompletableFuture<ApiMessage> answer : owedAnswers.values()) {
                answer.completeExceptionally(new IllegalStateException("the quorum of node " + localId + " stopped"));
            }
            owedAnswers.clear();
        }
    }

    /**
     * Reads what the quorum committed out of the log, on the quorum's thread, and hands it to a
     * {@link CommitListener}: each batch once, in order, from the latest snapshot's end.
     */
    static final class CommitReader {
        /** The most bytes read from the log at once. */
        private static final int READ_BYTES = 1 << 20;
        private final RaftLog log;
        private final CommitListener listener;
        /** The next offset to deliver (a batch boundary). */
        private long nextOffset;

        CommitReader(RaftLog log, CommitListener listener) {
            this.log = log;
            this.listener = listener;
        }

        /** At start: the latest snapshot, if any; the log is delivered from its end. */
        void start() {
            Optional<OffsetAndEpoch> snapshot = log.latestSnapshotId();
            if (snapshot.isPresent()) {
                deliverSnapshot(snapshot.get());
            } else {
                nextOffset = log.logStartOffset();
            }
        }

        void deliverSnapshot(OffsetAndEpoch snapshotId) {
            SnapshotReader reader = log.readSnapshot(snapshotId).orElseThrow(() -> new IllegalStateException("snapshot " + snapshotId + " vanished"));
            List<byte[]> values = new ArrayList<>();
            long lastContainedTimestampMs = -1;
            for (RecordBatch entry : reader.batches()) {
                DefaultRecordBatch batch = (DefaultRecordBatch) entry;
                if (batch.isControlBatch()) {
                    if (lastContainedTimestampMs < 0) {
                        lastContainedTimestampMs = batch.maxTimestamp();
                    }
                    continue;
                }
                for (Record record : batch.records()) {
                    values.add(bytes(record.value()));
                }
            }
            nextOffset = snapshotId.offset();
            listener.handleSnapshot(snapshotId, values, lastContainedTimestampMs);
        }

        /** Every whole batch below {@code highWatermark} not delivered yet. */
        void deliverUpTo(long highWatermark) {
            if (nextOffset < log.logStartOffset()) {
                // Only a snapshot can move the start past what was delivered; its delivery moves nextOffset.
                throw new IllegalStateException("committed entries from " + nextOffset + " were dropped (log start " + log.logStartOffset()
                    + ") before they were delivered");
            }
            while (nextOffset < highWatermark) {
                Records records = log.read(nextOffset, READ_BYTES);
                long before = nextOffset;
                for (RecordBatch entry : MemoryRecords.of(records).batches()) {
                    DefaultRecordBatch batch = (DefaultRecordBatch) entry;
                    if (batch.lastOffset() < nextOffset) {
                        continue;
                    }
                    if (batch.lastOffset() >= highWatermark) {
                        return;
                    }
                    List<byte[]> values;
                    if (batch.isControlBatch()) {
                        values = List.of();
                    } else {
                        values = new ArrayList<>(batch.recordCount());
                        for (Record record : batch.records()) {
                            values.add(bytes(record.value()));
                        }
                    }
                    listener.handleCommit(new CommitListener.CommittedBatch(batch.baseOffset(), batch.lastOffset(), batch.partitionLeaderEpoch(),
                        batch.maxTimestamp(), batch.isControlBatch(), batch.sizeInBytes(), values));
                    nextOffset = batch.lastOffset() + 1;
                }
                if (nextOffset == before) {
                    return; // nothing readable yet
                }
            }
        }

        private static byte[] bytes(ByteBuffer value) {
            if (value == null) {
                return new byte[0];
            }
            byte[] bytes = new byte[value.remaining()];
            value.duplicate().get(bytes);
            return bytes;
        }
    }
}
