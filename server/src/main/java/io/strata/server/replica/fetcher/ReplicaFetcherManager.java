package io.strata.server.replica.fetcher;

import io.strata.common.BackgroundErrors;
import io.strata.common.Time;
import io.strata.server.replica.ReplicaQuota;
import io.strata.storage.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;

/**
 * The follower side of a broker: which {@link ReplicaFetcher} replicates which partition (Kafka's
 * {@code AbstractFetcherManager} / {@code ReplicaFetcherManager}).
 *
 * <p>A partition goes to the fetcher of its leader and of fetcher id
 * {@link #fetcherId(TopicPartition, int)} = {@code abs(31 * topic.hashCode() + partition) %
 * num.replica.fetchers} (Kafka's rule, so the same partitions share a connection as on Kafka).
 * Fetchers are created on demand, each with its own {@link LeaderEndpoint} from the factory (one
 * connection each), and closed as soon as they have no partition. Adding a partition that another
 * fetcher holds (its leader changed) moves it. {@link #resize} (dynamic {@code num.replica.fetchers})
 * takes every partition out of every fetcher, closes them and adds the partitions again under the
 * new count, as Kafka's {@code resizeThreadPool} does; each restarts at its log end offset.
 *
 * <p>Call order expected from the metadata publisher (Kafka's, via {@code ReplicaManager}):
 * {@link #removePartitions} for partitions this broker now leads or no longer hosts, before it
 * makes them leaders or deletes their logs; {@link #addPartitions} after {@code makeFollower}, on
 * every leader or leader-epoch change (KAFKA-7164). {@link #shutdown} last.
 *
 * <p>Thread-safety: all methods synchronized on the manager; a manager call may call into a
 * fetcher (lock order manager → fetcher, never the reverse).
 */
