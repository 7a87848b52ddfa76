package io.strata.raft;

import io.strata.protocol.ApiMessage;
import io.strata.protocol.ByteBufferWriter;
import io.strata.protocol.Reader;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsResponseData;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * A whole quorum in one thread on a simulated clock, driven by a seeded {@link Random}: every
 * message is encoded and decoded at the version Kafka's controllers send (so the simulation
 * also exercises the wire format), delayed, sometimes dropped or cut by a network partition;
 * replicas crash (losing what they had not flushed) and restart; the leader keeps appending.
 *
 * <p>After every event the invariants are checked, and a violation throws with the seed and the
 * simulated time:
 * <ul>
 *   <li>at most one leader per epoch, ever;</li>
 *   <li>a replica's epoch never goes back, also across restarts;</li>
 *   <li>a replica's high watermark never goes back while it runs;</li>
 *   <li>every entry below any replica's high watermark is the same entry on every replica that
 *       has reached it (committed data is identical everywhere);</li>
 *   <li>the latest committed entry is durable (flushed, or in a frozen snapshot) on a majority
 *       of voters, so no crash of a minority can lose it;</li>
 *   <li>with snapshots ({@link #snapshotEvery}): a replica's log start offset is its latest
 *       snapshot's end offset, or 0 without a snapshot (SnapshotAtLogStart); every snapshot
 *       holds exactly the entries below its end offset, each of them already committed, the same
 *       as everywhere else (so a snapshot never covers uncommitted data, and committed data is
 *       identical also where part of it lives only in snapshots); a leader never loads a
 *       snapshot (LeaderNeverLoadSnapshot).</li>
 * </ul>
 * {@link #healAndConverge} then ends every fault and checks that the quorum elects a leader,
 * every replica catches up, and every entry ever committed is still in every replica's snapshot
 * or log.
 *
 * <p>Dynamic quorums ({@link #dynamic}, KIP-853): the first voters start from a bootstrap
 * checkpoint naming them, spare replicas start empty (formatted with no initial controllers)
 * and find the leader through the bootstrap servers; every 500 ms the simulation may ask the
 * leader to add a spare or remove a voter (the leader included). Then also: every voter set
 * committed at an offset is the same on every replica (committed voter sets agree), every
 * voter change ends with one of Kafka's error codes for it, and durability is checked against
 * the voter sets in effect.
 *
 * <p>Snapshots stand in for the controller's (which snapshots every
 * {@code metadata.log.max.record.bytes.between.snapshots}): every 50 ms each running replica
 * whose high watermark is {@code n} entries past its latest snapshot snapshots at its high
 * watermark; the content is the committed entries themselves (offset, epoch, control flag and
 * value per record), so the simulation can compare it with what it saw committed. The next
 * poll drops the log prefix behind it.
 */
final class RaftSimulation {
    /** What the network and the replicas do to each other. */
    record Faults(double dropProbability, int maxDelayMs, double crashProbabilityPerSecond, double partitionProbabilityPerSecond) {
        static final Faults NONE = new Faults(0, 5, 0, 0);
    }

    private record Event(long timeMs, long sequence, Runnable action) {
    }

    /** A replica: its disk (log and quorum-state file) outlives its process (the client). */
    private final class Node {
        final int id;
        final MockLog log = new MockLog();
        final MemoryQuorumStateStore store = new MemoryQuorumStateStore();
        RaftClient client;
        long highWatermarkThisRun;
        int lastEpoch;
        long verifiedUpTo;
        int incarnation;
        /** The entries of the latest snapshot, decoded and checked (index = offset). */
        OffsetAndEpoch decodedSnapshotId;
        List<MockLog.Entry> snapshotEntries = List.of();
        int snapshotsLoaded;

        Node(int id) {
            this.id = id;
        }

        void start() {
            incarnation++;
            int run = incarnation;
            QuorumSetup setup = dynamic ? new QuorumSetup(key(id), Set.of(), LISTENER, List.of(endpoint(id)), bootstrapServers)
                : QuorumSetup.staticQuorum(id, voters);
            client = new RaftClient(setup, CLUSTER_ID, config, log, store, message -> route(message, run), new Random(random.nextLong()),
                new RaftClient.Listener() {
                    @Override
                    public void onSnapshotLoaded(OffsetAndEpoch snapshotId) {
                        snapshotsLoaded++;
                        if (client.isLeader()) {
                            throw violation("leader " + id + " loaded snapshot " + snapshotId);
                        }
                    }
                });
            client.initialize(nowMs);
            highWatermarkThisRun = 0;
            verifiedUpTo = 0;
        }

        boolean isUp() {
            return client != null;
        }
    }

    static final String CLUSTER_ID = "simulated-cluster";
    static final String LISTENER = "CONTROLLER";
    /** The error codes a voter change may end with in a healthy dynamic quorum. */
    private static final Set<ErrorCode> VOTER_CHANGE_ERRORS = Set.of(ErrorCode.NONE, ErrorCode.REQUEST_TIMED_OUT, ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.DUPLICATE_VOTER, ErrorCode.VOTER_NOT_FOUND);
    private boolean dynamic;
    private final Map<Integer, UUID> directoryIds = new HashMap<>();
    private final List<VoterSet.Endpoint> bootstrapServers = new ArrayList<>();
    /** Replicas that may become voters (initial voters and spares), by id. */
    private final Set<Integer> voterCapable = new HashSet<>();
    /** Every voter set ever committed, by the offset of its record. */
    private final Map<Long, VoterSet> committedVoterSets = new HashMap<>();
    /** Which alias (a bootstrap id) a request was sent to, by "source#incarnation#correlation#real destination". */
    private final Map<String, Integer> aliasOfRequest = new HashMap<>();
    private CompletableFuture<RaftClient.VoterChangeResult> voterChangeInFlight;
    /** The client that took the change in flight: a crash of its node abandons it (nobody will answer). */
    private RaftClient voterChangeOwner;
    /** The leader's voter set when the highest high watermark was last raised, and that high watermark. */
    private Set<Integer> votersAtLatestCommit = Set.of();
    private long latestCommitSeen;
    private final Map<ErrorCode, Integer> voterChangeResults = new TreeMap<>();
    private final List<String> voterChangeMessages = new ArrayList<>();
    private int leaderRemovals;
    private boolean voterChangesOn = true;
    private int maxVoters;
    private final long seed;
    private final Random random;
    private final RaftConfig config;
    private final Faults faults;
    private final Set<Integer> voters = new HashSet<>();
    private final Map<Integer, Node> nodes = new TreeMap<>();
    private final PriorityQueue<Event> events = new PriorityQueue<>((a, b) -> a.timeMs != b.timeMs
        ? Long.compare(a.timeMs, b.timeMs) : Long.compare(a.sequence, b.sequence));
    /** Every entry ever committed, by offset. */
    private final Map<Long, MockLog.Entry> committed = new HashMap<>();
    private final Map<Integer, Integer> leaderOfEpoch = new HashMap<>();
    /** Node id -> the partition side it is on; messages between sides are lost. */
    private final Map<Integer, Integer> side = new HashMap<>();
    /** Links cut by a test, as "a-b" for both directions; these stay cut also after healing. */
    private final Set<String> cutLinks = new HashSet<>();
    private long nowMs;
    private long sequence;
    private long writes;
    private boolean faultsOn = true;
    /** Committed entries between snapshots (0: no snapshots). */
    private int snapshotEveryEntries;
    private long snapshotsTaken;

    RaftSimulation(long seed, int voterCount, RaftConfig config, Faults faults) {
        this(seed, voterCount, 0, config, faults);
    }

    /** {@code observerCount} replicas (ids 101, 102, ...) follow the log without voting, as brokers do. */
    RaftSimulation(long seed, int voterCount, int observerCount, RaftConfig config, Faults faults) {
        this(seed, voterCount, observerCount, 0, false, config, faults);
    }

    /**
     * A dynamic quorum: voters 1..{@code voterCount} from a bootstrap checkpoint, spares after them
     * that start as observers, {@code observerCount} brokers (101, ...); voter changes keep between
     * 2 (or the initial count, if smaller) and {@code voterCount + spareCount} voters.
     */
    static RaftSimulation dynamic(long seed, int voterCount, int spareCount, int observerCount, RaftConfig config, Faults faults) {
        return new RaftSimulation(seed, voterCount, observerCount, spareCount, true, config, faults);
    }

    private RaftSimulation(long seed, int voterCount, int observerCount, int spareCount, boolean dynamic, RaftConfig config, Faults faults) {
        this.seed = seed;
        this.dynamic = dynamic;
        this.random = new Random(seed);
        this.config = config;
        this.faults = faults;
        for (int id = 1; id <= voterCount; id++) {
            voters.add(id);
        }
        for (int id : voters) {
            nodes.put(id, new Node(id));
            side.put(id, 0);
        }
        for (int id = 101; id <= 100 + observerCount; id++) {
            nodes.put(id, new Node(id));
            side.put(id, 0);
        }
        if (dynamic) {
            List<VoterSet.Voter> initial = new ArrayList<>();
            for (int id = 1; id <= voterCount + spareCount; id++) {
                voterCapable.add(id);
                if (id > voterCount) {
                    nodes.put(id, new Node(id));
                    side.put(id, 0);
                }
            }
            for (int id : nodes.keySet()) {
                directoryIds.put(id, new UUID(random.nextLong() | 1L, id));
            }
            for (int id : voters) {
                initial.add(new VoterSet.Voter(key(id), List.of(endpoint(id)), VoterSet.KRAFT_VERSION_MIN, VoterSet.KRAFT_VERSION_MAX));
                bootstrapServers.add(endpoint(id));
            }
            VoterSet bootstrap = VoterSet.of(initial);
            for (int id : voters) {
                // What `strata format --initial-controllers` writes: the checkpoint 0-0 with kraft.version 1 and the voters.
                try (RecordsSnapshotWriter writer = new RecordsSnapshotWriter(nodes.get(id).log.createSnapshot(BootstrapCheckpoint.ID), 0,
                    VoterSet.KRAFT_VERSION_MAX, bootstrap)) {
                    writer.freeze(0);
                }
            }
            maxVoters = voterCount + spareCount;
        }
        for (Node node : nodes.values()) {
            node.start();
        }
    }

    private ReplicaKey key(int id) {
        return new ReplicaKey(id, directoryIds.get(id));
    }

    private static VoterSet.Endpoint endpoint(int id) {
        return new VoterSet.Endpoint(LISTENER, "node-" + id, 9000 + id);
    }

    /** No voter changes of the simulation's own (a test asks for them). */
    RaftSimulation withoutVoterChanges() {
        voterChangesOn = false;
        return this;
    }

    /** How the voter changes asked for ended, by error code. */
    Map<ErrorCode, Integer> voterChangeResults() {
        return voterChangeResults;
    }

    /** The first messages of voter changes that were refused. */
    List<String> voterChangeMessages() {
        return voterChangeMessages;
    }

    int leaderRemovals() {
        return leaderRemovals;
    }

    /** The voter set of the current leader, or null without one. */
    VoterSet leaderVoterSet() {
        int leader = leaderId();
        return leader < 0 ? null : nodes.get(leader).client.voterSet();
    }

    /** The running replicas' clients, by node id. */
    Map<Integer, RaftClient> clients() {
        Map<Integer, RaftClient> clients = new TreeMap<>();
        for (Node node : nodes.values()) {
            if (node.isUp()) {
                clients.put(node.id, node.client);
            }
        }
        return clients;
    }

    long nowMs() {
        return nowMs;
    }

    /** Cuts the links between {@code node} and each of {@code peers}, both ways, until {@link #restoreLinks()}. */
    void cutLinks(int node, Set<Integer> peers) {
        for (int peer : peers) {
            cutLinks.add(node + "-" + peer);
            cutLinks.add(peer + "-" + node);
        }
    }

    void restoreLinks() {
        cutLinks.clear();
    }

    long committedCount() {
        return committed.size();
    }

    long writes() {
        return writes;
    }

    /** Each replica snapshots at its high watermark once that is {@code entries} past its latest snapshot. */
    RaftSimulation snapshotEvery(int entries) {
        this.snapshotEveryEntries = entries;
        return this;
    }

    long snapshotsTaken() {
        return snapshotsTaken;
    }

    /** How many snapshots replica {@code id} has copied from a leader (FetchSnapshot) so far. */
    int snapshotsLoaded(int id) {
        return nodes.get(id).snapshotsLoaded;
    }

    int totalSnapshotsLoaded() {
        return nodes.values().stream().mapToInt(node -> node.snapshotsLoaded).sum();
    }

    MockLog log(int id) {
        return nodes.get(id).log;
    }

    /** Crashes replica {@code id} at {@code atMs} and restarts it {@code forMs} later. */
    void scheduleOutage(int id, long atMs, long forMs) {
        Node node = nodes.get(id);
        schedule(atMs, () -> {
            if (node.isUp()) {
                crash(node);
            }
        });
        schedule(atMs + forMs, () -> restart(node));
    }

    /** The current leader's id, or -1. */
    int leaderId() {
        for (Node node : nodes.values()) {
            if (node.isUp() && node.client.isLeader()) {
                return node.id;
            }
        }
        return -1;
    }

    // ------------------------------------------------------------------ running

    /** Runs until {@code untilMs} of simulated time, with faults as configured. */
    void run(long untilMs) {
        schedulePeriodic(untilMs);
        while (!events.isEmpty() && events.peek().timeMs <= untilMs) {
            Event event = events.poll();
            nowMs = event.timeMs;
            event.action.run();
            checkInvariants();
        }
        nowMs = untilMs;
    }

    private void schedulePeriodic(long untilMs) {
        for (long t = nowMs + 1; t <= untilMs; t += 10) {
            long at = t;
            schedule(at, this::pollAll);
        }
        for (long t = nowMs + 7; t <= untilMs; t += 25) {
            schedule(t, this::writeIfLeader);
        }
        for (long t = nowMs + 100; t <= untilMs; t += 100) {
            schedule(t, this::maybeInjectFault);
        }
        if (snapshotEveryEntries > 0) {
            for (long t = nowMs + 13; t <= untilMs; t += 50) {
                schedule(t, this::snapshotWhereDue);
            }
        }
        if (dynamic) {
            for (long t = nowMs + 251; t <= untilMs; t += 500) {
                schedule(t, this::maybeChangeVoters);
            }
        }
    }

    /** Asks the leader, now and then, to add a spare that is up or to remove a voter (maybe itself). */
    private void maybeChangeVoters() {
        boolean abandoned = voterChangeOwner != null && nodes.values().stream().noneMatch(node -> node.client == voterChangeOwner);
        if (!voterChangesOn || !faultsOn || (voterChangeInFlight != null && !voterChangeInFlight.isDone() && !abandoned) || random.nextDouble() >= 0.4) {
            return;
        }
        int leaderId = leaderId();
        if (leaderId < 0) {
            return;
        }
        RaftClient leader = nodes.get(leaderId).client;
        VoterSet voters = leader.voterSet();
        List<Integer> addable = new ArrayList<>();
        for (int id : new java.util.TreeSet<>(voterCapable)) {
            if (!voters.isVoter(id) && nodes.get(id).isUp()) {
                addable.add(id);
            }
        }
        boolean add = voters.size() < maxVoters && !addable.isEmpty() && (voters.size() <= 2 || random.nextBoolean());
        if (add) {
            int id = addable.get(random.nextInt(addable.size()));
            voterChangeInFlight = leader.addVoter(key(id), List.of(endpoint(id)), true, 3_000, nowMs);
        } else if (voters.size() > 2) {
            List<Integer> ids = new ArrayList<>(voters.ids());
            int id = ids.get(random.nextInt(ids.size()));
            if (id == leaderId) {
                leaderRemovals++;
            }
            voterChangeInFlight = leader.removeVoter(key(id), nowMs);
        } else {
            return;
        }
        voterChangeOwner = leader;
        voterChangeInFlight.thenAccept(result -> {
            if (!VOTER_CHANGE_ERRORS.contains(result.error())) {
                throw violation("a voter change ended with " + result);
            }
            voterChangeResults.merge(result.error(), 1, Integer::sum);
            if (result.error() != ErrorCode.NONE && voterChangeMessages.size() < 8) {
                voterChangeMessages.add(result.message());
            }
        });
    }

    private void schedule(long timeMs, Runnable action) {
        events.add(new Event(timeMs, sequence++, action));
    }

    private void pollAll() {
        for (Node node : nodes.values()) {
            if (node.isUp()) {
                node.client.poll(nowMs);
            }
        }
    }

    private void writeIfLeader() {
        for (Node node : nodes.values()) {
            if (node.isUp() && node.client.isLeader() && faultsOn) {
                byte[] value = ("w-" + writes + "-by-" + node.id + "-e" + node.client.epoch()).getBytes(StandardCharsets.UTF_8);
                if (node.client.append(List.of(value), nowMs) >= 0) {
                    writes++;
                }
            }
        }
    }

    private void snapshotWhereDue() {
        for (Node node : nodes.values()) {
            if (node.isUp()) {
                long highWatermark = node.client.highWatermark();
                long latest = node.log.latestSnapshotId().map(OffsetAndEpoch::offset).orElse(0L);
                if (highWatermark - latest >= snapshotEveryEntries) {
                    takeSnapshot(node, highWatermark);
                }
            }
        }
    }

    /** Snapshots {@code node} at {@code endOffset}: its latest snapshot's entries, then its log's, up to there. */
    private void takeSnapshot(Node node, long endOffset) {
        refreshSnapshot(node);
        List<byte[]> content = new ArrayList<>();
        for (long offset = 0; offset < endOffset; offset++) {
            MockLog.Entry entry = entryAt(node, offset);
            if (entry == null) {
                throw violation("node " + node.id + " has no entry at " + offset + " to snapshot below " + endOffset);
            }
            content.add(encodeEntry(entry));
        }
        OffsetAndEpoch snapshotId = new OffsetAndEpoch(endOffset, entryAt(node, endOffset - 1).epoch());
        Optional<RecordsSnapshotWriter> writer = node.client.createSnapshot(snapshotId, nowMs);
        if (writer.isEmpty()) {
            return;
        }
        try (RecordsSnapshotWriter snapshot = writer.get()) {
            for (int from = 0; from < content.size(); from += 16) {
                snapshot.append(content.subList(from, Math.min(content.size(), from + 16)), nowMs);
            }
            snapshot.freeze(nowMs);
        }
        snapshotsTaken++;
        node.client.poll(nowMs); // drops the log prefix behind the snapshot
    }

    private static byte[] encodeEntry(MockLog.Entry entry) {
        ByteBuffer buffer = ByteBuffer.allocate(13 + entry.value().length);
        buffer.putLong(entry.offset()).putInt(entry.epoch()).put((byte) (entry.control() ? 1 : 0)).put(entry.value());
        return buffer.array();
    }

    private static MockLog.Entry decodeEntry(ByteBuffer value) {
        ByteBuffer buffer = value.duplicate();
        long offset = buffer.getLong();
        int epoch = buffer.getInt();
        boolean control = buffer.get() == 1;
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return new MockLog.Entry(offset, epoch, control, bytes);
    }

    /**
     * Decodes a replica's latest snapshot when it is new and checks it: header first, footer
     * last, exactly the entries below its end offset, each one already committed and identical
     * to what was committed.
     */
    private void refreshSnapshot(Node node) {
        Optional<OffsetAndEpoch> latest = node.log.latestSnapshotId();
        if (latest.isEmpty() || latest.get().equals(node.decodedSnapshotId)) {
            return;
        }
        List<RecordBatch> batches = node.log.readSnapshot(latest.get()).orElseThrow().batches();
        if (batches.size() < 2 || !((DefaultRecordBatch) batches.get(0)).isControlBatch()
            || !((DefaultRecordBatch) batches.get(batches.size() - 1)).isControlBatch()) {
            throw violation("snapshot " + latest.get() + " of node " + node.id + " lacks its header or footer control batch");
        }
        List<MockLog.Entry> entries = new ArrayList<>();
        for (RecordBatch batch : batches.subList(1, batches.size() - 1)) {
            if (((DefaultRecordBatch) batch).isControlBatch()) {
                continue; // kraft.version and voters (dynamic quorums)
            }
            for (Record record : ((DefaultRecordBatch) batch).records()) {
                MockLog.Entry entry = decodeEntry(record.value());
                if (entry.offset() != entries.size()) {
                    throw violation("snapshot " + latest.get() + " of node " + node.id + " holds offset " + entry.offset() + " at position " + entries.size());
                }
                MockLog.Entry known = committed.get(entry.offset());
                if (known == null) {
                    throw violation("snapshot " + latest.get() + " of node " + node.id + " covers uncommitted entry " + describeEntry(entry));
                }
                if (!known.sameAs(entry)) {
                    throw violation("snapshot " + latest.get() + " of node " + node.id + " holds " + describeEntry(entry) + " but " + describeEntry(known)
                        + " was committed");
                }
                entries.add(entry);
            }
        }
        if (entries.size() != latest.get().offset() || (!entries.isEmpty() && entries.get(entries.size() - 1).epoch() != latest.get().epoch())) {
            throw violation("snapshot " + latest.get() + " of node " + node.id + " holds " + entries.size() + " entries");
        }
        node.decodedSnapshotId = latest.get();
        node.snapshotEntries = entries;
    }

    /** The entry at {@code offset} in the replica's log, or below its log start in its latest snapshot; null if neither has it. */
    private MockLog.Entry entryAt(Node node, long offset) {
        if (offset >= node.log.logStartOffset()) {
            return node.log.entry(offset);
        }
        return offset < node.snapshotEntries.size() && node.log.latestSnapshotId().equals(Optional.ofNullable(node.decodedSnapshotId))
            ? node.snapshotEntries.get((int) offset) : null;
    }

    private void maybeInjectFault() {
        if (!faultsOn) {
            return;
        }
        double perTick = 0.1; // ticks are 100 ms
        if (random.nextDouble() < faults.crashProbabilityPerSecond() * perTick) {
            List<Node> up = nodes.values().stream().filter(Node::isUp).toList();
            if (!up.isEmpty()) {
                Node victim = up.get(random.nextInt(up.size()));
                crash(victim);
                schedule(nowMs + 100 + random.nextInt(2000), () -> restart(victim));
            }
        }
        if (random.nextDouble() < faults.partitionProbabilityPerSecond() * perTick) {
            for (int id : nodes.keySet()) {
                side.put(id, random.nextInt(2));
            }
            schedule(nowMs + 200 + random.nextInt(3000), this::healPartition);
        }
    }

    private void crash(Node node) {
        node.client = null;
        node.log.crash();
    }

    private void restart(Node node) {
        if (!node.isUp()) {
            node.start();
        }
    }

    private void healPartition() {
        side.replaceAll((id, s) -> 0);
    }

    /**
     * The transport of every replica: encode the message at the version Kafka sends, maybe
     * lose it, and deliver the decoded copy after a random delay, then let the receiver poll.
     */
    private void route(RaftMessage original, int senderIncarnation) {
        Node sender = nodes.get(original.source());
        if (sender.incarnation != senderIncarnation || !sender.isUp()) {
            return;
        }
        RaftMessage message = resolveAlias(sender, original);
        if (message == null) {
            return;
        }
        if (message.isRequest() && message.api() == ApiMessageType.API_VERSIONS) {
            answerApiVersions(message, senderIncarnation);
            return;
        }
        int from = original.source();
        int to = message.destination();
        if (faultsOn && (random.nextDouble() < faults.dropProbability() || !side.get(from).equals(side.get(to)))) {
            return;
        }
        if (cutLinks.contains(from + "-" + to)) {
            return;
        }
        RaftMessage decoded = roundTrip(message);
        long deliverAt = nowMs + 1 + random.nextInt(faults.maxDelayMs());
        // A restart of either end breaks the connection: what was in flight on it is gone.
        int receiverIncarnation = nodes.get(to).incarnation;
        schedule(deliverAt, () -> {
            Node receiver = nodes.get(to);
            if (receiver.isUp() && receiver.incarnation == receiverIncarnation && sender.incarnation == senderIncarnation
                && (!faultsOn || side.get(from).equals(side.get(to)))) {
                receiver.client.receive(decoded);
                receiver.client.poll(nowMs);
            }
        });
    }

    /**
     * A request to a bootstrap server (id -2, -3, ...) goes to the node its address names; the
     * answer comes back from the alias, as a network client addressed by host and port sees it.
     */
    private RaftMessage resolveAlias(Node sender, RaftMessage message) {
        if (message.isRequest() && message.destination() < -1) {
            VoterSet.Endpoint endpoint = sender.client.endpointOf(message.destination()).orElse(null);
            if (endpoint == null) {
                return null;
            }
            int real = Integer.parseInt(endpoint.host().substring("node-".length()));
            if (real == message.source()) {
                return null; // its own address: a real client would connect to itself and be answered by its own quorum
            }
            aliasOfRequest.put(message.source() + "#" + sender.incarnation + "#" + message.correlationId() + "#" + real, message.destination());
            return new RaftMessage(message.source(), real, message.correlationId(), message.data(), true);
        }
        if (!message.isRequest()) {
            Node requester = nodes.get(message.destination());
            Integer alias = aliasOfRequest.remove(message.destination() + "#" + requester.incarnation + "#" + message.correlationId() + "#" + message.source());
            if (alias != null) {
                return new RaftMessage(alias, message.destination(), message.correlationId(), message.data(), false);
            }
        }
        return message;
    }

    /** ApiVersions is answered by a server's network layer, not its quorum: the simulation answers for a node that is up. */
    private void answerApiVersions(RaftMessage request, int senderIncarnation) {
        Node target = nodes.get(request.destination());
        Node sender = nodes.get(request.source());
        if (target == null || !target.isUp() || (faultsOn && random.nextDouble() < faults.dropProbability())) {
            return;
        }
        ApiVersionsResponseData response = new ApiVersionsResponseData();
        response.supportedFeatures().add(new ApiVersionsResponseData.SupportedFeatureKey().setName("kraft.version")
            .setMinVersion(VoterSet.KRAFT_VERSION_MIN).setMaxVersion(VoterSet.KRAFT_VERSION_MAX));
        RaftMessage answer = roundTrip(new RaftMessage(request.destination(), request.source(), request.correlationId(), response, false));
        schedule(nowMs + 1 + random.nextInt(faults.maxDelayMs()), () -> {
            if (sender.isUp() && sender.incarnation == senderIncarnation) {
                sender.client.receive(answer);
                sender.client.poll(nowMs);
            }
        });
    }

    static RaftMessage roundTrip(RaftMessage message) {
        ApiMessageType api = message.api();
        short version = RaftMessage.version(api);
        ByteBuffer buffer = ByteBuffer.allocate(message.data().size(version));
        message.data().write(new ByteBufferWriter(buffer), version);
        buffer.flip();
        Reader reader = new Reader(buffer);
        ApiMessage decoded = message.isRequest() ? api.readRequest(reader, version) : api.readResponse(reader, version);
        if (buffer.hasRemaining()) {
            throw new AssertionError("decoding " + message + " left " + buffer.remaining() + " bytes");
        }
        return new RaftMessage(message.source(), message.destination(), message.correlationId(), decoded, message.isRequest());
    }

    // ------------------------------------------------------------------ invariants

    private AssertionError violation(String what) {
        return new AssertionError("seed " + seed + " at " + nowMs + " ms: " + what + "\n" + describe());
    }

    String describe() {
        StringBuilder text = new StringBuilder();
        for (Node node : nodes.values()) {
            text.append("  node ").append(node.id).append(": ")
                .append(node.isUp() ? node.client.state() + " hw=" + node.client.highWatermark() : "down")
                .append(" log start=").append(node.log.logStartOffset()).append(" end=").append(node.log.endOffset())
                .append(" flushed=").append(node.log.flushedOffset()).append(" snapshot=").append(node.log.latestSnapshotId().orElse(null))
                .append(" loaded=").append(node.snapshotsLoaded)
                .append(node.isUp() && dynamic ? " voters=" + node.client.voterSet() : "").append('\n');
        }
        return text.toString();
    }

    private void checkInvariants() {
        for (Node node : nodes.values()) {
            checkSnapshotAtLogStart(node);
            if (!node.isUp()) {
                continue;
            }
            RaftClient client = node.client;
            if (client.epoch() < node.lastEpoch) {
                throw violation("node " + node.id + " went back from epoch " + node.lastEpoch + " to " + client.epoch());
            }
            node.lastEpoch = client.epoch();
            if (client.isLeader()) {
                Integer previous = leaderOfEpoch.putIfAbsent(client.epoch(), node.id);
                if (previous != null && previous != node.id) {
                    throw violation("two leaders in epoch " + client.epoch() + ": " + previous + " and " + node.id);
                }
            }
            long highWatermark = client.highWatermark();
            if (highWatermark < node.highWatermarkThisRun) {
                throw violation("node " + node.id + " high watermark went back from " + node.highWatermarkThisRun + " to " + highWatermark);
            }
            node.highWatermarkThisRun = highWatermark;
            for (long offset = node.verifiedUpTo; offset < highWatermark; offset++) {
                MockLog.Entry entry = entryAt(node, offset);
                if (entry == null) {
                    throw violation("node " + node.id + " has no entry at " + offset + " below its high watermark " + highWatermark);
                }
                MockLog.Entry known = committed.putIfAbsent(offset, entry);
                if (known != null && !known.sameAs(entry)) {
                    throw violation("committed entry " + offset + " differs: " + describeEntry(known) + " vs " + describeEntry(entry)
                        + " on node " + node.id);
                }
            }
            node.verifiedUpTo = Math.max(node.verifiedUpTo, highWatermark);
            checkCommittedVoterSets(node);
            if (client.isLeader() && highWatermark > latestCommitSeen) {
                latestCommitSeen = highWatermark;
                votersAtLatestCommit = client.voterSet().ids();
            }
        }
        checkDurability();
    }

    /** SnapshotAtLogStart: the log starts at 0 without a snapshot, else at the latest snapshot's end; the snapshot checks out. */
    private void checkSnapshotAtLogStart(Node node) {
        long logStart = node.log.logStartOffset();
        Optional<OffsetAndEpoch> latest = node.log.latestSnapshotId();
        long expected = latest.map(OffsetAndEpoch::offset).orElse(0L);
        if (logStart != expected) {
            throw violation("node " + node.id + " log starts at " + logStart + " but its latest snapshot is " + latest);
        }
        refreshSnapshot(node);
    }

    /** Committed voter sets agree: a voter set committed at an offset is the same set on every replica. */
    private void checkCommittedVoterSets(Node node) {
        if (!dynamic || node.client.highWatermark() == 0) {
            return;
        }
        long offset = node.client.committedVoterSetOffset();
        VoterSet set = node.client.committedVoterSet();
        if (offset < 0 && node.log.latestSnapshotId().map(id -> id.offset() > 0).orElse(false)) {
            return; // from a snapshot whose offset names no record
        }
        VoterSet known = committedVoterSets.putIfAbsent(offset, set);
        if (known != null && !known.equals(set)) {
            throw violation("node " + node.id + " committed voter set " + set + " at " + offset + " but " + known + " was committed there");
        }
    }

    /** The voter sets the latest committed entry must be durable on a majority of (either will do). */
    private List<Set<Integer>> durabilityVoterSets() {
        if (!dynamic) {
            return List.of(voters);
        }
        Node best = null;
        for (Node node : nodes.values()) {
            if (node.isUp() && (best == null || node.client.highWatermark() > best.client.highWatermark())) {
                best = node;
            }
        }
        if (best == null) {
            return List.of();
        }
        List<Set<Integer>> sets = new ArrayList<>();
        sets.add(votersAtLatestCommit);
        sets.add(best.client.committedVoterSet().ids());
        sets.add(best.client.voterSet().ids());
        int leader = leaderId();
        if (leader >= 0) {
            sets.add(nodes.get(leader).client.voterSet().ids());
        }
        sets.removeIf(Set::isEmpty);
        return sets;
    }

    private void checkDurability() {
        if (committed.isEmpty()) {
            return;
        }
        long latest = committed.keySet().stream().mapToLong(Long::longValue).max().getAsLong();
        MockLog.Entry entry = committed.get(latest);
        List<Set<Integer>> sets = durabilityVoterSets();
        if (sets.isEmpty()) {
            return;
        }
        String failures = "";
        for (Set<Integer> set : sets) {
            int durable = durableCount(set, latest, entry);
            if (durable >= set.size() / 2 + 1) {
                return;
            }
            failures += " " + durable + " of " + set;
        }
        throw violation("committed entry " + latest + " is durable on only" + failures);
    }

    private int durableCount(Set<Integer> voterIds, long latest, MockLog.Entry entry) {
        int durable = 0;
        for (Node node : nodes.values()) {
            if (!voterIds.contains(node.id)) {
                continue;
            }
            MockLog.Entry held = entryAt(node, latest);
            boolean onDisk = latest < node.log.logStartOffset() || latest < node.log.flushedOffset(); // frozen snapshots are durable
            if (held != null && held.sameAs(entry) && onDisk) {
                durable++;
            }
        }
        return durable;
    }

    private static String describeEntry(MockLog.Entry entry) {
        return "(offset " + entry.offset() + ", epoch " + entry.epoch() + (entry.control() ? ", control" : ", "
            + new String(entry.value(), StandardCharsets.UTF_8)) + ")";
    }

    /**
     * Ends every fault, restarts every replica, stops writing and runs for {@code forMs}; then
     * checks that a leader leads, everyone holds the whole log up to the high watermark, and
     * every entry ever committed is in every log.
     */
    void healAndConverge(long forMs) {
        faultsOn = false;
        healPartition();
        for (Node node : nodes.values()) {
            restart(node);
        }
        run(nowMs + forMs);
        List<Node> leaders = new ArrayList<>();
        for (Node node : nodes.values()) {
            if (node.client.isLeader()) {
                leaders.add(node);
            }
        }
        if (leaders.size() != 1) {
            throw violation("expected one leader after healing, found " + leaders.size());
        }
        Node leader = leaders.get(0);
        long end = leader.log.endOffset().offset();
        for (Node node : nodes.values()) {
            if (node.client.highWatermark() != end) {
                throw violation("node " + node.id + " high watermark " + node.client.highWatermark() + " != leader log end " + end);
            }
            if (node.log.endOffset().offset() != end) {
                throw violation("node " + node.id + " log end " + node.log.endOffset() + " != leader log end " + end);
            }
            for (Map.Entry<Long, MockLog.Entry> known : committed.entrySet()) {
                MockLog.Entry held = entryAt(node, known.getKey());
                if (held == null || !held.sameAs(known.getValue())) {
                    throw violation("node " + node.id + " lost committed entry " + describeEntry(known.getValue()));
                }
            }
            if (dynamic && !node.client.committedVoterSet().equals(leader.client.voterSet())) {
                throw violation("node " + node.id + " committed voter set " + node.client.committedVoterSet() + " != leader's " + leader.client.voterSet());
            }
        }
    }

    /** The quorum-state file of a simulated disk. */
    static final class MemoryQuorumStateStore implements QuorumStateStore {
        private ElectionState state;

        @Override
        public ElectionState read() {
            return state;
        }

        @Override
        public void write(ElectionState state) {
            this.state = state;
        }
    }
}
