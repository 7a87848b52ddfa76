package io.strata.server;

import java.util.Map;

/**
 * {@link TransactionsAcrossNodesTest} on a cluster formatted with transaction.version=1: the Java
 * producer adds partitions itself (AddPartitionsToTxn v3, AddOffsetsToTxn) and writes with
 * Produce v11, so each partition leader verifies its first write with the transaction coordinator
 * on another node (AddPartitionsToTxn v5, VerifyOnly) before appending it (KIP-890 part 1).
 */
class TransactionsV1AcrossNodesTest extends TransactionsAcrossNodesTest {
    @Override
    Map<String, String> overrides() {
        return Map.of("strata.format.features", "transaction.version=1");
    }
}
