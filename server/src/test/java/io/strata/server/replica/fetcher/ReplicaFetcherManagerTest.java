package io.strata.server.replica.fetcher;

import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoop;
import io.strata.common.BackgroundErrors;
import io.strata.common.Time;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.message.ListOffsetsRequestData;
import io.strata.protocol.message.ListOffsetsResponseData;
import io.strata.protocol.message.OffsetForLeaderEpochRequestData;
import io.strata.protocol.message.OffsetForLeaderEpochResponseData;
import io.strata.storage.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

class ReplicaFetcherManagerTest {
    private static final UUID TOPIC_ID = new UUID(3, 4);
    private static final int BROKER_ID = 1;
    private static final ReplicaFetcherConfig CONFIG = ReplicaFetcherConfig.defaults();

    /** Endpoints per leader, each a new FakeLeader as the real factory opens a new connection. */
    private final Map<Integer, List<FakeLeader>> endpoints = new HashMap<>();
    private final List<AutoCloseable> runners = new ArrayList<>();

    private FakeLeader newEndpoint(int leaderId) {
        FakeLeader leader = new FakeLeader(leaderId);
        endpoints.computeIfAbsent(leaderId, id -> new ArrayList<>()).add(leader);
        return leader;
    }

    private ReplicaFetcherManager manager(ReplicaFetcherConfig config) {
        return new ReplicaFetcherManager(BROKER_ID, () -> 9L, config, this::newEndpoint, fetcher -> {
            AutoCloseable runner = () -> { };
            runners.add(runner);
            return runner;
        });
    }

    private static InitialFetchState state(TopicPartition topicPartition, int leaderId, int epoch) {
        return new InitialFetchState(TOPIC_ID, leaderId, epoch, new InMemoryLog(topicPartition, TOPIC_ID));
    }

    @Test
    void fetcherIdIsKafkasHashOfTopicAndPartition() {
        // "a".hashCode() = 97: 31 * 97 + 0 = 3007 = 3 * 1002 + 1.
        assertThat(ReplicaFetcherManager.fetcherId(new TopicPartition("a", 0), 3)).isEqualTo(1);
        assertThat(ReplicaFetcherManager.fetcherId(new TopicPartition("a", 2), 3)).isEqualTo(0);
        // "polygenelubricants".hashCode() is Integer.MIN_VALUE, and so is 31 times it: Kafka's Utils.abs makes that 0.
        assertThat("polygenelubricants".hashCode()).isEqualTo(Integer.MIN_VALUE);
        assertThat(ReplicaFetcherManager.fetcherId(new TopicPartition("polygenelubricants", 0), 3)).isZero();
        // MIN_VALUE + 1 → abs = Integer.MAX_VALUE = 2147483647 = 3 * 715827882 + 1.
        assertThat(ReplicaFetcherManager.fetcherId(new TopicPartition("polygenelubricants", 1), 3)).isEqualTo(1);
        for (int partition = 0; partition < 100; partition++) {
            assertThat(ReplicaFetcherManager.fetcherId(new TopicPartition("orders-" + partition, partition), 1)).isZero();
        }
    }

    @Test
    void partitionsOfOneLeaderShareOneFetcherWhichClosesWhenEmpty() {
        ReplicaFetcherManager manager = manager(CONFIG);
        Map<TopicPartition, InitialFetchState> states = new LinkedHashMap<>();
        for (int partition = 0; partition < 4; partition++) {
            TopicPartition topicPartition = new TopicPartition("orders", partition);
            states.put(topicPartition, state(topicPartition, 2, 1));
        }
        manager.addPartitions(states);
        assertThat(manager.fetchers()).containsOnlyKeys(new ReplicaFetcherManager.FetcherKey(2, 0));
        assertThat(manager.fetchers().get(new ReplicaFetcherManager.FetcherKey(2, 0)).partitionCount()).isEqualTo(4);
        assertThat(manager.fetchers().get(new ReplicaFetcherManager.FetcherKey(2, 0)).name()).isEqualTo("ReplicaFetcherThread-0-2");

        manager.removePartitions(Set.of(new TopicPartition("orders", 0), new TopicPartition("orders", 1)));
        assertThat(manager.fetchers().get(new ReplicaFetcherManager.FetcherKey(2, 0)).partitionCount()).isEqualTo(2);
        manager.removePartitions(Set.of(new TopicPartition("orders", 2), new TopicPartition("orders", 3)));
        assertThat(manager.fetchers()).isEmpty();
        assertThat(endpoints.get(2)).hasSize(1).allMatch(FakeLeader::isClosed);
    }

