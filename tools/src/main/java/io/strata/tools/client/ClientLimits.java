package io.strata.tools.client;

/**
 * Every size and time limit of the CLI's client, in one place, with the reason for each. Where
 * Kafka's Java client has a setting for the same thing, the default is Kafka's, so the CLI
 * behaves like any client against the same broker. The relationships between the limits are
 * checked when this class loads.
 */
public final class ClientLimits {
    /** Kafka's {@code fetch.max.bytes} default: the most record bytes one Fetch response may carry. */
    public static final int FETCH_MAX_BYTES = 50 * 1024 * 1024;

    /** Kafka's {@code max.partition.fetch.bytes} default. */
    public static final int PARTITION_FETCH_MAX_BYTES = 1024 * 1024;

    /**
     * The largest response frame read. A Fetch response holds at most {@link #FETCH_MAX_BYTES}
     * of records (or one batch above it, by KIP-74) plus headers; a size prefix above this is
     * a broken or hostile peer and is refused before anything is allocated.
     */
    public static final int MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

    /** Kafka's {@code max.request.size} default: Produce requests are filled up to this. */
    public static final int MAX_REQUEST_BYTES = 1024 * 1024;

    /** Kafka's {@code batch.size} default: a partition's batch is closed when it would grow past this. */
    public static final int DEFAULT_BATCH_SIZE_BYTES = 16 * 1024;

    /** Kafka's {@code request.timeout.ms} default. */
    public static final int DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

    /** Kafka's {@code socket.connection.setup.timeout.max.ms} default. */
    public static final int CONNECT_TIMEOUT_MS = 30_000;

    /** Kafka's {@code delivery.timeout.ms} default: how long a batch may be retried before the producer gives up. */
    public static final int DEFAULT_DELIVERY_TIMEOUT_MS = 120_000;

    /** Kafka's {@code retry.backoff.ms} default: the pause before retrying after a retriable error. */
    public static final long RETRY_BACKOFF_MS = 100;

    /**
     * Kafka's {@code fetch.max.wait.ms} default: how long the broker may hold a Fetch for data.
     * It must stay well below the request timeout, or an idle Fetch would look like a dead broker.
     */
    public static final int FETCH_MAX_WAIT_MS = 500;

    /** How long admin requests let the broker work (the {@code timeoutMs} field of CreateTopics and friends). */
    public static final int ADMIN_OPERATION_TIMEOUT_MS = 30_000;

    private ClientLimits() {
    }

    static {
        check(PARTITION_FETCH_MAX_BYTES <= FETCH_MAX_BYTES, "partition fetch bytes must fit a fetch");
        check(FETCH_MAX_BYTES < MAX_RESPONSE_BYTES, "a full fetch must fit the response limit with room for headers");
        check(DEFAULT_BATCH_SIZE_BYTES <= MAX_REQUEST_BYTES, "a full batch must fit a request");
        check(FETCH_MAX_WAIT_MS * 10 <= DEFAULT_REQUEST_TIMEOUT_MS, "an idle fetch must not approach the request timeout");
        check(DEFAULT_REQUEST_TIMEOUT_MS <= DEFAULT_DELIVERY_TIMEOUT_MS, "a produce request must be able to complete before delivery times out");
    }

    private static void check(boolean condition, String rule) {
        if (!condition) {
            throw new IllegalStateException("client limits violate: " + rule);
        }
    }
}
