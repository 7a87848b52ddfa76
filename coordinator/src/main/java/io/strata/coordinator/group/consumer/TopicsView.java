package io.strata.coordinator.group.consumer;

import java.util.Collection;
import java.util.List;
import java.util.UUID;

/**
 * The topics the group coordinator assigns from: an immutable snapshot of the cluster's
 * topics (the broker adapts its metadata image). {@link #version()} changes whenever the set
 * of topics or a partition count changes, so a group re-resolves regular expressions and
 * re-checks its subscribed topics only when it moved.
 */
public interface TopicsView {
    /** One topic: its id, name and partition count. */
    record Topic(UUID id, String name, int partitionCount) {
    }

    /** Increases whenever the topics change; equal versions mean equal topics. */
    long version();

    /** The topic called {@code name}, or null. */
    Topic topic(String name);

    /** The topic with id {@code id}, or null. */
    Topic topic(UUID id);

    /** Every topic's name. */
    Collection<String> topicNames();

    /** No topics at all (before the broker wires its metadata in, and in tests). */
    TopicsView EMPTY = of(0, List.of());

    /** A snapshot of the given topics at {@code version}. */
    static TopicsView of(long version, Collection<Topic> topics) {
        return new StaticTopicsView(version, topics);
    }
}