    @Test
    void aLeaderChangeMovesThePartitionToTheNewLeadersFetcher() {
        ReplicaFetcherManager manager = manager(CONFIG);
        TopicPartition moving = new TopicPartition("orders", 0);
        TopicPartition staying = new TopicPartition("orders", 1);
        manager.addPartitions(Map.of(moving, state(moving, 2, 1), staying, state(staying, 2, 1)));

        manager.addPartitions(Map.of(moving, state(moving, 3, 2)));
        assertThat(manager.fetcherOf(moving)).isEqualTo(new ReplicaFetcherManager.FetcherKey(3, 0));
        assertThat(manager.fetcherOf(staying)).isEqualTo(new ReplicaFetcherManager.FetcherKey(2, 0));
        assertThat(manager.fetchers().get(new ReplicaFetcherManager.FetcherKey(3, 0)).partitionStates().get(moving).currentLeaderEpoch())
            .isEqualTo(2);

        manager.addPartitions(Map.of(staying, state(staying, 3, 2)));
        assertThat(manager.fetchers()).containsOnlyKeys(new ReplicaFetcherManager.FetcherKey(3, 0));
        assertThat(endpoints.get(2)).allMatch(FakeLeader::isClosed);
        assertThat(endpoints.get(3)).noneMatch(FakeLeader::isClosed);
    }

