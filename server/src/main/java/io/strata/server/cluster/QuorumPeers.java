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
 * The voters of the metadata quorum and the quorum's own way to reach them: its requests go to
 * a voter's controller endpoint over an {@link InterBrokerClient} used for nothing else
 * (broker-to-controller requests have their own). Static voters ({@code controller.quorum.voters})
 * are known by configuration; a dynamic quorum's (KIP-853) come from the voter set in its log
 * ({@link #useVoterSet}), on the first controller listener, and the quorum names the address of
 * anyone else it talks to (bootstrap servers, a voter being added).
 */
public final class QuorumPeers implements RaftNode.RequestSender {
    private final Map<Integer, InterBrokerClient.Endpoint> voters = new LinkedHashMap<>();
    private final InterBrokerClient client;
    private volatile java.util.function.Supplier<io.strata.raft.VoterSet> voterSet;
    private volatile String listenerName;

    public QuorumPeers(List<QuorumVoter> configured, InterBrokerClient client) {
        for (QuorumVoter voter : configured) {
            voters.put(voter.id(), new InterBrokerClient.Endpoint(voter.id(), voter.host(), voter.port()));
        }
        this.client = client;
    }

    /** A dynamic quorum: the voters are {@code voterSet}'s (read at each use), reached on {@code listenerName}. */
    public void useVoterSet(java.util.function.Supplier<io.strata.raft.VoterSet> voterSet, String listenerName) {
        this.listenerName = listenerName;
        this.voterSet = voterSet;
    }

    public Set<Integer> voterIds() {
        return dynamicVoters().map(Map::keySet).orElse(voters.keySet());
    }

    /** Every voter's controller endpoint, in configuration order (by id for a dynamic quorum). */
    public List<InterBrokerClient.Endpoint> endpoints() {
        return List.copyOf(dynamicVoters().orElse(voters).values());
    }

    /** The controller endpoint of voter {@code id}, or null if it is not a voter. */
    public InterBrokerClient.Endpoint endpoint(int id) {
        return dynamicVoters().orElse(voters).get(id);
    }

    private java.util.Optional<Map<Integer, InterBrokerClient.Endpoint>> dynamicVoters() {
        java.util.function.Supplier<io.strata.raft.VoterSet> source = voterSet;
        if (source == null) {
            return java.util.Optional.empty();
        }
        Map<Integer, InterBrokerClient.Endpoint> endpoints = new LinkedHashMap<>();
        for (io.strata.raft.VoterSet.Voter voter : source.get().voters()) {
            voter.endpoint(listenerName).ifPresent(endpoint -> endpoints.put(voter.key().id(),
                new InterBrokerClient.Endpoint(voter.key().id(), endpoint.host(), endpoint.port())));
        }
        return java.util.Optional.of(endpoints);
    }

    @Override
    public CompletableFuture<ApiMessage> send(int destination, io.strata.raft.VoterSet.Endpoint address, ApiMessageType api, short version,
                                              ApiMessage request) {
        if (address != null) {
            return client.send(new InterBrokerClient.Endpoint(destination, address.host(), address.port()), api, version, request);
        }
        return send(destination, api, version, request);
    }

    @Override
    public CompletableFuture<ApiMessage> send(int destination, ApiMessageType api, short version, ApiMessage request) {
        InterBrokerClient.Endpoint endpoint = endpoint(destination);
        if (endpoint == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("node " + destination + " is not a voter of the metadata quorum"));
        }
        return client.send(endpoint, api, version, request);
    }
}