public final class ReplicaFetcherManager {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaFetcherManager.class);

    /** Starts the runner of a new fetcher and returns the handle that stops it. */
    @FunctionalInterface
    public interface RunnerFactory {
        AutoCloseable start(ReplicaFetcher fetcher);
    }

    /** A fetcher's identity: one per leader and fetcher id. */
    public record FetcherKey(int leaderId, int fetcherId) {
    }

    private record RunningFetcher(ReplicaFetcher fetcher, AutoCloseable runner) {
    }

    private final int brokerId;
    private final LongSupplier brokerEpoch;
    private final IntFunction<LeaderEndpoint> endpoints;
    private final RunnerFactory runners;
    private final ReplicaQuota followerQuota;
    private final FailedPartitions failedPartitions = new FailedPartitions();
    private final Map<FetcherKey, RunningFetcher> fetchers = new TreeMap<>(
        java.util.Comparator.comparingInt(FetcherKey::leaderId).thenComparingInt(FetcherKey::fetcherId));
    /** What each partition was added with, to add it again on a resize. */
    private final Map<TopicPartition, InitialFetchState> assignments = new HashMap<>();
    private ReplicaFetcherConfig config;
    private boolean shutDown;

    /**
     * A manager whose fetchers each run on a {@link ReplicaFetcherThread}.
     *
     * @param endpoints the leader endpoint for a broker id (a new connection per call)
     */
    public ReplicaFetcherManager(int brokerId, LongSupplier brokerEpoch, ReplicaFetcherConfig config, IntFunction<LeaderEndpoint> endpoints,
                                 Time time, BackgroundErrors errors) {
        this(brokerId, brokerEpoch, config, endpoints, time, errors, ReplicaQuota.UNBOUNDED);
    }

    /**
     * A manager whose fetchers each run on their endpoint's event loop ({@link EventLoopFetcherRunner})
     * or, for an endpoint without one, on a {@link ReplicaFetcherThread}, under the follower-side
     * replication throttle {@code followerQuota}.
     *
     * @param endpoints the leader endpoint for a broker id (a new connection per call)
     */
    public ReplicaFetcherManager(int brokerId, LongSupplier brokerEpoch, ReplicaFetcherConfig config, IntFunction<LeaderEndpoint> endpoints,
                                 Time time, BackgroundErrors errors, ReplicaQuota followerQuota) {
        this(brokerId, brokerEpoch, config, endpoints, fetcher -> {
            var loop = fetcher.leader().eventLoop();
            if (loop.isPresent()) {
                EventLoopFetcherRunner runner = new EventLoopFetcherRunner(fetcher, loop.get(), time, errors, config.fetchBackoffMs());
                runner.start();
                return runner;
            }
            ReplicaFetcherThread thread = new ReplicaFetcherThread(fetcher, time, errors, config.fetchBackoffMs());
            thread.start();
            return thread;
        }, followerQuota);
    }

    /** A manager with its own runners (tests poll the fetchers themselves). */
    public ReplicaFetcherManager(int brokerId, LongSupplier brokerEpoch, ReplicaFetcherConfig config, IntFunction<LeaderEndpoint> endpoints,
                                 RunnerFactory runners) {
        this(brokerId, brokerEpoch, config, endpoints, runners, ReplicaQuota.UNBOUNDED);
    }

    /** A manager with its own runners under a follower-side replication throttle. */
    public ReplicaFetcherManager(int brokerId, LongSupplier brokerEpoch, ReplicaFetcherConfig config, IntFunction<LeaderEndpoint> endpoints,
                                 RunnerFactory runners, ReplicaQuota followerQuota) {
        this.followerQuota = Objects.requireNonNull(followerQuota, "followerQuota");
        this.brokerId = brokerId;
        this.brokerEpoch = Objects.requireNonNull(brokerEpoch, "brokerEpoch");
        this.config = Objects.requireNonNull(config, "config");
        this.endpoints = Objects.requireNonNull(endpoints, "endpoints");
        this.runners = Objects.requireNonNull(runners, "runners");
    }

    /**
     * Kafka's {@code AbstractFetcherManager.getFetcherId}: {@code Utils.abs(31 * topic.hashCode() +
     * partition) % numFetchers}, where {@code Utils.abs(Integer.MIN_VALUE)} is 0.
     */
    public static int fetcherId(TopicPartition topicPartition, int numFetchers) {
        int hash = 31 * topicPartition.topic().hashCode() + topicPartition.partition();
        int abs = hash == Integer.MIN_VALUE ? 0 : Math.abs(hash);
        return abs % numFetchers;
    }

    /** Starts (or moves) fetching for each partition from its leader, at its log end offset. */
    public synchronized void addPartitions(Map<TopicPartition, InitialFetchState> states) {
        checkRunning();
        Map<FetcherKey, Map<TopicPartition, InitialFetchState>> byFetcher = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, InitialFetchState> entry : states.entrySet()) {
            FetcherKey key = new FetcherKey(entry.getValue().leaderId(), fetcherId(entry.getKey(), config.numFetchers()));
            byFetcher.computeIfAbsent(key, k -> new LinkedHashMap<>()).put(entry.getKey(), entry.getValue());
        }
        for (Map.Entry<FetcherKey, Map<TopicPartition, InitialFetchState>> group : byFetcher.entrySet()) {
            removeFromOtherFetchers(group.getValue().keySet(), group.getKey());
            fetcher(group.getKey()).addPartitions(group.getValue());
            assignments.putAll(group.getValue());
        }
        closeIdleFetchers();
    }

    /** Stops fetching the given partitions (they became leaders here, or left this broker). */
    public synchronized void removePartitions(Set<TopicPartition> topicPartitions) {
        for (RunningFetcher running : fetchers.values()) {
            running.fetcher().removePartitions(topicPartitions);
        }
        for (TopicPartition topicPartition : topicPartitions) {
            assignments.remove(topicPartition);
            failedPartitions.remove(topicPartition);
        }
        closeIdleFetchers();
    }

    /** Applies a new {@code num.replica.fetchers}: every partition is added again under the new count. */
    public synchronized void resize(int numFetchers) {
        checkRunning();
        if (numFetchers < 1) {
            throw new IllegalArgumentException("num.replica.fetchers must be at least 1: numFetchers=" + numFetchers);
        }
        if (numFetchers == config.numFetchers()) {
            return;
        }
        LOG.info("Resizing replica fetchers of broker {} from {} to {} per leader", brokerId, config.numFetchers(), numFetchers);
        Map<TopicPartition, InitialFetchState> active = new LinkedHashMap<>();
        for (RunningFetcher running : fetchers.values()) {
            for (TopicPartition topicPartition : running.fetcher().topicPartitions()) {
                active.put(topicPartition, assignments.get(topicPartition));
            }
            stop(running);
        }
        fetchers.clear();
        config = config.withNumFetchers(numFetchers);
        addPartitions(active);
    }

    /** Stops every fetcher. Later calls but this one throw. */
    public synchronized void shutdown() {
        if (shutDown) {
            return;
        }
        shutDown = true;
        for (RunningFetcher running : fetchers.values()) {
            stop(running);
        }
        fetchers.clear();
        assignments.clear();
    }

    public FailedPartitions failedPartitions() {
        return failedPartitions;
    }

    /** Kafka's {@code ReplicaFetcherManager MaxLag}: the largest lag over every fetcher's partitions. */
    public synchronized long maxLag() {
        long max = 0;
        for (RunningFetcher running : fetchers.values()) {
            max = Math.max(max, running.fetcher().maxLag());
        }
        return max;
    }

    /** Kafka's {@code DeadThreadCount}: fetcher threads that ended while their fetcher still runs (a bug; stays 0). */
    public synchronized int deadThreadCount() {
        int dead = 0;
        for (RunningFetcher running : fetchers.values()) {
            if (running.runner() instanceof ReplicaFetcherThread thread && !thread.isAlive()
                || running.runner() instanceof EventLoopFetcherRunner runner && !runner.isAlive()) {
                dead++;
            }
        }
        return dead;
    }

    public synchronized int numFetchers() {
        return config.numFetchers();
    }

    /** The running fetchers by key, a snapshot. */
    public synchronized Map<FetcherKey, ReplicaFetcher> fetchers() {
        Map<FetcherKey, ReplicaFetcher> snapshot = new LinkedHashMap<>();
        fetchers.forEach((key, running) -> snapshot.put(key, running.fetcher()));
        return snapshot;
    }

    /** The fetcher holding {@code topicPartition}, or null. */
    public synchronized FetcherKey fetcherOf(TopicPartition topicPartition) {
        for (Map.Entry<FetcherKey, RunningFetcher> entry : fetchers.entrySet()) {
            if (entry.getValue().fetcher().partitionStates().containsKey(topicPartition)) {
                return entry.getKey();
            }
        }
        return null;
    }

    private void removeFromOtherFetchers(Collection<TopicPartition> topicPartitions, FetcherKey target) {
        Set<TopicPartition> moving = Set.copyOf(topicPartitions);
        for (Map.Entry<FetcherKey, RunningFetcher> entry : fetchers.entrySet()) {
            if (!entry.getKey().equals(target)) {
                entry.getValue().fetcher().removePartitions(moving);
            }
        }
    }

    private ReplicaFetcher fetcher(FetcherKey key) {
        RunningFetcher running = fetchers.get(key);
        if (running == null) {
            LeaderEndpoint endpoint = endpoints.apply(key.leaderId());
            if (endpoint.leaderId() != key.leaderId()) {
                endpoint.close();
                throw new IllegalStateException("the endpoint factory gave leader " + endpoint.leaderId() + " for leader " + key.leaderId());
            }
            ReplicaFetcher fetcher = new ReplicaFetcher(key.fetcherId(), brokerId, brokerEpoch, endpoint, config, failedPartitions, followerQuota);
            AutoCloseable runner;
            try {
                runner = runners.start(fetcher);
            } catch (RuntimeException e) {
                fetcher.close();
                throw e;
            }
            running = new RunningFetcher(fetcher, runner);
            fetchers.put(key, running);
            LOG.info("Started {} on broker {}", fetcher.name(), brokerId);
        }
        return running.fetcher();
    }

    private void closeIdleFetchers() {
        List<FetcherKey> idle = new ArrayList<>();
        fetchers.forEach((key, running) -> {
            if (running.fetcher().partitionCount() == 0) {
                idle.add(key);
            }
        });
        for (FetcherKey key : idle) {
            stop(fetchers.remove(key));
        }
    }

    private void stop(RunningFetcher running) {
        try {
            running.runner().close();
        } catch (Exception e) {
            LOG.warn("Stopping the runner of {} failed", running.fetcher().name(), e);
        }
        running.fetcher().close();
        LOG.info("Stopped {} on broker {}", running.fetcher().name(), brokerId);
    }

    private void checkRunning() {
        if (shutDown) {
            throw new IllegalStateException("the replica fetcher manager of broker " + brokerId + " is shut down");
        }
    }
}
