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
 * a leader's high watermark is at most the fetch offset it recorded for each member of its maximal
 * ISR, and below it each running member holds exactly the leader's batches; every acknowledged
 * write is at its offset on every running ISR member, on at least min ISR replicas (a crashed one
 * counts by what survived the crash) and, with ELR on, on every member of ISR ∪ ELR; the batches
 * below the smallest high watermark are identical (offsets, epoch, CRC) on every running replica;
 * the leader is in the ISR; ELR ∩ ISR = ∅, (ELR on) ISR ≥ min ISR ⇒ ELR empty, (ELR off) ELR
 * empty, |ISR| + |ELR| ≤ RF; one leader per leader epoch; no follower truncates below its high
 * watermark. Without {@link Settings#unclean} no acknowledged write may be lost.
 *
 * <p>With {@link Settings#unclean} the topic enables {@code unclean.leader.election.enable}: at
 * each unclean election the writes acknowledged so far (and those a deposed leader acknowledges
 * in an older epoch) may be lost and are forgotten; the committed offset counts only leaders
 * since the last unclean election, the identical-prefix check only ISR members, a follower may
 * truncate below its high watermark, and the producer starts over as a new producer id on
 * OUT_OF_ORDER_SEQUENCE_NUMBER (the unclean leader lacks its last writes), as the Java producer
 * does since KIP-360. Everything else holds, and the final logs are identical and hold every
 * write acknowledged since the last unclean election.
 */
final class ReplicationSimulation implements AutoCloseable {
    /** One run's shape. */
    record Settings(long seed, int replicationFactor, int minIsr, boolean elr, boolean unclean) {
        Settings(long seed, int replicationFactor, int minIsr, boolean elr) {
            this(seed, replicationFactor, minIsr, elr, false);
        }

        @Override
        public String toString() {
            return "seed=" + seed + " rf=" + replicationFactor + " minIsr=" + minIsr + " elr=" + elr + (unclean ? " unclean" : "");
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

    // unclean elections (Settings.unclean)
    private int uncleanElections;
    /** The leader epoch of the last unclean election, -1 before any. */
    private int uncleanEpoch = -1;
    /** Acknowledged writes an unclean election allowed to lose: no longer checked. */
    private long forgottenAcks;

    // producer state: "sequence" below is the write's number; on the wire it is the producer
    // sequence relative to the producer id's first write (producerId - PRODUCER_ID).
    private long producerId = PRODUCER_ID;
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
        this.controller = new SimController(replicas, settings.minIsr(), settings.elr(), settings.unclean(), SESSION_TIMEOUT_MS, this::publish,
            this::onUncleanElection);
        for (int id : replicas) {
            brokers.put(id, new SimBroker(id, root.resolve("broker-" + id), settings.minIsr(), settings.elr(), settings.unclean(), scheduler, network,
                controller, brokers, logScheduler));
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

    /** Write {@code sequence} as producer {@code producerId}, whose first write was {@code producerId - PRODUCER_ID}. */
    private static MemoryRecords batch(long producerId, int sequence) {
        int wireSequence = sequence - (int) (producerId - PRODUCER_ID);
        return new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L).producerState(producerId, (short) 0, wireSequence, false)
            .append(sequence, null, ("v" + sequence).getBytes(StandardCharsets.UTF_8)).build();
    }

    /**
     * An unclean election (the controller chose a leader outside the ISR and ELR): the writes
     * acknowledged so far, and those a deposed leader acknowledges in an older epoch, may be lost;
     * the invariants forget them and hold again for every write acknowledged from the new epoch on.
     */
    private void onUncleanElection(PartitionRegistration registration) {
        uncleanElections++;
        uncleanEpoch = registration.leaderEpoch();
        forgottenAcks += acked.size();
        acked.clear();
        committedOffset = 0;
    }

    int uncleanElections() {
        return uncleanElections;
    }

    long forgottenAcks() {
        return forgottenAcks;
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
        long asProducer = producerId;
        inFlightSentMs = now;
        network.send(PRODUCER, leader, "produce seq " + sequence, () -> produceAt(brokers.get(leader), request, asProducer, sequence));
    }

    private void produceAt(SimBroker broker, long request, long asProducer, int sequence) {
        if (!broker.alive) {
            return;
        }
        int leaderEpoch = broker.partition.leaderEpoch();
        LogAppendInfo info;
        try {
            info = broker.appendAcksAll(batch(asProducer, sequence));
        } catch (ErrorCodeException e) {
            answer(broker, request, sequence, leaderEpoch, e.error(), -1);
            return;
        }
        awaitAck(broker, broker.partition, request, sequence, leaderEpoch, info.firstOffset(), info.lastOffset() + 1, scheduler.nowMs());
    }

    /** The leader's DelayedProduce, as a polled check. */
    private void awaitAck(SimBroker broker, Partition partition, long request, int sequence, int leaderEpoch, long firstOffset, long requiredOffset,
                          long startMs) {
        if (!broker.alive || broker.partition != partition) {
            return;
        }
        ErrorCode outcome = partition.checkEnoughReplicasReachOffset(requiredOffset);
        if (outcome == null && scheduler.nowMs() - startMs < PRODUCE_TIMEOUT_MS) {
            schedule(2, "delayed produce seq " + sequence, () -> awaitAck(broker, partition, request, sequence, leaderEpoch, firstOffset,
                requiredOffset, startMs));
            return;
        }
        answer(broker, request, sequence, leaderEpoch, outcome == null ? ErrorCode.REQUEST_TIMED_OUT : outcome, firstOffset);
    }

    private void answer(SimBroker broker, long request, int sequence, int leaderEpoch, ErrorCode error, long offset) {
        network.send(broker.id, PRODUCER, "produce answer seq " + sequence, () -> {
            if (request != requestId || sequence != inFlightSequence) {
                return;
            }
            if (error == ErrorCode.NONE && leaderEpoch < uncleanEpoch) {
                // Acknowledged by a leader an unclean election deposed: the write may be gone.
                forgottenAcks++;
                inFlightSequence = -1;
                nextSequence++;
            } else if (error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER && settings.unclean()) {
                // The unclean leader lacks this producer's last writes: as the Java producer after KIP-360,
                // start over as a new producer (here: a new id whose first write is this one) and retry.
                if (producerId == PRODUCER_ID + sequence) {
                    fail("OUT_OF_ORDER_SEQUENCE_NUMBER for the first write of producer " + producerId);
                }
                producerId = PRODUCER_ID + sequence;
                inFlightSentMs = 0;
            } else if (error == ErrorCode.NONE) {
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
     * flips), a follower isolated long enough to leave the ISR, the leader crashing right after a
     * producer append (losing its unflushed tail), the ISR shrunk to the leader alone right after an
     * append and then a failover ({@link #shrinkIsrThenFailOver}), and a follower left holding a tail
     * the next leader lacks ({@link #divergeAFollowerThenFailOver}).
     */
    void scheduleDivergenceFaults(int count, long spanMs) {
        for (int i = 0; i < count; i++) {
            long at = 200 + random.nextInt((int) spanMs);
            long healAfterMs = SESSION_TIMEOUT_MS + 500 + random.nextInt(2_500);
            switch (random.nextInt(6)) {
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
                case 3 -> {
                    int garbage = random.nextBoolean() ? 0 : 1 + random.nextInt(512);
                    schedule(at, "crash the leader after its next append", () -> crashLeaderAfterNextAppend(garbage));
                }
                case 4 -> schedule(at, "shrink the ISR to the leader after its next append, then fail over", this::shrinkIsrThenFailOver);
                default -> schedule(at, "leave a follower a tail the next leader lacks, then fail over", this::divergeAFollowerThenFailOver);
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
        watch("broker " + leader + " appended", () -> broker.log.logEndOffset() != endOffset, () -> broker.alive, () -> crashAndRestart(broker,
            garbageBytes), () -> { });
    }

    private void crashAndRestart(SimBroker broker, int garbageBytes) {
        crash(broker.id, garbageBytes);
        schedule(100 + random.nextInt(2_000), "restart " + broker.id, () -> {
            if (!broker.alive) {
                restart(broker.id);
            }
        });
    }

    /**
     * The KIP-966 path with an uncommitted tail: right after the leader's next append it is cut from
     * every follower (not from the controller or the producer), so it shrinks the ISR to itself (the
     * others enter the ELR when ISR &lt; min ISR) holding a tail no follower has; then it is cut from the
     * controller too, which fences it and elects a follower (from the ELR); after the heal the old
     * leader must truncate that tail by DivergingEpoch. Under strict min ISR its high watermark must
     * not have moved over the tail meanwhile.
     */
    private void shrinkIsrThenFailOver() {
        int leader = controller.partition().leader();
        if (leader < 0 || !brokers.get(leader).alive || settings.replicationFactor() < 2) {
            return;
        }
        SimBroker broker = brokers.get(leader);
        long endOffset = broker.log.logEndOffset();
        watch("broker " + leader + " appended", () -> broker.log.logEndOffset() != endOffset, () -> broker.alive, () -> {
            List<Integer> followers = new ArrayList<>(brokers.keySet());
            followers.remove(Integer.valueOf(leader));
            followers.forEach(follower -> network.cut(leader, follower));
            long shrinkMs = SimBroker.LAG_TIME_MAX_MS + 500 + random.nextInt(1_500);
            long fenceMs = SESSION_TIMEOUT_MS + 500 + random.nextInt(2_000);
            schedule(shrinkMs, "cut the shrunk leader " + leader + " from the controller", () -> network.cut(leader, SimNetwork.CONTROLLER));
            schedule(shrinkMs + fenceMs, "heal the shrunk leader " + leader, () -> {
                followers.forEach(follower -> network.heal(leader, follower));
                network.heal(leader, SimNetwork.CONTROLLER);
            });
        }, () -> { });
    }

    /**
     * A follower fetches a tail the next leader lacks, then the leader crashes: the leader is cut from
     * the ISR member the controller elects next (the first in assignment order), and crashes once
     * another ISR member holds its whole log; that member is cut from the new leader until the
     * producer's retry has landed there. The new leader takes the retry at the tail's offsets in its
     * new epoch, and the diverged follower's next Fetch gets a DivergingEpoch: the leader must not
     * record that fetch's offset (it would count, and take into the ISR, a tail it does not hold).
     */
    private void divergeAFollowerThenFailOver() {
        PartitionRegistration registration = controller.partition();
        int leader = registration.leader();
        if (leader < 0 || !brokers.get(leader).alive) {
            return;
        }
        int next = -1;
        int diverging = -1;
        for (int replica : registration.replicas()) {
            if (replica != leader && registration.inIsr(replica) && brokers.get(replica).alive) {
                if (next < 0) {
                    next = replica;
                } else if (diverging < 0) {
                    diverging = replica;
                }
            }
        }
        if (diverging < 0) {
            return;
        }
        SimBroker leaderBroker = brokers.get(leader);
        SimBroker nextBroker = brokers.get(next);
        SimBroker divergingBroker = brokers.get(diverging);
        int nextLeader = next;
        int divergingId = diverging;
        network.cut(leader, nextLeader);
        watch("broker " + diverging + " holds a tail broker " + next + " lacks",
            () -> divergingBroker.alive && nextBroker.alive && divergingBroker.log.logEndOffset() > nextBroker.log.logEndOffset()
                && divergingBroker.log.logEndOffset() == leaderBroker.log.logEndOffset(),
            () -> leaderBroker.alive, () -> {
                network.heal(leader, nextLeader);
                crashAndRestart(leaderBroker, 0);
                // The diverged follower reaches the new leader only after the producer's retry did (its in-flight write times out first).
                network.cut(divergingId, nextLeader);
                schedule(PRODUCE_TIMEOUT_MS + 500 + random.nextInt(2_000), "heal " + divergingId + "-" + nextLeader,
                    () -> network.heal(divergingId, nextLeader));
            }, () -> network.heal(leader, nextLeader));
    }

    /**
     * Runs {@code action} at the first millisecond {@code condition} holds, checking every millisecond
     * for at most 2 s while {@code stillValid} holds; else runs {@code giveUp}.
     */
    private void watch(String what, java.util.function.BooleanSupplier condition, java.util.function.BooleanSupplier stillValid, Runnable action,
                       Runnable giveUp) {
        long giveUpAtMs = scheduler.nowMs() + 2_000;
        watchStep(what, condition, stillValid, action, giveUp, giveUpAtMs);
    }

    private void watchStep(String what, java.util.function.BooleanSupplier condition, java.util.function.BooleanSupplier stillValid,
                           Runnable action, Runnable giveUp, long giveUpAtMs) {
        if (!stillValid.getAsBoolean() || scheduler.nowMs() > giveUpAtMs) {
            giveUp.run();
            return;
        }
        if (condition.getAsBoolean()) {
            action.run();
            return;
        }
        schedule(1, "watch: " + what, () -> watchStep(what, condition, stillValid, action, giveUp, giveUpAtMs));
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
        Map<Integer, List<Batch>> logs = new HashMap<>();
        brokers.values().forEach(broker -> logs.put(broker.id, batchList(broker.log, Long.MAX_VALUE)));
        checkAckedPresent(new ArrayList<>(brokers.keySet()), logs);
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

    /**
     * One batch as the invariants compare it: offsets, leader epoch, CRC and the write number of its
     * first record ({@code baseSequence}: the producer sequence plus the producer id's first write).
     */
    record Batch(long baseOffset, long lastOffset, int leaderEpoch, long crc, int baseSequence) {
        @Override
        public String toString() {
            return baseOffset + "-" + lastOffset + "@" + leaderEpoch + "#" + crc + "s" + baseSequence;
        }
    }

    /** "base-last@epoch#crc" of every batch ending below {@code belowOffset}. */
    static List<String> batches(UnifiedLog log, long belowOffset) {
        return batchList(log, belowOffset).stream().map(Batch::toString).toList();
    }

    /** Every batch ending below {@code belowOffset}, in offset order. */
    static List<Batch> batchList(UnifiedLog log, long belowOffset) {
        List<Batch> result = new ArrayList<>();
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
                result.add(new Batch(batch.baseOffset(), batch.lastOffset(), batch.partitionLeaderEpoch(), batch.checksum(),
                    batch.baseSequence() + (int) (batch.producerId() - PRODUCER_ID)));
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
        Map<Integer, List<Batch>> logs = new HashMap<>();
        long minHighWatermark = Long.MAX_VALUE;
        for (SimBroker broker : brokers.values()) {
            if (!broker.alive) {
                continue;
            }
            logs.put(broker.id, batchList(broker.log, Long.MAX_VALUE));
            long hw = broker.log.highWatermark();
            int epoch = broker.partition.leaderEpoch();
            // With unclean elections a restarted replica, or a leader an unclean election deposed, may
            // hold a high watermark of a history the unclean leader never had: only leaders since the
            // last unclean election count for the committed offset then (and ISR members for the prefix).
            boolean counts = !settings.unclean() || broker.partition.isLeader() && epoch >= uncleanEpoch;
            long[] last = highWatermarkByBroker.get(broker.id);
            if (counts && last != null && last[0] == epoch && hw < last[1]) {
                fail("the high watermark of broker " + broker.id + " went back from " + last[1] + " to " + hw + " in leader epoch " + epoch);
            }
            if (counts) {
                highWatermarkByBroker.put(broker.id, new long[] {epoch, hw});
                committedOffset = Math.max(committedOffset, hw);
            }
            if (!settings.unclean() || registration.inIsr(broker.id)) {
                minHighWatermark = Math.min(minHighWatermark, hw);
            }
            if (broker.partition.isLeader()) {
                Integer previous = leaderOfEpoch.putIfAbsent(epoch, broker.id);
                if (previous != null && previous != broker.id) {
                    fail("two leaders in leader epoch " + epoch + ": " + previous + " and " + broker.id);
                }
                if (counts && !broker.partition.highWatermarkBelowEpochStart() && broker.log.logEndOffset() < committedOffset) {
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
        for (SimBroker broker : brokers.values()) {
            if (broker.alive && broker.partition.isLeader()) {
                checkLeaderHighWatermarkOnItsIsr(broker, logs);
            }
        }
        checkAckedPresent(members(registration.isr()), logs);
        checkAckedReplicated(registration, logs);
        if (settings.unclean()) {
            Map<Integer, List<Batch>> isrLogs = new HashMap<>(logs);
            isrLogs.keySet().retainAll(members(registration.isr()));
            checkCommittedPrefixIdentical(minHighWatermark, isrLogs);
        } else {
            checkCommittedPrefixIdentical(minHighWatermark, logs);
        }
    }

    private static List<Integer> members(int[] ids) {
        List<Integer> result = new ArrayList<>();
        for (int id : ids) {
            result.add(id);
        }
        return result;
    }

    /**
     * A serving (or stale) leader's high watermark is at most the fetch offset it recorded for
     * every member of its maximal ISR, and below it every running member holds exactly the
     * leader's batches: the high watermark only covers what the whole ISR really replicated.
     */
    private void checkLeaderHighWatermarkOnItsIsr(SimBroker leader, Map<Integer, List<Batch>> logs) {
        long hw = leader.log.highWatermark();
        if (hw == 0) {
            return;
        }
        List<Batch> reference = below(logs.get(leader.id), hw);
        for (int member : leader.partition.partitionState().maximalIsr()) {
            if (member == leader.id) {
                continue;
            }
            RemoteReplica remote = leader.partition.remoteReplica(member);
            if (remote != null && remote.logEndOffset() >= 0 && remote.logEndOffset() < hw) {
                fail("leader " + leader.id + " has high watermark " + hw + " above the fetch offset " + remote.logEndOffset()
                    + " it recorded for ISR member " + member);
            }
            List<Batch> held = logs.get(member);
            if (held != null && !below(held, hw).equals(reference)) {
                fail("leader " + leader.id + " has high watermark " + hw + " but ISR member " + member + " holds other batches below it: "
                    + below(held, hw) + " vs " + reference);
            }
        }
    }

    private static List<Batch> below(List<Batch> batches, long offset) {
        int end = 0;
        while (end < batches.size() && batches.get(end).lastOffset() < offset) {
            end++;
        }
        return batches.subList(0, end);
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
        if (!settings.elr() && registration.elr().length > 0) {
            fail("ELR " + java.util.Arrays.toString(registration.elr()) + " without the ELR feature");
        }
        if (registration.isr().length + registration.elr().length > settings.replicationFactor()) {
            fail("ISR and ELR hold more members than the " + settings.replicationFactor() + " replicas");
        }
    }

    /** Every acknowledged write is at its offset on every running broker of {@code members}. */
    private void checkAckedPresent(List<Integer> members, Map<Integer, List<Batch>> logs) {
        if (acked.isEmpty()) {
            return;
        }
        for (int member : members) {
            List<Batch> held = logs.get(member);
            if (held == null) {
                continue;
            }
            Map<Long, Integer> sequences = sequencesByOffset(held);
            for (Map.Entry<Long, Integer> write : acked.entrySet()) {
                if (!write.getValue().equals(sequences.get(write.getKey()))) {
                    fail("acknowledged sequence " + write.getValue() + " at offset " + write.getKey() + " missing on ISR member " + member
                        + " (holds " + sequences.get(write.getKey()) + ")");
                }
            }
        }
    }

    /**
     * Every acknowledged acks=all write is durable on at least the effective min ISR replicas
     * (running: their log; crashed: what survived the crash), and with ELR on every member of
     * ISR ∪ ELR holds it (KIP-966: the ELR keeps exactly the replicas that hold the committed data).
     */
    private void checkAckedReplicated(PartitionRegistration registration, Map<Integer, List<Batch>> logs) {
        if (acked.isEmpty()) {
            return;
        }
        Map<Integer, Map<Long, Integer>> held = new HashMap<>();
        for (SimBroker broker : brokers.values()) {
            List<Batch> batches = broker.alive ? logs.get(broker.id) : broker.durableBatches;
            held.put(broker.id, batches == null ? Map.of() : sequencesByOffset(batches));
        }
        int minIsr = Math.min(settings.minIsr(), settings.replicationFactor());
        List<Integer> eligible = members(registration.isr());
        if (settings.elr()) {
            eligible.addAll(members(registration.elr()));
        }
        for (Map.Entry<Long, Integer> write : acked.entrySet()) {
            int copies = 0;
            for (Map<Long, Integer> sequences : held.values()) {
                if (write.getValue().equals(sequences.get(write.getKey()))) {
                    copies++;
                }
            }
            if (copies < minIsr) {
                fail("acknowledged sequence " + write.getValue() + " at offset " + write.getKey() + " is on " + copies
                    + " replicas, below min ISR " + minIsr);
            }
            if (!settings.elr()) {
                continue;
            }
            for (int member : eligible) {
                if (!write.getValue().equals(held.get(member).get(write.getKey()))) {
                    fail("acknowledged sequence " + write.getValue() + " at offset " + write.getKey() + " missing on ISR/ELR member " + member
                        + (brokers.get(member).alive ? "" : " (crashed)"));
                }
            }
        }
    }

    private static Map<Long, Integer> sequencesByOffset(List<Batch> batches) {
        Map<Long, Integer> held = new HashMap<>();
        for (Batch batch : batches) {
            held.put(batch.baseOffset(), batch.baseSequence());
        }
        return held;
    }

    private void checkCommittedPrefixIdentical(long minHighWatermark, Map<Integer, List<Batch>> logs) {
        if (minHighWatermark == Long.MAX_VALUE || minHighWatermark == 0) {
            return;
        }
        List<Batch> reference = null;
        int referenceId = -1;
        for (Map.Entry<Integer, List<Batch>> entry : logs.entrySet()) {
            List<Batch> mine = below(entry.getValue(), minHighWatermark);
            if (reference == null) {
                reference = mine;
                referenceId = entry.getKey();
            } else if (!mine.equals(reference)) {
                fail("batches below the high watermark " + minHighWatermark + " differ: broker " + entry.getKey() + " " + mine + ", broker "
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
