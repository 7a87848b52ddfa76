package io.strata.raft;

import io.strata.protocol.ApiMessage;
import io.strata.protocol.message.ApiMessageType;

/**
 * One request or response between replicas. A response carries the correlation id of its
 * request and goes back to the request's source.
 */
public record RaftMessage(int source, int destination, long correlationId, ApiMessage data, boolean isRequest) {
    /** Vote with pre-vote (KIP-996). */
    public static final short VOTE_VERSION = 2;
    /** BeginQuorumEpoch with leader endpoints (KIP-853). */
    public static final short BEGIN_QUORUM_EPOCH_VERSION = 1;
    public static final short END_QUORUM_EPOCH_VERSION = 1;
    /** Fetch with replica state and directory ids, as Kafka 4's KRaft replicas send it. */
    public static final short FETCH_VERSION = 17;
    /** FetchSnapshot with the replica directory id and leader endpoints (KIP-853), as Kafka's controllers send it. */
    public static final short FETCH_SNAPSHOT_VERSION = 1;
    /** UpdateRaftVoter (KIP-853): a voter tells the leader its endpoints. */
    public static final short UPDATE_RAFT_VOTER_VERSION = 0;
    /** ApiVersions, which a leader sends to a voter it is adding, for the kraft.version it supports. */
    public static final short API_VERSIONS_VERSION = 3;

    /** The version a replica sends an API at (the one Kafka 4.4's controllers use). */
    public static short version(ApiMessageType api) {
        return switch (api) {
            case VOTE -> VOTE_VERSION;
            case BEGIN_QUORUM_EPOCH -> BEGIN_QUORUM_EPOCH_VERSION;
            case END_QUORUM_EPOCH -> END_QUORUM_EPOCH_VERSION;
            case FETCH -> FETCH_VERSION;
            case FETCH_SNAPSHOT -> FETCH_SNAPSHOT_VERSION;
            case UPDATE_RAFT_VOTER -> UPDATE_RAFT_VOTER_VERSION;
            case API_VERSIONS -> API_VERSIONS_VERSION;
            default -> throw new IllegalArgumentException("not a quorum API: " + api.apiName);
        };
    }

    public ApiMessageType api() {
        return ApiMessageType.fromApiKey(data.apiKey());
    }

    @Override
    public String toString() {
        return (isRequest ? "request " : "response ") + api().apiName + " #" + correlationId + " " + source + "->" + destination;
    }
}
