package io.strata.storage;

import java.util.Objects;

/**
 * A topic name and partition number, as used in log directory names ({@code <topic>-<partition>})
 * and in the offset checkpoint files.
 *
 * @param topic     the topic name; never empty
 * @param partition the partition number; never negative
 */
public record TopicPartition(String topic, int partition) {

    public TopicPartition {
        Objects.requireNonNull(topic, "topic");
        if (topic.isEmpty()) {
            throw new IllegalArgumentException("topic must not be empty: partition=" + partition);
        }
        if (partition < 0) {
            throw new IllegalArgumentException("partition must not be negative: topic=" + topic + ", partition=" + partition);
        }
    }

    /**
     * Parses a log directory name such as {@code orders-3}. Topic names may themselves contain
     * '-', so the partition is whatever follows the last '-'.
     *
     * @throws IllegalArgumentException if there is no '-', the topic part is empty, or the
     *                                  partition part is not a canonical non-negative decimal int
     */
    public static TopicPartition parse(String dirName) {
        Objects.requireNonNull(dirName, "dirName");
        int separator = dirName.lastIndexOf('-');
        if (separator <= 0 || separator == dirName.length() - 1) {
            throw new IllegalArgumentException("log directory name is not <topic>-<partition>: dirName=" + dirName);
        }
        String partitionText = dirName.substring(separator + 1);
        if (!isCanonicalNonNegativeInt(partitionText)) {
            throw new IllegalArgumentException("partition is not a non-negative int: dirName=" + dirName);
        }
        return new TopicPartition(dirName.substring(0, separator), Integer.parseInt(partitionText));
    }

    private static boolean isCanonicalNonNegativeInt(String text) {
        if (text.isEmpty() || text.length() > 10 || (text.length() > 1 && text.charAt(0) == '0')) {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return Long.parseLong(text) <= Integer.MAX_VALUE;
    }

    @Override
    public String toString() {
        return topic + "-" + partition;
    }
}
