package io.strata.server.cluster;

import io.strata.protocol.ApiMessage;
import io.strata.protocol.message.ApiMessageType;
import io.strata.raft.RaftNode;
import io.strata.server.config.QuorumVoter;
import io.strata.server.network.client.InterBrokerClient;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The static voters of the metadata quorum ({@code controller.quorum.voters}) and the quorum's
 * own way to reach them: its requests go to a voter's controller endpoint over an
 * {@link InterBrokerClient} used for nothing else (broker-to-controller requests have their own).
 */
public final class QuorumPeers implements RaftNode.RequestSender {
    private final Map<Integer, InterBrokerClient.Endpoint> voters = new LinkedHashMap<>();
    private final InterBrokerClient client;

    public QuorumPeers(List<QuorumVoter> configured, InterBrokerClient client) {
        for (QuorumVoter voter : configured) {
            voters.put(voter.id(), new InterBrokerClient.Endpoint(voter.id(), voter.host(), voter.port()));
        }
        this.client = client;
    }

    public Set<Integer> voterIds() {
        return voters.keySet();
    }

    /** Every voter's controller endpoint, in configuration order. */
    public List<InterBrokerClient.Endpoint> endpoints() {
        return List.copyOf(voters.values());
    }

    /** The controller endpoint of voter {@code id}, or null if it is not a voter. */
    public InterBrokerClient.Endpoint endpoint(int id) {
        return voters.get(id);
    }

    @Override
    public CompletableFuture<ApiMessage> send(int destination, ApiMessageType api, short version, ApiMessage request) {
        InterBrokerClient.Endpoint endpoint = voters.get(destination);
        if (endpoint == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("node " + destination + " is not a voter of the metadata quorum"));
        }
        return client.send(endpoint, api, version, request);
    }
}
