package io.strata.server.replica;

import io.strata.storage.TopicPartition;

import java.util.Collection;

/**
 * Where the replica manager hands the partitions this node follows: the replica fetchers
 * ({@code io.strata.server.replica.fetcher}) implement it. Called on the metadata publishing
 * thread after the partitions' state changed; implementations must not block on I/O.
 */
public interface FollowerFetching {
    /**
     * Starts (or restarts) fetching for partitions that became followers or whose leader or leader
     * epoch changed; each {@link Partition} names its leader, leader epoch, topic id and log.
     */
    void follow(Collection<Partition> partitions);

    /** Stops fetching for partitions that this node now leads or no longer hosts. */
    void unfollow(Collection<TopicPartition> partitions);

    /** No fetchers: a single node, or until the fetchers are installed. */
    FollowerFetching NONE = new FollowerFetching() {
        @Override
        public void follow(Collection<Partition> partitions) {
        }

        @Override
        public void unfollow(Collection<TopicPartition> partitions) {
        }
    };
}