    @Test
    void resizeSpreadsThePartitionsOverTheNewNumberOfFetchers() {
        ReplicaFetcherManager manager = manager(CONFIG);
        Map<TopicPartition, InitialFetchState> states = new LinkedHashMap<>();
        for (int partition = 0; partition < 12; partition++) {
            TopicPartition topicPartition = new TopicPartition("orders", partition);
            states.put(topicPartition, state(topicPartition, 2, 1));
        }
        manager.addPartitions(states);
        assertThat(manager.fetchers()).hasSize(1);

        manager.resize(3);
        assertThat(manager.numFetchers()).isEqualTo(3);
        assertThat(manager.fetchers()).containsOnlyKeys(new ReplicaFetcherManager.FetcherKey(2, 0), new ReplicaFetcherManager.FetcherKey(2, 1),
            new ReplicaFetcherManager.FetcherKey(2, 2));
        int total = 0;
        for (TopicPartition topicPartition : states.keySet()) {
            assertThat(manager.fetcherOf(topicPartition))
                .isEqualTo(new ReplicaFetcherManager.FetcherKey(2, ReplicaFetcherManager.fetcherId(topicPartition, 3)));
        }
        for (ReplicaFetcher fetcher : manager.fetchers().values()) {
            total += fetcher.partitionCount();
        }
        assertThat(total).isEqualTo(12);
        assertThat(endpoints.get(2).get(0).isClosed()).isTrue();

        manager.resize(1);
        assertThat(manager.fetchers()).containsOnlyKeys(new ReplicaFetcherManager.FetcherKey(2, 0));
        assertThat(manager.fetchers().get(new ReplicaFetcherManager.FetcherKey(2, 0)).partitionCount()).isEqualTo(12);
        assertThatThrownBy(() -> manager.resize(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void resizeKeepsEveryPartitionsFetchPositionAndEpochWithoutTruncating() {
        ReplicaFetcherManager manager = manager(CONFIG);
        Map<TopicPartition, InitialFetchState> states = new LinkedHashMap<>();
        Map<TopicPartition, InMemoryLog> logs = new LinkedHashMap<>();
        for (int partition = 0; partition < 6; partition++) {
            TopicPartition topicPartition = new TopicPartition("orders", partition);
            InMemoryLog log = new InMemoryLog(topicPartition, TOPIC_ID).appendBatch(0, 2).appendBatch(1, partition + 1);
            logs.put(topicPartition, log);
            states.put(topicPartition, new InitialFetchState(TOPIC_ID, 2, 1, log));
        }
        manager.addPartitions(states);

        manager.resize(2);
        for (Map.Entry<TopicPartition, InMemoryLog> entry : logs.entrySet()) {
            TopicPartition topicPartition = entry.getKey();
            ReplicaFetcherManager.FetcherKey key = manager.fetcherOf(topicPartition);
            assertThat(key).isEqualTo(new ReplicaFetcherManager.FetcherKey(2, ReplicaFetcherManager.fetcherId(topicPartition, 2)));
            PartitionFetchState state = manager.fetchers().get(key).partitionStates().get(topicPartition);
            assertThat(state.fetchOffset()).as("%s keeps its position", topicPartition).isEqualTo(3 + topicPartition.partition());
            assertThat(state.currentLeaderEpoch()).isEqualTo(1);
            assertThat(state.lastFetchedEpoch()).hasValue(1);
            assertThat(state.state()).as("no truncation round before fetching again").isEqualTo(PartitionFetchState.State.FETCHING);
            assertThat(entry.getValue().truncations()).isZero();
            assertThat(entry.getValue().logEndOffset()).isEqualTo(3 + topicPartition.partition());
        }
    }

    @Test
    void reAddingAFailedPartitionClearsItsFailure() {
        ReplicaFetcherManager manager = manager(CONFIG);
        TopicPartition topicPartition = new TopicPartition("orders", 0);
        manager.addPartitions(Map.of(topicPartition, state(topicPartition, 2, 1)));
        FakeLeader leader = endpoints.get(2).get(0);
        leader.lead(new InMemoryLog(topicPartition, TOPIC_ID), 2); // the leader moved on to epoch 2: FENCED
        ReplicaFetcher fetcher = manager.fetchers().get(new ReplicaFetcherManager.FetcherKey(2, 0));
        fetcher.poll(0);
        fetcher.poll(0);
        assertThat(manager.failedPartitions().partitions()).containsExactly(topicPartition);

        manager.addPartitions(Map.of(topicPartition, state(topicPartition, 2, 2)));
        assertThat(manager.failedPartitions().size()).isZero();
        assertThat(manager.fetcherOf(topicPartition)).isEqualTo(new ReplicaFetcherManager.FetcherKey(2, 0));
    }

    @Test
    void shutdownStopsEveryFetcher() {
        ReplicaFetcherManager manager = manager(CONFIG);
        TopicPartition a = new TopicPartition("orders", 0);
        TopicPartition b = new TopicPartition("orders", 1);
        manager.addPartitions(Map.of(a, state(a, 2, 1), b, state(b, 3, 1)));
        manager.shutdown();
        assertThat(manager.fetchers()).isEmpty();
        assertThat(endpoints.values()).allSatisfy(list -> assertThat(list).allMatch(FakeLeader::isClosed));
        assertThatThrownBy(() -> manager.addPartitions(Map.of(a, state(a, 2, 1)))).isInstanceOf(IllegalStateException.class);
    }

    /** The real runner: a daemon thread per fetcher that replicates until the follower matches the leader. */
    @Test
    void fetcherThreadsReplicateUntilTheLogsMatch() {
        TopicPartition topicPartition = new TopicPartition("orders", 0);
        InMemoryLog leaderLog = new InMemoryLog(topicPartition, TOPIC_ID).appendBatch(1, 5).appendBatch(1, 5);
        InMemoryLog follower = new InMemoryLog(topicPartition, TOPIC_ID);
        BackgroundErrors errors = new BackgroundErrors();
        ReplicaFetcherManager manager = new ReplicaFetcherManager(BROKER_ID, () -> 9L, CONFIG, leaderId -> {
            FakeLeader leader = new FakeLeader(leaderId);
            leader.lead(leaderLog, 1).highWatermark = 10;
            return leader;
        }, Time.SYSTEM, errors);
        try {
            manager.addPartitions(Map.of(topicPartition, new InitialFetchState(TOPIC_ID, 2, 1, follower)));
            waitFor(() -> follower.logEndOffset() == 10 && follower.highWatermark() == 10, "the follower caught up");
            assertThat(follower.contents()).isEqualTo(leaderLog.contents());
            assertThat(Thread.getAllStackTraces().keySet()).anyMatch(thread -> thread.getName().equals("ReplicaFetcherThread-0-2")
                && thread.isDaemon());
            assertThat(errors.count(ReplicaFetcherThread.TASK)).isZero();
        } finally {
            manager.shutdown();
        }
        waitFor(() -> Thread.getAllStackTraces().keySet().stream().noneMatch(thread -> thread.getName().equals("ReplicaFetcherThread-0-2")),
            "the fetcher thread stopped");
    }

    /**
     * An endpoint with an event loop of its own: the fetcher is polled on that loop (every request is
     * sent from it, so no thread hand-off per round trip), replicates to the end, and polls no more
     * once the manager has shut down.
     */
    @Test
    void fetchersOfAnEndpointWithAnEventLoopArePolledOnThatLoop() {
        TopicPartition topicPartition = new TopicPartition("orders", 0);
        InMemoryLog leaderLog = new InMemoryLog(topicPartition, TOPIC_ID).appendBatch(1, 5).appendBatch(1, 5).appendBatch(1, 5);
        InMemoryLog follower = new InMemoryLog(topicPartition, TOPIC_ID);
        BackgroundErrors errors = new BackgroundErrors();
        DefaultEventLoopGroup group = new DefaultEventLoopGroup(1);
        EventLoop loop = group.next();
        Set<String> sendingThreads = ConcurrentHashMap.newKeySet();
        AtomicInteger fetches = new AtomicInteger();
        ReplicaFetcherManager manager = new ReplicaFetcherManager(BROKER_ID, () -> 9L, CONFIG, leaderId -> {
            FakeLeader leader = new FakeLeader(leaderId);
            leader.lead(leaderLog, 1).highWatermark = 15;
            return new OnLoop(leader, loop, () -> {
                sendingThreads.add(loop.inEventLoop() ? "loop" : Thread.currentThread().getName());
                fetches.incrementAndGet();
            });
        }, Time.SYSTEM, errors);
        try {
            manager.addPartitions(Map.of(topicPartition, new InitialFetchState(TOPIC_ID, 2, 1, follower)));
            waitFor(() -> follower.logEndOffset() == 15 && follower.highWatermark() == 15, "the follower caught up");
            assertThat(follower.contents()).isEqualTo(leaderLog.contents());
            assertThat(sendingThreads).containsExactly("loop");
            assertThat(manager.deadThreadCount()).isZero();
            assertThat(errors.count(ReplicaFetcherThread.TASK)).isZero();
        } finally {
            manager.shutdown();
        }
        int afterShutdown = fetches.get();
        waitFor(group::isTerminated, "the endpoint closed its loop");
        assertThat(fetches.get()).isEqualTo(afterShutdown);
        assertThat(Thread.getAllStackTraces().keySet()).noneMatch(thread -> thread.getName().equals("ReplicaFetcherThread-0-2"));
    }

    /** A {@link FakeLeader} whose connection "lives" on {@code loop}; closing it ends the loop, as RemoteLeaderEndpoint does. */
    private record OnLoop(FakeLeader leader, EventLoop loop, Runnable onFetch) implements LeaderEndpoint {
        @Override
        public int leaderId() {
            return leader.leaderId();
        }

        @Override
        public boolean isTruncationOnFetchSupported() {
            return leader.isTruncationOnFetchSupported();
        }

        @Override
        public Optional<EventLoop> eventLoop() {
            return Optional.of(loop);
        }

        @Override
        public CompletableFuture<FetchResponseData> fetch(FetchRequestData request) {
            onFetch.run();
            return leader.fetch(request);
        }

        @Override
        public CompletableFuture<OffsetForLeaderEpochResponseData> fetchEpochEndOffsets(OffsetForLeaderEpochRequestData request) {
            return leader.fetchEpochEndOffsets(request);
        }

        @Override
        public CompletableFuture<ListOffsetsResponseData> listOffsets(ListOffsetsRequestData request) {
            return leader.listOffsets(request);
        }

        @Override
        public void close() {
            leader.close();
            loop.parent().shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    private static void waitFor(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting until " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
        }
    }
}
