package io.strata.server.replica;

import io.strata.storage.FetchIsolation;

/**
 * The request-level parameters of a fetch.
 *
 * @param maxWaitMs  how long to wait for {@code minBytes}
 * @param minBytes   bytes to accumulate before answering
 * @param maxBytes   total response budget (already capped by {@code fetch.max.bytes})
 * @param isolation  HIGH_WATERMARK (read_uncommitted) or TXN_COMMITTED (read_committed) for consumers
 */
public record FetchParams(long maxWaitMs, int minBytes, int maxBytes, FetchIsolation isolation) {
}
