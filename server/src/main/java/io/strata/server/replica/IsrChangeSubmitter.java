package io.strata.server.replica;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.storage.TopicPartition;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * The path of a leader's ISR changes to the controller ({@code io.strata.server.cluster.AlterPartitionManager}).
 * The future completes with the partition's answer; implementations retry transport failures
 * themselves and never block the caller.
 */
@FunctionalInterface
public interface IsrChangeSubmitter {
    CompletableFuture<AlterPartitionResponseData.PartitionData> submit(TopicPartition topicPartition, UUID topicId,
                                                                        AlterPartitionRequestData.PartitionData change);

    /** No path to a controller: every change is answered OPERATION_NOT_ATTEMPTED (the partition tries again at its next check). */
    IsrChangeSubmitter NOT_ATTEMPTED = (topicPartition, topicId, change) -> CompletableFuture.completedFuture(
        new AlterPartitionResponseData.PartitionData().setPartitionIndex(change.partitionIndex())
            .setErrorCode(ErrorCode.OPERATION_NOT_ATTEMPTED.code()));
}
