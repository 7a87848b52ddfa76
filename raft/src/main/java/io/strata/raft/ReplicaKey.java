package io.strata.raft;

import io.strata.protocol.Uuids;

import java.util.UUID;

/**
 * A replica of the quorum as KIP-853 names it: its node id and the id of the metadata log
 * directory it lives in ({@code directory.id} in that directory's {@code meta.properties}). A
 * node whose disk was wiped comes back with a new directory id and is a new replica: it must not
 * count as the voter it replaced, whose votes and acknowledgements it has lost.
 *
 * @param id          the node id ({@code node.id})
 * @param directoryId the directory id, or {@link Uuids#ZERO} when unknown (static quorums,
 *                    kraft.version 0, and peers that send none)
 */
public record ReplicaKey(int id, UUID directoryId) {
    public ReplicaKey {
        if (id < 0) {
            throw new IllegalArgumentException("a replica id must not be negative: id=" + id);
        }
        if (directoryId == null) {
            throw new IllegalArgumentException("directoryId must not be null (use Uuids.ZERO): id=" + id);
        }
    }

    public static ReplicaKey of(int id) {
        return new ReplicaKey(id, Uuids.ZERO);
    }

    public boolean hasDirectoryId() {
        return !directoryId.equals(Uuids.ZERO);
    }

    /** Whether {@code other} can be this replica: the ids are equal and the directory ids too where both are known. */
    public boolean matches(ReplicaKey other) {
        return id == other.id && (!hasDirectoryId() || !other.hasDirectoryId() || directoryId.equals(other.directoryId));
    }

    @Override
    public String toString() {
        return hasDirectoryId() ? id + "@" + Uuids.toBase64(directoryId) : String.valueOf(id);
    }
}
