package io.strata.server.replica;

import io.strata.metadata.MetadataImage;
import io.strata.metadata.PartitionRegistration;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.storage.ErrorCodeException;
import io.strata.storage.FetchIsolation;
import io.strata.storage.LogAppendInfo;
import io.strata.storage.UnifiedLog;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * A deterministic multi-broker replication simulation of one partition: {@link SimBroker}s (real
 * Partition, UnifiedLog, ReplicaFetcher) and a {@link SimController} (ReplicationControl) in one
 * thread over a {@link SimScheduler} and a {@link SimNetwork}, with one idempotent acks=all
 * producer (in-flight 1, retries with the same sequence) recording every acknowledged write.
 * {@link #checkInvariants} runs after every event; a violation throws an {@link AssertionError}
 * naming the seed and the event. Not thread-safe.
 *
 * <p>Invariants: the high watermark of a replica never goes back within a leader epoch; the
 * committed offset (the largest high watermark seen) is never above a serving leader's log end;
 * every acknowledged write is at its offset on every running ISR member; the batches below the
 * smallest high watermark are identical (offsets, epoch, CRC) on every running replica; the leader
 * is in the ISR; ELR ∩ ISR = ∅ and (ELR on) ISR ≥ min ISR ⇒ ELR empty; one leader per leader epoch.
 * Unclean election is never enabled, so no acknowledged write may be lost.
 */
final class ReplicationSimulation implements AutoCloseable {
    /** One run's shape. */
    record Settings(long seed, int replicationFactor, int minIsr, boolean elr) {
        @Override
        public String toString() {
            return "seed=" + seed + " rf=" + replicationFactor + " minIsr=" + minIsr + " elr=" + elr;
        }
    }

    static final int PRODUCER = -200;
    static final long PRODUCER_ID = 4_000L;
    static final long SESSION_TIMEOUT_MS = 1_500L;
    static final long HEARTBEAT_INTERVAL_MS = 300L;
    static final long PRODUCE_TIMEOUT_MS = 3_000L;
    /** Sim time for the final healing phase to converge. */
    static final long CONVERGE_MS_MAX = 120_000L;

    final Settings settings;
    final Random random;
    final SimScheduler scheduler = new SimScheduler();
    final SimNetwork network;
    final SimController controller;
    final Map<Integer, SimBroker> brokers = new TreeMap<>();
    private final ScheduledExecutorService logScheduler = Executors.newSingleThreadScheduledExecutor();
    /** Acknowledged writes: offset → producer sequence of the batch's first record. */
    final Map<Long, Integer> acked = new TreeMap<>();
    private final Map<Integer, Integer> leaderOfEpoch = new HashMap<>();
    private final Map<Integer, long[]> highWatermarkByBroker = new HashMap<>();
    private long committedOffset;
    private long events;

    // producer state
    private int nextSequence;
    private int inFlightSequence = -1;
    private long inFlightSentMs;
    private long requestId;
    int writesMax = 60;

    ReplicationSimulation(Settings settings, Path root) throws IOException {
        this.settings = settings;
        this.random = new Random(settings.seed());
        this.network = new SimNetwork(scheduler, random);
        int[] replicas = new int[settings.replicationFactor()];
        for (int i = 0; i < replicas.length; i++) {
            replicas[i] = i + 1;
        }
        this.controller = new SimController(replicas, settings.minIsr(), settings.elr(), SESSION_TIMEOUT_MS, this::publish);
        for (int id : replicas) {
            brokers.put(id, new SimBroker(id, root.resolve("broker-" + id), settings.minIsr(), settings.elr(), scheduler, network, controller,
                brokers, logScheduler));
        }
        for (SimBroker broker : brokers.values()) {
            broker.applyImage(controller.image());
            schedulePeriodic(broker);
        }
        schedule(HEARTBEAT_INTERVAL_MS, "session check", this::checkSessions);
        schedule(5, "producer", this::producerTick);
    }

    private void schedule(long delayMs, String name, Runnable action) {
        scheduler.schedule(delayMs, name, action);
    }

    /** The controller committed an image: each broker gets it in log order after a delay. */
    private final Map<Integer, Long> lastDeliveryMs = new HashMap<>();

    private void publish(MetadataImage image) {
        if (brokers.isEmpty()) {
            return; // the initial image, applied directly
        }
        for (SimBroker broker : brokers.values()) {
            long at = Math.max(lastDeliveryMs.getOrDefault(broker.id, 0L), scheduler.nowMs() + 1 + random.nextInt(30));
            lastDeliveryMs.put(broker.id, at);
            schedule(at - scheduler.nowMs(), "image " + image.offset() + " to " + broker.id, () -> broker.applyImage(image));
        }
    }

    private void schedulePeriodic(SimBroker broker) {
        schedule(1 + random.nextInt(5), "fetcher poll " + broker.id, () -> {
            broker.pollFetcher();
            schedulePeriodicFetch(broker);
        });
        scheduleRepeating(broker, "flush", 50, broker::flush);
        scheduleRepeating(broker, "isr shrink check", 250, broker::maybeShrinkIsr);
        scheduleRepeating(broker, "heartbeat", HEARTBEAT_INTERVAL_MS, () -> {
            if (broker.alive) {
                long epoch = broker.brokerEpoch;
                network.send(broker.id, SimNetwork.CONTROLLER, "heartbeat", () -> controller.heartbeat(broker.id, epoch, scheduler.nowMs()));
            }
        });
    }

    private void schedulePeriodicFetch(SimBroker broker) {
        schedule(1 + random.nextInt(5), "fetcher poll " + broker.id, () -> {
            broker.pollFetcher();
            schedulePeriodicFetch(broker);
        });
    }

    private void scheduleRepeating(SimBroker broker, String what, long intervalMs, Runnable action) {
        schedule(1 + random.nextInt((int) intervalMs), what + " " + broker.id, () -> {
            action.run();
            scheduleRepeating(broker, what, intervalMs, action);
        });
    }

    private void checkSessions() {
        controller.checkSessions(scheduler.nowMs());
        schedule(HEARTBEAT_INTERVAL_MS, "session check", this::checkSessions);
    }

    // ---------------------------------------------------------------- producer

    private static MemoryRecords batch(int sequence) {
        return new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L).producerState(PRODUCER_ID, (short) 0, sequence, false)
            .append(sequence, null, ("v" + sequence).getBytes(StandardCharsets.UTF_8)).build();
    }

    private void producerTick() {
        schedule(5 + random.nextInt(20), "producer", this::producerTick);
        long now = scheduler.nowMs();
        if (inFlightSequence >= 0 && now - inFlightSentMs < PRODUCE_TIMEOUT_MS) {
            return;
        }
        if (inFlightSequence < 0) {
            if (nextSequence >= writesMax) {
                return;
            }
            inFlightSequence = nextSequence;
        }
        int leader = controller.partition().leader();
        if (leader < 0) {
            return;
        }
        long request = ++requestId;
        int sequence = inFlightSequence;
        inFlightSentMs = now;
        network.send(PRODUCER, leader, "produce seq " + sequence, () -> produceAt(brokers.get(leader), request, sequence));
    }

    private void produceAt(SimBroker broker, long request, int sequence) {
        if (!broker.alive) {
            return;
        }
        LogAppendInfo info;
        try {
            info = broker.appendAcksAll(batch(sequence));
        } catch (ErrorCodeException e) {
            answer(broker, request, sequence, e.error(), -1);
            return;
        }
        awaitAck(broker, broker.partition, request, sequence, info.firstOffset(), info.lastOffset() + 1, scheduler.nowMs());
    }

    /** The leader's DelayedProduce, as a polled check. */
    private void awaitAck(SimBroker broker, Partition partition, long request, int sequence, long firstOffset, long requiredOffset, long startMs) {
        if (!broker.alive || broker.partition != partition) {
            return;
        }
        ErrorCode outcome = partition.checkEnoughReplicasReachOffset(requiredOffset);
        if (outcome == null && scheduler.nowMs() - startMs < PRODUCE_TIMEOUT_MS) {
            schedule(2, "delayed produce seq " + sequence, () -> awaitAck(broker, partition, request, sequence, firstOffset, requiredOffset,
                startMs));
            return;
        }
        answer(broker, request, sequence, outcome == null ? ErrorCode.REQUEST_TIMED_OUT : outcome, firstOffset);
    }

    private void answer(SimBroker broker, long request, int sequence, ErrorCode error, long offset) {
        network.send(broker.id, PRODUCER, "produce answer seq " + sequence, () -> {
            if (request != requestId || sequence != inFlightSequence) {
                return;
            }
            if (error == ErrorCode.NONE) {
                Integer previous = acked.put(offset, sequence);
                if (previous != null && previous != sequence) {
                    fail("offset " + offset + " acknowledged for sequence " + previous + " and again for " + sequence);
                }
                inFlightSequence = -1;
                nextSequence++;
            } else {
                inFlightSentMs = 0; // retry at the next tick with the same sequence
            }
        });
    }

    // ---------------------------------------------------------------- faults

    void crash(int brokerId, int garbageBytes) {
        try {
            brokers.get(brokerId).crash(random, garbageBytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void restart(int brokerId) {
        try {
            SimBroker broker = brokers.get(brokerId);
            broker.restart();
            highWatermarkByBroker.remove(brokerId);
            broker.applyImage(controller.image());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Schedules {@code count} random faults over {@code spanMs}: crashes (with restarts), link cuts and heals, drop bursts. */
    void scheduleRandomFaults(int count, long spanMs) {
        for (int i = 0; i < count; i++) {
            long at = 200 + random.nextInt((int) spanMs);
            int kind = random.nextInt(4);
            int broker = 1 + random.nextInt(settings.replicationFactor());
            switch (kind) {
                case 0 -> {
                    int garbage = random.nextBoolean() ? 0 : 1 + random.nextInt(1024);
                    schedule(at, "crash " + broker, () -> crash(broker, garbage));
                    schedule(at + 100 + random.nextInt(3_000), "restart " + broker, () -> {
                        if (!brokers.get(broker).alive) {
                            restart(broker);
                        }
                    });
                }
                case 1 -> {
                    int other = random.nextBoolean() ? SimNetwork.CONTROLLER : 1 + random.nextInt(settings.replicationFactor());
                    if (other != broker) {
                        schedule(at, "cut " + broker + "-" + other, () -> network.cut(broker, other));
                        schedule(at + 100 + random.nextInt(4_000), "heal " + broker + "-" + other, () -> network.heal(broker, other));
                    }
                }
                case 2 -> {
                    schedule(at, "drops on", () -> network.dropPercent = 5 + random.nextInt(30));
                    schedule(at + 100 + random.nextInt(2_000), "drops off", () -> network.dropPercent = 0);
                }
                default -> {
                    for (int peer = 1; peer <= settings.replicationFactor(); peer++) {
                        int p = peer;
                        if (p != broker) {
                            schedule(at, "isolate " + broker, () -> network.cut(broker, p));
                        }
                    }
                    schedule(at, "isolate " + broker + " from controller", () -> network.cut(broker, SimNetwork.CONTROLLER));
                    schedule(at + 500 + random.nextInt(4_000), "heal all", network::healAll);
                }
            }
        }
    }

    /**
     * Schedules {@code count} faults aimed at divergence over {@code spanMs}: the leader of the moment
     * cut from the controller and every follower while the producer still reaches it (it appends an
     * uncommitted tail it can never commit with acks=all, the controller elects another leader, and
     * after the heal the old leader truncates by DivergingEpoch), the same twice in a row (leader
     * flips), a follower isolated long enough to leave the ISR, and the leader crashing right after a
     * producer append (losing its unflushed tail).
     */
    void scheduleDivergenceFaults(int count, long spanMs) {
        for (int i = 0; i < count; i++) {
            long at = 200 + random.nextInt((int) spanMs);
            long healAfterMs = SESSION_TIMEOUT_MS + 500 + random.nextInt(2_500);
            switch (random.nextInt(4)) {
                case 0 -> schedule(at, "isolate the leader from its cluster", () -> isolateLeaderFromCluster(healAfterMs));
                case 1 -> {
                    schedule(at, "isolate the leader from its cluster (flip 1)", () -> isolateLeaderFromCluster(healAfterMs));
                    schedule(at + healAfterMs + 100 + random.nextInt(500), "isolate the leader from its cluster (flip 2)",
                        () -> isolateLeaderFromCluster(SESSION_TIMEOUT_MS + 500 + random.nextInt(2_500)));
                }
                case 2 -> {
                    int broker = 1 + random.nextInt(settings.replicationFactor());
                    schedule(at, "isolate " + broker, () -> isolate(broker));
                    schedule(at + SimBroker.LAG_TIME_MAX_MS + random.nextInt(3_000), "reconnect " + broker, () -> reconnect(broker));
                }
                default -> {
                    int garbage = random.nextBoolean() ? 0 : 1 + random.nextInt(512);
                    schedule(at, "crash the leader after its next append", () -> crashLeaderAfterNextAppend(garbage));
                }
            }
        }
    }

    /** Cuts the current leader from the controller and the other brokers (not from the producer); heals those links after {@code healAfterMs}. */
    private void isolateLeaderFromCluster(long healAfterMs) {
        int leader = controller.partition().leader();
        if (leader < 0) {
            return;
        }
        List<Integer> peers = new ArrayList<>(brokers.keySet());
        peers.remove(Integer.valueOf(leader));
        peers.add(SimNetwork.CONTROLLER);
        for (int peer : peers) {
            network.cut(leader, peer);
        }
        schedule(healAfterMs, "heal leader " + leader + " with its cluster", () -> peers.forEach(peer -> network.heal(leader, peer)));
    }

    /** Crashes the current leader as soon as its log end offset moves (a producer append), then restarts it. */
    private void crashLeaderAfterNextAppend(int garbageBytes) {
        int leader = controller.partition().leader();
        if (leader < 0 || !brokers.get(leader).alive) {
            return;
        }
        SimBroker broker = brokers.get(leader);
        long endOffset = broker.log.logEndOffset();
        long giveUpAtMs = scheduler.nowMs() + 2_000;
        watchForAppend(broker, endOffset, giveUpAtMs, garbageBytes);
    }

    private void watchForAppend(SimBroker broker, long endOffset, long giveUpAtMs, int garbageBytes) {
        if (!broker.alive || scheduler.nowMs() > giveUpAtMs) {
            return;
        }
        if (broker.log.logEndOffset() == endOffset) {
            schedule(1, "watch " + broker.id + " for an append", () -> watchForAppend(broker, endOffset, giveUpAtMs, garbageBytes));
            return;
        }
        crash(broker.id, garbageBytes);
        schedule(100 + random.nextInt(2_000), "restart " + broker.id, () -> {
            if (!broker.alive) {
                restart(broker.id);
            }
        });
    }

    /** Truncations that removed records after a DivergingEpoch answer, over every broker of this run. */
    long divergingEpochTruncations() {
        return brokers.values().stream().mapToLong(broker -> broker.divergingEpochTruncations).sum();
    }

    // ---------------------------------------------------------------- running

    /** Runs events until {@code untilMs} of sim time, checking the invariants after every event. */
    void runUntil(long untilMs) {
        while (scheduler.nowMs() < untilMs && scheduler.runOne()) {
            events++;
            checkInvariants();
        }
    }

    /** Runs events for {@code durationMs} more of sim time. */
    void runFor(long durationMs) {
        runUntil(scheduler.nowMs() + durationMs);
    }

    /** Cuts {@code brokerId} from every other broker and from the controller (it keeps running). */
    void isolate(int brokerId) {
        for (int peer : brokers.keySet()) {
            if (peer != brokerId) {
                network.cut(brokerId, peer);
            }
        }
        network.cut(brokerId, SimNetwork.CONTROLLER);
        network.cut(brokerId, PRODUCER);
    }

    /** Reconnects {@code brokerId} to everything. */
    void reconnect(int brokerId) {
        for (int peer : brokers.keySet()) {
            network.heal(brokerId, peer);
        }
        network.heal(brokerId, SimNetwork.CONTROLLER);
        network.heal(brokerId, PRODUCER);
    }

    int ackedWrites() {
        return acked.size();
    }

    /** Heals everything, restarts crashed brokers, and runs until every replica holds the same log with all writes done. */
    void healAndConverge() {
        network.healAll();
        network.dropPercent = 0;
        for (SimBroker broker : brokers.values()) {
            if (!broker.alive) {
                restart(broker.id);
            }
        }
        long deadline = scheduler.nowMs() + CONVERGE_MS_MAX;
        while (!converged()) {
            if (scheduler.nowMs() > deadline || !scheduler.runOne()) {
                fail("no convergence within " + CONVERGE_MS_MAX + " ms: " + describe());
            }
            events++;
            checkInvariants();
        }
        List<String> first = batches(brokers.values().iterator().next().log, Long.MAX_VALUE);
        for (SimBroker broker : brokers.values()) {
            List<String> mine = batches(broker.log, Long.MAX_VALUE);
            if (!mine.equals(first)) {
                fail("final logs differ: broker " + broker.id + " " + mine + " vs " + first);
            }
        }
        checkAckedPresent(brokers.values().stream().map(b -> b.id).toList());
    }

    boolean converged() {
        PartitionRegistration partition = controller.partition();
        if (partition.leader() < 0 || partition.isr().length != settings.replicationFactor() || inFlightSequence >= 0 || nextSequence < writesMax) {
            return false;
        }
        SimBroker leader = brokers.get(partition.leader());
        long end = leader.log.logEndOffset();
        for (SimBroker broker : brokers.values()) {
            if (!broker.alive || broker.log.logEndOffset() != end || broker.log.highWatermark() != end
                || broker.image().offset() != controller.image().offset()) {
                return false;
            }
        }
        return true;
    }

    String describe() {
        StringBuilder text = new StringBuilder(settings + " at " + scheduler.nowMs() + "ms after " + events + " events (last: "
            + scheduler.lastEvent() + "); registration " + controller.partition() + "; acked " + acked.size() + " of " + nextSequence);
        for (SimBroker broker : brokers.values()) {
            text.append("\n  broker ").append(broker.id).append(broker.alive ? "" : " (down)").append(" epoch ").append(broker.brokerEpoch)
                .append(' ').append(broker.partition).append(" leo ").append(broker.log.isClosed() ? -1 : broker.log.logEndOffset())
                .append(" hw ").append(broker.log.isClosed() ? -1 : broker.log.highWatermark())
                .append(broker.log.isClosed() ? "" : " " + batches(broker.log, Long.MAX_VALUE));
        }
        return text.toString();
    }

    private void fail(String message) {
        throw new AssertionError(settings + ": " + message + "\n" + describe());
    }

    // ---------------------------------------------------------------- invariants

    /** "base-last@epoch#crc" of every batch ending below {@code belowOffset}. */
    static List<String> batches(UnifiedLog log, long belowOffset) {
        List<String> result = new ArrayList<>();
        long end = Math.min(belowOffset, log.logEndOffset());
        long offset = log.logStartOffset();
        while (offset < end) {
            MemoryRecords records = MemoryRecords.of(log.read(offset, Integer.MAX_VALUE, FetchIsolation.LOG_END, true).records());
            long next = offset;
            for (RecordBatch raw : records.batches()) {
                DefaultRecordBatch batch = (DefaultRecordBatch) raw;
                if (batch.lastOffset() >= end) {
                    return result;
                }
                result.add(batch.baseOffset() + "-" + batch.lastOffset() + "@" + batch.partitionLeaderEpoch() + "#" + batch.checksum()
                    + "s" + batch.baseSequence());
                next = batch.lastOffset() + 1;
            }
            if (next == offset) {
                break;
            }
            offset = next;
        }
        return result;
    }

    void checkInvariants() {
        PartitionRegistration registration = controller.partition();
        checkRegistration(registration);
        long minHighWatermark = Long.MAX_VALUE;
        for (SimBroker broker : brokers.values()) {
            if (!broker.alive) {
                continue;
            }
            long hw = broker.log.highWatermark();
            int epoch = broker.partition.leaderEpoch();
            long[] last = highWatermarkByBroker.get(broker.id);
            if (last != null && last[0] == epoch && hw < last[1]) {
                fail("the high watermark of broker " + broker.id + " went back from " + last[1] + " to " + hw + " in leader epoch " + epoch);
            }
            highWatermarkByBroker.put(broker.id, new long[] {epoch, hw});
            committedOffset = Math.max(committedOffset, hw);
            minHighWatermark = Math.min(minHighWatermark, hw);
            if (broker.partition.isLeader()) {
                Integer previous = leaderOfEpoch.putIfAbsent(epoch, broker.id);
                if (previous != null && previous != broker.id) {
                    fail("two leaders in leader epoch " + epoch + ": " + previous + " and " + broker.id);
                }
                if (!broker.partition.highWatermarkBelowEpochStart() && broker.log.logEndOffset() < committedOffset) {
                    fail("leader " + broker.id + " ends at " + broker.log.logEndOffset() + " below the committed offset " + committedOffset);
                }
            }
            if (broker.violation != null) {
                fail(broker.violation);
            }
            if (broker.failedPartitions.size() > 0) {
                fail("the fetcher of broker " + broker.id + " failed the partition");
            }
        }
        List<Integer> isr = new ArrayList<>();
        for (int member : registration.isr()) {
            isr.add(member);
        }
        checkAckedPresent(isr);
        checkCommittedPrefixIdentical(minHighWatermark);
    }

    private void checkRegistration(PartitionRegistration registration) {
        if (registration.leader() >= 0 && !registration.inIsr(registration.leader())) {
            fail("leader " + registration.leader() + " not in the ISR");
        }
        for (int member : registration.elr()) {
            if (registration.inIsr(member)) {
                fail("broker " + member + " in both the ISR and the ELR");
            }
        }
        if (settings.elr() && registration.isr().length >= settings.minIsr() && registration.elr().length > 0) {
            fail("ELR not empty with the ISR at min ISR");
        }
    }

    private void checkAckedPresent(List<Integer> members) {
        if (acked.isEmpty()) {
            return;
        }
        for (int member : members) {
            SimBroker broker = brokers.get(member);
            if (!broker.alive) {
                continue;
            }
            Map<Long, Integer> held = sequencesByOffset(broker.log);
            for (Map.Entry<Long, Integer> write : acked.entrySet()) {
                if (!write.getValue().equals(held.get(write.getKey()))) {
                    fail("acknowledged sequence " + write.getValue() + " at offset " + write.getKey() + " missing on ISR member " + member
                        + " (holds " + held.get(write.getKey()) + ")");
                }
            }
        }
    }

    private static Map<Long, Integer> sequencesByOffset(UnifiedLog log) {
        Map<Long, Integer> held = new LinkedHashMap<>();
        for (String batch : batches(log, Long.MAX_VALUE)) {
            long base = Long.parseLong(batch.substring(0, batch.indexOf('-')));
            held.put(base, Integer.parseInt(batch.substring(batch.indexOf('s') + 1)));
        }
        return held;
    }

    private void checkCommittedPrefixIdentical(long minHighWatermark) {
        if (minHighWatermark == Long.MAX_VALUE || minHighWatermark == 0) {
            return;
        }
        List<String> reference = null;
        int referenceId = -1;
        for (SimBroker broker : brokers.values()) {
            if (!broker.alive) {
                continue;
            }
            List<String> mine = batches(broker.log, minHighWatermark);
            if (reference == null) {
                reference = mine;
                referenceId = broker.id;
            } else if (!mine.equals(reference)) {
                fail("batches below the high watermark " + minHighWatermark + " differ: broker " + broker.id + " " + mine + ", broker "
                    + referenceId + " " + reference);
            }
        }
    }

    @Override
    public void close() throws IOException {
        for (SimBroker broker : brokers.values()) {
            broker.close();
        }
        logScheduler.shutdownNow();
    }
}
