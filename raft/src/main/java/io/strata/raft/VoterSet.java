package io.strata.raft;

import io.strata.protocol.Uuids;
import io.strata.protocol.message.VotersRecord;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The voters of the quorum at one point of the log: for each voter its {@link ReplicaKey}, the
 * endpoints it can be reached at (by listener name) and the range of kraft.version it supports.
 * With kraft.version 0 (static voters from {@code controller.quorum.voters}) the keys carry no
 * directory ids and the endpoints are the configuration's; with kraft.version 1 (KIP-853) a
 * voter set is what the latest {@code VotersRecord} control record says.
 *
 * <p>A majority is more than half of the voters. At most one voter per node id. Immutable and
 * thread-safe; the changes return new sets.
 */
public final class VoterSet {
    /** kraft.version 1: the voter set lives in the log. The range every Strata replica supports. */
    public static final short KRAFT_VERSION_MIN = 0;
    public static final short KRAFT_VERSION_MAX = 1;

    /** An address of a voter on one listener. */
    public record Endpoint(String listener, String host, int port) {
        public Endpoint {
            if (listener == null || listener.isEmpty() || host == null || host.isEmpty() || port < 0 || port > 65535) {
                throw new IllegalArgumentException("invalid endpoint: listener=" + listener + ", host=" + host + ", port=" + port);
            }
        }

        @Override
        public String toString() {
            return listener + "://" + host + ":" + port;
        }
    }

    /** One voter: who it is, where it listens, which kraft.version range it can run. */
    public record Voter(ReplicaKey key, List<Endpoint> endpoints, short minKRaftVersion, short maxKRaftVersion) {
        public Voter {
            endpoints = List.copyOf(endpoints);
            if (minKRaftVersion < 0 || maxKRaftVersion < minKRaftVersion) {
                throw new IllegalArgumentException("invalid kraft.version range for voter " + key + ": min=" + minKRaftVersion
                    + ", max=" + maxKRaftVersion);
            }
        }

        /** A static voter (kraft.version 0): no directory id, no endpoints known to the quorum. */
        public static Voter ofId(int id) {
            return new Voter(ReplicaKey.of(id), List.of(), KRAFT_VERSION_MIN, KRAFT_VERSION_MAX);
        }

        public Optional<Endpoint> endpoint(String listener) {
            for (Endpoint endpoint : endpoints) {
                if (endpoint.listener().equals(listener)) {
                    return Optional.of(endpoint);
                }
            }
            return Optional.empty();
        }

        public boolean supportsKRaftVersion(short version) {
            return version >= minKRaftVersion && version <= maxKRaftVersion;
        }
    }

    public static final VoterSet EMPTY = new VoterSet(Map.of());

    private final Map<Integer, Voter> voters;

    private VoterSet(Map<Integer, Voter> voters) {
        this.voters = Collections.unmodifiableMap(new TreeMap<>(voters));
    }

    public static VoterSet of(List<Voter> voters) {
        Map<Integer, Voter> byId = new TreeMap<>();
        for (Voter voter : voters) {
            if (byId.put(voter.key().id(), voter) != null) {
                throw new IllegalArgumentException("two voters with id " + voter.key().id() + ": " + voters);
            }
        }
        return new VoterSet(byId);
    }

    /** Static voters by id (kraft.version 0). */
    public static VoterSet ofIds(Set<Integer> ids) {
        List<Voter> list = new ArrayList<>();
        for (int id : ids) {
            list.add(Voter.ofId(id));
        }
        return of(list);
    }

    public Set<Integer> ids() {
        return voters.keySet();
    }

    public int size() {
        return voters.size();
    }

    public boolean isEmpty() {
        return voters.isEmpty();
    }

    public int majority() {
        return voters.size() / 2 + 1;
    }

    public boolean isVoter(int id) {
        return voters.containsKey(id);
    }

    /** Whether {@code key} is a voter: its id is, with the same directory id where both are known. */
    public boolean isVoter(ReplicaKey key) {
        Voter voter = voters.get(key.id());
        return voter != null && voter.key().matches(key);
    }

