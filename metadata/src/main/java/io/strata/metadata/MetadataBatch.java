package io.strata.metadata;

import io.strata.protocol.ApiMessage;

import java.util.List;

/**
 * One committed batch of the metadata log, decoded: the records of one controller operation
 * (empty for a control batch, such as a leader's LEADER_CHANGE), its last offset and the epoch
 * of the leader that wrote it; {@code sizeInBytes} is the batch's size in the log.
 */
public record MetadataBatch(List<ApiMessage> records, long baseOffset, long lastOffset, int epoch, long appendTimestampMs, boolean control,
                            long sizeInBytes) {
}
