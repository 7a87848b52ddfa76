package io.strata.chaos.workload;

import java.nio.charset.StandardCharsets;

/**
 * How a history value travels in a Kafka record: the record value is the long in decimal ASCII (UTF-8), with a
 * null key. Text rather than 8 binary bytes so that kcat (one line per record) and a human with a console
 * consumer write and read the same thing. Every workload writes this encoding; the drain decodes it.
 *
 * <p>Stateless; thread-safe.
 */
public final class RecordValues {
    private RecordValues() {
    }

    /** @return the record value bytes of {@code value} */
    public static byte[] encode(long value) {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * @return the history value a record carries
     * @throws IllegalArgumentException if the bytes are null or not a decimal long (a record no workload wrote)
     */
    public static long decode(byte[] bytes) {
        if (bytes == null) {
            throw new IllegalArgumentException("record value is null; workloads write a decimal long");
        }
        String text = new String(bytes, StandardCharsets.US_ASCII);
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("record value is not a decimal long: value=" + text, e);
        }
    }

    /** @return the history's name of a partition, {@code topic-index} */
    public static String partition(String topic, int partition) {
        return topic + "-" + partition;
    }
}