    /** Whether {@code id} is the only voter. */
    public boolean isOnlyVoter(int id) {
        return voters.size() == 1 && voters.containsKey(id);
    }

    public Optional<Voter> voter(int id) {
        return Optional.ofNullable(voters.get(id));
    }

    public List<Voter> voters() {
        return List.copyOf(voters.values());
    }

    /** The set with {@code voter} added, or empty if its id is a voter already. */
    public Optional<VoterSet> add(Voter voter) {
        if (voters.containsKey(voter.key().id())) {
            return Optional.empty();
        }
        Map<Integer, Voter> next = new TreeMap<>(voters);
        next.put(voter.key().id(), voter);
        return Optional.of(new VoterSet(next));
    }

    /** The set without {@code key}, or empty if it is not a voter or is the last one (a quorum needs a voter). */
    public Optional<VoterSet> remove(ReplicaKey key) {
        if (!isVoter(key) || voters.size() == 1) {
            return Optional.empty();
        }
        Map<Integer, Voter> next = new TreeMap<>(voters);
        next.remove(key.id());
        return Optional.of(new VoterSet(next));
    }

    /** The set with the voter of the same key replaced by {@code voter}, or empty if that key is not a voter. */
    public Optional<VoterSet> update(Voter voter) {
        if (!isVoter(voter.key())) {
            return Optional.empty();
        }
        Map<Integer, Voter> next = new TreeMap<>(voters);
        next.put(voter.key().id(), new Voter(voters.get(voter.key().id()).key(), voter.endpoints(), voter.minKRaftVersion(), voter.maxKRaftVersion()));
        return Optional.of(new VoterSet(next));
    }

    /** Whether both sets have the same voters (same ids and directory ids), endpoints aside. */
    public boolean sameVoters(VoterSet other) {
        if (!voters.keySet().equals(other.voters.keySet())) {
            return false;
        }
        for (Voter voter : voters.values()) {
            if (!voter.key().equals(other.voters.get(voter.key().id()).key())) {
                return false;
            }
        }
        return true;
    }

    public VotersRecord toRecord() {
        VotersRecord record = new VotersRecord().setVersion((short) 0);
        for (Voter voter : voters.values()) {
            VotersRecord.Voter entry = new VotersRecord.Voter().setVoterId(voter.key().id()).setVoterDirectoryId(voter.key().directoryId());
            for (Endpoint endpoint : voter.endpoints()) {
                entry.endpoints().add(new VotersRecord.Endpoint().setName(endpoint.listener()).setHost(endpoint.host()).setPort(endpoint.port()));
            }
            entry.kRaftVersionFeature().setMinSupportedVersion(voter.minKRaftVersion()).setMaxSupportedVersion(voter.maxKRaftVersion());
            record.voters().add(entry);
        }
        return record;
    }

    /**
     * The set a VotersRecord names.
     *
     * @throws IllegalArgumentException if it names a node twice or an invalid endpoint (bad input from the log)
     */
    public static VoterSet fromRecord(VotersRecord record) {
        List<Voter> list = new ArrayList<>();
        for (VotersRecord.Voter entry : record.voters()) {
            List<Endpoint> endpoints = new ArrayList<>();
            for (VotersRecord.Endpoint endpoint : entry.endpoints()) {
                endpoints.add(new Endpoint(endpoint.name(), endpoint.host(), endpoint.port()));
            }
            list.add(new Voter(new ReplicaKey(entry.voterId(), entry.voterDirectoryId() == null ? Uuids.ZERO : entry.voterDirectoryId()), endpoints,
                entry.kRaftVersionFeature().minSupportedVersion(), entry.kRaftVersionFeature().maxSupportedVersion()));
        }
        return of(list);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof VoterSet set && voters.equals(set.voters);
    }

    @Override
    public int hashCode() {
        return voters.hashCode();
    }

    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        for (Voter voter : voters.values()) {
            parts.add(voter.key() + (voter.endpoints().isEmpty() ? "" : voter.endpoints().toString()));
        }
        return parts.toString();
    }
}
