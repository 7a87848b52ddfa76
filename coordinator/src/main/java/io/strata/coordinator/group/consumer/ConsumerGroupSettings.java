package io.strata.coordinator.group.consumer;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Settings of consumer groups (KIP-848), with Kafka's names and defaults:
 * <ul>
 *   <li>{@code group.consumer.heartbeat.interval.ms} (5000): how often members heartbeat; between
 *       {@code group.consumer.min/max.heartbeat.interval.ms} (5000/15000).</li>
 *   <li>{@code group.consumer.session.timeout.ms} (45000): a member that has not heartbeated for
 *       this long is removed; between {@code group.consumer.min/max.session.timeout.ms} (45000/60000).</li>
 *   <li>{@code group.consumer.max.size} (unbounded): members per group.</li>
 *   <li>{@code group.consumer.assignors} (uniform, range): the server assignors; the first is the
 *       default. Kafka's class names are accepted for the two built-in ones.</li>
 * </ul>
 * The heartbeat interval must be below the session timeout, or members expire between heartbeats.
 */
public record ConsumerGroupSettings(int heartbeatIntervalMs, int sessionTimeoutMs, int maxSize, List<String> assignors) {
    public static final int DEFAULT_HEARTBEAT_INTERVAL_MS = 5000;
    public static final int DEFAULT_MIN_HEARTBEAT_INTERVAL_MS = 5000;
    public static final int DEFAULT_MAX_HEARTBEAT_INTERVAL_MS = 15_000;
    public static final int DEFAULT_SESSION_TIMEOUT_MS = 45_000;
    public static final int DEFAULT_MIN_SESSION_TIMEOUT_MS = 45_000;
    public static final int DEFAULT_MAX_SESSION_TIMEOUT_MS = 60_000;
    public static final List<String> DEFAULT_ASSIGNORS = List.of(UniformAssignor.NAME, RangeAssignor.NAME);

    public static final ConsumerGroupSettings DEFAULT = new ConsumerGroupSettings(DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_SESSION_TIMEOUT_MS,
        Integer.MAX_VALUE, DEFAULT_ASSIGNORS);

    public ConsumerGroupSettings {
        if (heartbeatIntervalMs <= 0) {
            throw new IllegalArgumentException("group.consumer.heartbeat.interval.ms must be positive: heartbeatIntervalMs=" + heartbeatIntervalMs);
        }
        if (heartbeatIntervalMs >= sessionTimeoutMs) {
            throw new IllegalArgumentException("group.consumer.heartbeat.interval.ms must be below group.consumer.session.timeout.ms: heartbeatIntervalMs="
                + heartbeatIntervalMs + ", sessionTimeoutMs=" + sessionTimeoutMs);
        }
        if (maxSize < 1) {
            throw new IllegalArgumentException("group.consumer.max.size must be at least 1: maxSize=" + maxSize);
        }
        if (assignors.isEmpty()) {
            throw new IllegalArgumentException("group.consumer.assignors must name at least one assignor");
        }
        List<String> names = new ArrayList<>();
        for (String assignor : assignors) {
            names.add(assignorName(assignor));
        }
        assignors = List.copyOf(names);
    }

    /**
     * Checks Kafka's bounds ({@code min <= value <= max}) of the heartbeat interval and session
     * timeout and returns the settings.
     */
    public static ConsumerGroupSettings of(int heartbeatIntervalMs, int minHeartbeatIntervalMs, int maxHeartbeatIntervalMs, int sessionTimeoutMs,
                                           int minSessionTimeoutMs, int maxSessionTimeoutMs, int maxSize, List<String> assignors) {
        if (heartbeatIntervalMs < minHeartbeatIntervalMs || heartbeatIntervalMs > maxHeartbeatIntervalMs) {
            throw new IllegalArgumentException("group.consumer.heartbeat.interval.ms must be within [" + minHeartbeatIntervalMs + ", "
                + maxHeartbeatIntervalMs + "]: heartbeatIntervalMs=" + heartbeatIntervalMs);
        }
        if (sessionTimeoutMs < minSessionTimeoutMs || sessionTimeoutMs > maxSessionTimeoutMs) {
            throw new IllegalArgumentException("group.consumer.session.timeout.ms must be within [" + minSessionTimeoutMs + ", "
                + maxSessionTimeoutMs + "]: sessionTimeoutMs=" + sessionTimeoutMs);
        }
        return new ConsumerGroupSettings(heartbeatIntervalMs, sessionTimeoutMs, maxSize, assignors);
    }

    /** The short name of an assignor given by short name or by Kafka's class name. */
    static String assignorName(String configured) {
        String trimmed = configured.trim();
        String simple = trimmed.substring(trimmed.lastIndexOf('.') + 1).toLowerCase(Locale.ROOT);
        switch (simple) {
            case UniformAssignor.NAME, "uniformassignor":
                return UniformAssignor.NAME;
            case RangeAssignor.NAME, "rangeassignor":
                return RangeAssignor.NAME;
            default:
                throw new IllegalArgumentException("unknown consumer group assignor: " + configured + " (supported: uniform, range)");
        }
    }

    public String defaultAssignor() {
        return assignors.get(0);
    }
}
