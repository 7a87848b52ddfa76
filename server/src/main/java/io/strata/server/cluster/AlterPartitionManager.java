package io.strata.server.cluster;

import io.strata.common.BackgroundErrors;
import io.strata.common.Time;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.server.replica.IsrChangeSubmitter;
import io.strata.storage.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * A leader's path for ISR changes to the controller, as Kafka's {@code AlterPartitionManager}:
 * changes queue here, at most one AlterPartition v{@value #REQUEST_VERSION} is in flight, and it
 * carries every change queued when it leaves (BrokerId, BrokerEpoch, per topic id and partition
 * LeaderEpoch, NewIsrWithEpochs, LeaderRecoveryState, PartitionEpoch).
 *
 * <p>Answers: each partition's answer (NONE with the new ISR and epochs, or its error) completes
 * that partition's future, and the partition decides (see
 * {@code Partition.handleAlterPartitionResult}); a partition missing from the answer gets
 * UNKNOWN_SERVER_ERROR. A top-level error (NOT_CONTROLLER, STALE_BROKER_EPOCH, ...), a failed or
 * timed-out request sends the whole batch again after a back-off (doubling from
 * {@value #RETRY_BACKOFF_INITIAL_MS} ms to {@value #RETRY_BACKOFF_MAX_MS} ms), with the broker
 * epoch as it is then; each failure is logged and counted ({@link #failedRequests()},
 * {@value #TASK}). A second change for a partition with one queued or in flight is answered
 * OPERATION_NOT_ATTEMPTED at once (a partition has at most one pending change). Futures never fail.
 *
 * <p>Bounds: at most one entry per partition led here, queued or in flight.
 *
 * <p>Thread-safe: the queue and the in-flight batch are guarded by this object's monitor; the
 * sender is called and futures are completed outside it, so a sender that answers synchronously
 * (tests) or a continuation that submits again does not deadlock.
 */
public final class AlterPartitionManager implements IsrChangeSubmitter {
    private static final Logger LOG = LoggerFactory.getLogger(AlterPartitionManager.class);
    /** AlterPartition version sent: v3 carries NewIsrWithEpochs (KIP-903) and topic ids. */
    public static final short REQUEST_VERSION = 3;
    /** First back-off after a failed request. */
    public static final long RETRY_BACKOFF_INITIAL_MS = 100L;
    /** Largest back-off between retries of a failing request. */
    public static final long RETRY_BACKOFF_MAX_MS = 10_000L;
    /** Background task name (metric label) under which failed requests are counted. */
    public static final String TASK = "alter-partition";

    /** Runs a task after a delay (the log manager's scheduler in the broker, a captured queue in tests). */
    @FunctionalInterface
    public interface Scheduler {
        void schedule(Runnable task, long delayMs);
    }

    private record Key(UUID topicId, int partition) {
    }

    private record Pending(TopicPartition topicPartition, UUID topicId, AlterPartitionRequestData.PartitionData change,
                           CompletableFuture<AlterPartitionResponseData.PartitionData> future) {
    }

    private final int brokerId;
    private final LongSupplier brokerEpoch;
    private final Function<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> sender;
    private final Scheduler scheduler;
    private final Time time;
    private final AtomicLong failedRequests = new AtomicLong();
    private final AtomicLong sentRequests = new AtomicLong();
    private volatile BackgroundErrors backgroundErrors = new BackgroundErrors();

    /** Changes not sent yet, in submission order. Guarded by this. */
    private final LinkedHashMap<Key, Pending> unsent = new LinkedHashMap<>();
    /** The batch of the request in flight, or null. Guarded by this. */
    private LinkedHashMap<Key, Pending> inflight;
    /** A retry is scheduled: nothing is sent before it runs. Guarded by this. */
    private boolean retryScheduled;
    private int consecutiveFailures;

    /**
     * @param sender sends one AlterPartition (the integrator binds it to
     *     {@code ControllerApi.alterPartition(request, (short) 3)}); its future must complete, with a
     *     timeout failure if the controller does not answer
     */
    public AlterPartitionManager(int brokerId, LongSupplier brokerEpoch,
                                 Function<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> sender, Scheduler scheduler,
                                 Time time) {
        this.brokerId = brokerId;
        this.brokerEpoch = brokerEpoch;
        this.sender = sender;
        this.scheduler = scheduler;
        this.time = time;
    }

    /** Retries run on {@code executor} (the log manager's scheduler). */
    public AlterPartitionManager(int brokerId, LongSupplier brokerEpoch,
                                 Function<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> sender,
                                 ScheduledExecutorService executor, Time time) {
        this(brokerId, brokerEpoch, sender, (task, delayMs) -> executor.schedule(task, delayMs, TimeUnit.MILLISECONDS), time);
    }

    public void setBackgroundErrors(BackgroundErrors errors) {
        this.backgroundErrors = errors;
    }

    /** Requests that failed (transport, timeout or top-level error) since start. */
    public long failedRequests() {
        return failedRequests.get();
    }

    /** Requests sent since start. */
    public long sentRequests() {
        return sentRequests.get();
    }

    /** Changes queued or in flight. */
    public synchronized int pendingCount() {
        return unsent.size() + (inflight == null ? 0 : inflight.size());
    }

    @Override
    public CompletableFuture<AlterPartitionResponseData.PartitionData> submit(TopicPartition topicPartition, UUID topicId,
                                                                               AlterPartitionRequestData.PartitionData change) {
        Key key = new Key(topicId, topicPartition.partition());
        CompletableFuture<AlterPartitionResponseData.PartitionData> future = new CompletableFuture<>();
        synchronized (this) {
            if (unsent.containsKey(key) || (inflight != null && inflight.containsKey(key))) {
                future.complete(answer(change.partitionIndex(), ErrorCode.OPERATION_NOT_ATTEMPTED));
                return future;
            }
            unsent.put(key, new Pending(topicPartition, topicId, change, future));
        }
        maybeSend();
        return future;
    }

    private void maybeSend() {
        LinkedHashMap<Key, Pending> batch;
        AlterPartitionRequestData request;
        synchronized (this) {
            if (inflight != null || retryScheduled || unsent.isEmpty()) {
                return;
            }
            batch = new LinkedHashMap<>(unsent);
            unsent.clear();
            inflight = batch;
            request = buildRequest(batch);
        }
        sentRequests.incrementAndGet();
        CompletableFuture<AlterPartitionResponseData> answer;
        try {
            answer = sender.apply(request);
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        answer.whenComplete((response, failure) -> onAnswer(batch, response, failure));
    }

    private AlterPartitionRequestData buildRequest(LinkedHashMap<Key, Pending> batch) {
        AlterPartitionRequestData request = new AlterPartitionRequestData().setBrokerId(brokerId).setBrokerEpoch(brokerEpoch.getAsLong());
        Map<UUID, AlterPartitionRequestData.TopicData> topics = new LinkedHashMap<>();
        for (Pending pending : batch.values()) {
            AlterPartitionRequestData.TopicData topic = topics.computeIfAbsent(pending.topicId(), id -> {
                AlterPartitionRequestData.TopicData created = new AlterPartitionRequestData.TopicData().setTopicId(id);
                request.topics().add(created);
                return created;
            });
            topic.partitions().add(pending.change());
        }
        return request;
    }

    private void onAnswer(LinkedHashMap<Key, Pending> batch, AlterPartitionResponseData response, Throwable failure) {
        ErrorCode topLevel = failure != null ? null : ErrorCode.forCode(response.errorCode());
        if (failure != null || topLevel != ErrorCode.NONE) {
            retryLater(batch, failure, topLevel);
            return;
        }
        List<Runnable> completions = new ArrayList<>();
        synchronized (this) {
            inflight = null;
            consecutiveFailures = 0;
            Map<Key, Pending> waiting = new LinkedHashMap<>(batch);
            for (AlterPartitionResponseData.TopicData topic : response.topics()) {
                for (AlterPartitionResponseData.PartitionData partition : topic.partitions()) {
                    Pending pending = waiting.remove(new Key(topic.topicId(), partition.partitionIndex()));
                    if (pending != null) {
                        completions.add(() -> pending.future().complete(partition));
                    }
                }
            }
            for (Pending missing : waiting.values()) {
                LOG.warn("The controller's AlterPartition answer has no entry for {} (topic id {})", missing.topicPartition(), missing.topicId());
                completions.add(() -> missing.future().complete(answer(missing.change().partitionIndex(), ErrorCode.UNKNOWN_SERVER_ERROR)));
            }
        }
        completions.forEach(Runnable::run);
        maybeSend();
    }

    private void retryLater(LinkedHashMap<Key, Pending> batch, Throwable failure, ErrorCode topLevel) {
        long backoffMs;
        synchronized (this) {
            inflight = null;
            // The failed batch goes back in front of what was queued meanwhile (a partition is never in both).
            LinkedHashMap<Key, Pending> requeued = new LinkedHashMap<>(batch);
            requeued.putAll(unsent);
            unsent.clear();
            unsent.putAll(requeued);
            consecutiveFailures++;
            backoffMs = Math.min(RETRY_BACKOFF_MAX_MS, RETRY_BACKOFF_INITIAL_MS << Math.min(20, consecutiveFailures - 1));
            retryScheduled = true;
        }
        failedRequests.incrementAndGet();
        backgroundErrors.record(TASK);
        if (failure != null) {
            LOG.warn("AlterPartition for {} partitions failed (attempt {}); retrying in {} ms", batch.size(), consecutiveFailures, backoffMs, failure);
        } else {
            LOG.warn("AlterPartition for {} partitions was answered {} (attempt {}); retrying in {} ms", batch.size(), topLevel,
                consecutiveFailures, backoffMs);
        }
        try {
            scheduler.schedule(this::retry, backoffMs);
        } catch (RuntimeException e) {
            // The scheduler is shut down (the broker stops): the changes stay queued, nothing is lost silently.
            LOG.warn("Could not schedule the AlterPartition retry; {} changes stay queued", batch.size(), e);
        }
    }

    private void retry() {
        synchronized (this) {
            retryScheduled = false;
        }
        maybeSend();
    }

    private static AlterPartitionResponseData.PartitionData answer(int partitionIndex, ErrorCode error) {
        return new AlterPartitionResponseData.PartitionData().setPartitionIndex(partitionIndex).setErrorCode(error.code());
    }

    @Override
    public String toString() {
        return "AlterPartitionManager(brokerId=" + brokerId + ", sent=" + sentRequests.get() + ", failed=" + failedRequests.get() + ", now="
            + time.milliseconds() + ")";
    }
}
