package io.strata.tools.client;

import java.util.Comparator;

/** One partition of one topic, ordered by topic name, then partition index (the order the CLI prints them in). */
public record TopicPartition(String topic, int partition) implements Comparable<TopicPartition> {
    private static final Comparator<TopicPartition> ORDER = Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

    public TopicPartition {
        if (topic == null) {
            throw new IllegalArgumentException("topic must not be null: partition=" + partition);
        }
    }

    @Override
    public int compareTo(TopicPartition other) {
        return ORDER.compare(this, other);
    }

    /** "topic-partition", as Kafka names partitions in messages. */
    @Override
    public String toString() {
        return topic + "-" + partition;
    }
}
