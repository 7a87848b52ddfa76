package io.strata.server.replica.fetcher;

import io.strata.server.replica.FollowerFetching;
import io.strata.server.replica.Partition;
import io.strata.storage.TopicPartition;

import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * The replica manager's {@link FollowerFetching} over a {@link ReplicaFetcherManager}: a partition
 * this node follows is fetched from its leader at its log end (a partition with no leader is not
 * fetched until the image names one); a partition this node leads or dropped stops being fetched
 * before the caller goes on ({@link ReplicaFetcherManager#removePartitions} waits for a response
 * being applied). Closing shuts the fetchers down, then the endpoints' connections.
 *
 * <p>Thread-safe (the manager is).
 */
public final class ReplicaFetchers implements FollowerFetching, AutoCloseable {
    private final int localBrokerId;
    private final ReplicaFetcherManager manager;
    private final AutoCloseable endpoints;
    private final Consumer<TopicPartition> onFollowerHighWatermark;
    private final LongConsumer replicationBytesIn;
    private final LongConsumer reassignmentBytesIn;

    /**
     * @param endpoints               closed after the manager (the leader endpoints' shared connections)
     * @param onFollowerHighWatermark called when a follower's high watermark moved
     */
    public ReplicaFetchers(int localBrokerId, ReplicaFetcherManager manager, AutoCloseable endpoints, Consumer<TopicPartition> onFollowerHighWatermark) {
        this(localBrokerId, manager, endpoints, onFollowerHighWatermark, bytes -> { });
    }

    /**
     * @param endpoints               closed after the manager (the leader endpoints' shared connections)
     * @param onFollowerHighWatermark called when a follower's high watermark moved
     * @param replicationBytesIn      told the bytes of every follower append (on the fetcher threads; must not block)
     */
    public ReplicaFetchers(int localBrokerId, ReplicaFetcherManager manager, AutoCloseable endpoints, Consumer<TopicPartition> onFollowerHighWatermark,
                           LongConsumer replicationBytesIn) {
        this(localBrokerId, manager, endpoints, onFollowerHighWatermark, replicationBytesIn, bytes -> { });
    }

    /**
     * @param endpoints               closed after the manager (the leader endpoints' shared connections)
     * @param onFollowerHighWatermark called when a follower's high watermark moved
     * @param replicationBytesIn      told the bytes of every follower append (on the fetcher threads; must not block)
     * @param reassignmentBytesIn     told the bytes of every follower append while this node is an adding replica of the
     *                                partition's reassignment (on the fetcher threads; must not block)
     */
    public ReplicaFetchers(int localBrokerId, ReplicaFetcherManager manager, AutoCloseable endpoints, Consumer<TopicPartition> onFollowerHighWatermark,
                           LongConsumer replicationBytesIn, LongConsumer reassignmentBytesIn) {
        this.localBrokerId = localBrokerId;
        this.manager = manager;
        this.endpoints = endpoints;
        this.onFollowerHighWatermark = onFollowerHighWatermark;
        this.replicationBytesIn = replicationBytesIn;
        this.reassignmentBytesIn = reassignmentBytesIn;
    }

    public ReplicaFetcherManager manager() {
        return manager;
    }

    @Override
    public void follow(Collection<Partition> partitions) {
        Map<TopicPartition, InitialFetchState> fetch = new LinkedHashMap<>();
        Set<TopicPartition> leaderless = new HashSet<>();
        for (Partition partition : partitions) {
            int leader = partition.leaderId();
            if (leader < 0 || leader == localBrokerId) {
                leaderless.add(partition.topicPartition());
            } else {
                fetch.put(partition.topicPartition(), new InitialFetchState(partition.topicId(), leader, partition.leaderEpoch(),
                    new PartitionFollowerLog(partition, onFollowerHighWatermark, replicationBytesIn, reassignmentBytesIn)));
            }
        }
        if (!leaderless.isEmpty()) {
            manager.removePartitions(leaderless);
        }
        if (!fetch.isEmpty()) {
            manager.addPartitions(fetch);
        }
    }

    @Override
    public void unfollow(Collection<TopicPartition> partitions) {
        manager.removePartitions(new HashSet<>(partitions));
    }

    @Override
    public void close() throws Exception {
        try {
            manager.shutdown();
        } finally {
            endpoints.close();
        }
    }
}
