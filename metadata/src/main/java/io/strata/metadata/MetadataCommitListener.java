package io.strata.metadata;

import io.strata.protocol.ApiMessage;
import io.strata.raft.CommitListener;
import io.strata.raft.OffsetAndEpoch;

import java.util.List;

/**
 * Decodes what the quorum committed once, on the quorum's thread, and hands it to this node's
 * metadata loader and, on a controller, to its controller (each applies it on its own thread).
 * A record that cannot be decoded is a damaged log or newer software: it fails on the quorum's
 * thread, which stops the replica rather than let this node apply a different history.
 */
public final class MetadataCommitListener implements CommitListener {
    private final MetadataLoader loader;
    private final QuorumController controller;

    /** @param controller null on a node without the controller role */
    public MetadataCommitListener(MetadataLoader loader, QuorumController controller) {
        this.loader = loader;
        this.controller = controller;
    }

    @Override
    public void handleCommit(CommittedBatch batch) {
        List<ApiMessage> records = batch.control() ? List.of() : MetadataRecords.decode(batch.values());
        MetadataBatch decoded = new MetadataBatch(records, batch.baseOffset(), batch.lastOffset(), batch.epoch(), batch.appendTimestampMs(),
            batch.control(), batch.sizeInBytes());
        if (controller != null) {
            controller.handleCommit(decoded);
        }
        loader.handleCommit(decoded);
    }

    @Override
    public void handleSnapshot(OffsetAndEpoch snapshotId, List<byte[]> values, long lastContainedLogTimestampMs) {
        List<ApiMessage> records = MetadataRecords.decode(values);
        if (controller != null) {
            controller.handleSnapshot(snapshotId.offset(), records);
        }
        loader.handleSnapshot(snapshotId.offset(), snapshotId.epoch(), records);
    }

    @Override
    public void handleLeaderChange(int epoch, int leaderId) {
        if (controller != null) {
            controller.handleLeaderChange(epoch, leaderId);
        }
    }
}
