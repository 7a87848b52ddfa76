package io.strata.raft;

import java.util.List;
import java.util.Set;

/**
 * Who a replica is and where its voters come from.
 *
 * <ul>
 *   <li><b>Static</b> (kraft.version 0): {@code staticVoters} from {@code controller.quorum.voters}
 *       (or the single node's own id); the voters never change.</li>
 *   <li><b>Dynamic</b> (kraft.version 1, KIP-853): {@code staticVoters} empty; the voter set is read
 *       from the bootstrap checkpoint and the log. Until this replica knows a leader it fetches
 *       from {@code bootstrapServers} ({@code controller.quorum.bootstrap.servers}), which the
 *       transport knows by the ids {@code -2, -3, ...} ({@link #bootstrapId}) as Kafka's does.</li>
 * </ul>
 *
 * @param localKey         this replica's id and metadata log directory id
 * @param staticVoters     the static voters; empty for a dynamic quorum
 * @param listenerName     the listener the quorum talks on (the first of {@code controller.listener.names})
 * @param localEndpoints   this replica's own quorum endpoints (sent as leader endpoints, and in UpdateRaftVoter)
 * @param bootstrapServers where a dynamic replica first looks for the leader
 */
public record QuorumSetup(ReplicaKey localKey, Set<Integer> staticVoters, String listenerName, List<VoterSet.Endpoint> localEndpoints,
                          List<VoterSet.Endpoint> bootstrapServers) {
    public QuorumSetup {
        staticVoters = Set.copyOf(staticVoters);
        localEndpoints = List.copyOf(localEndpoints);
        bootstrapServers = List.copyOf(bootstrapServers);
    }

    public static QuorumSetup staticQuorum(int localId, Set<Integer> voters) {
        if (voters.isEmpty()) {
            throw new IllegalArgumentException("a static quorum needs at least one voter: localId=" + localId);
        }
        return new QuorumSetup(ReplicaKey.of(localId), voters, "CONTROLLER", List.of(), List.of());
    }

    public boolean isDynamic() {
        return staticVoters.isEmpty();
    }

    /** The transport id of bootstrap server {@code index}: -2, -3, ... (Kafka's convention; -1 means "none"). */
    public static int bootstrapId(int index) {
        return -2 - index;
    }
}
