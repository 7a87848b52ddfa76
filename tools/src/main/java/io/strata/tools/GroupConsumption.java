package io.strata.tools;

import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.ConsumedRecord;
import io.strata.tools.client.GroupConsumerMember;
import io.strata.tools.client.IsolationLevel;
import io.strata.tools.client.TopicConsumer;
import io.strata.tools.client.TopicInfo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * {@code strata consume --group NAME}: reads the partitions the group's coordinator assigns to
 * this member (consumer protocol, KIP-848) and commits what was printed, as Kafka's console
 * consumer does with {@code --group}.
 *
 * <p>Positions: a partition starts at the group's committed offset, or, if the group has none
 * for it, at the beginning ({@code --from-beginning}) or the end. What is committed is the
 * offset after the last record printed (not merely fetched): records a poll returned but the
 * command did not print (it stopped at {@code --max-messages}) are read again by the group's
 * next member. Commits happen every {@value #AUTO_COMMIT_INTERVAL_MS} ms (Kafka's
 * {@code auto.commit.interval.ms} default), before a partition is revoked, and on close, which
 * also leaves the group so its partitions move at once.
 *
 * <p>Not thread-safe.
 */
final class GroupConsumption implements GroupConsumerMember.Listener, ConsumeCommand.RecordSource {
    /** Kafka's {@code auto.commit.interval.ms} default. */
    static final long AUTO_COMMIT_INTERVAL_MS = 5_000;

    private final ClusterClient cluster;
    private final GroupConsumerMember member;
    private final IsolationLevel isolation;
    private final TopicConsumer.OffsetReset reset;
    private final Consumer<String> notices;
    /** Reads the owned partitions; null while the member owns none. */
    private TopicConsumer consumer;
    /** The records of the last poll, and how many of them (from the front) were printed. */
    private List<ConsumedRecord> lastPoll = List.of();
    private int printedOfLastPoll;
    private long nextCommitMs;

    GroupConsumption(ClusterClient cluster, String groupId, TopicInfo topic, String memberId, IsolationLevel isolation,
                     TopicConsumer.OffsetReset reset, Consumer<String> notices) {
        this.cluster = cluster;
        this.isolation = isolation;
        this.reset = reset;
        this.notices = notices;
        this.member = new GroupConsumerMember(cluster, groupId, topic, memberId, GroupConsumerMember.DEFAULT_REBALANCE_TIMEOUT_MS, this);
        this.nextCommitMs = cluster.time().hiResClockMs() + AUTO_COMMIT_INTERVAL_MS;
    }

    GroupConsumerMember member() {
        return member;
    }

    @Override
    public List<ConsumedRecord> poll(int maxWaitMs) {
        long nowMs = cluster.time().hiResClockMs();
        member.poll(nowMs); // may revoke, lose or add partitions through the listener methods
        maybeCommit(nowMs);
        nowMs = cluster.time().hiResClockMs();
        int waitMs = (int) Math.max(0, Math.min(maxWaitMs, member.nextHeartbeatMs() - nowMs));
        List<ConsumedRecord> records;
        if (consumer == null) {
            sleep(waitMs);
            records = List.of();
        } else {
            records = consumer.poll(waitMs);
        }
        lastPoll = records;
        printedOfLastPoll = 0;
        return records;
    }

    @Override
    public void printed(ConsumedRecord record) {
        if (printedOfLastPoll >= lastPoll.size() || lastPoll.get(printedOfLastPoll) != record) {
            throw new IllegalStateException("records must be printed in the order poll returned them: expected index "
                + printedOfLastPoll + " of " + lastPoll.size());
        }
        printedOfLastPoll++;
    }

    /** Commits what was printed, then leaves the group. */
    @Override
    public void close() {
        try {
            commit(committablePositions(member.owned()), "closing");
        } finally {
            member.leave();
        }
    }

    private void maybeCommit(long nowMs) {
        if (nowMs < nextCommitMs) {
            return;
        }
        nextCommitMs = nowMs + AUTO_COMMIT_INTERVAL_MS;
        commit(committablePositions(member.owned()), "auto-commit");
    }

    private void commit(Map<Integer, Long> offsets, String why) {
        GroupConsumerMember.CommitResult result = member.commit(offsets);
        if (result == GroupConsumerMember.CommitResult.REFUSED) {
            notices.accept(why + ": the coordinator refused the commit (the member is being fenced); it rejoins the group");
        }
    }

    /**
     * The next offset to read per partition, counting only printed records: a partition with
     * an unprinted record of the last poll resumes at that record.
     */
    private Map<Integer, Long> committablePositions(Set<Integer> partitions) {
        Map<Integer, Long> positions = new TreeMap<>();
        if (consumer == null) {
            return positions;
        }
        Map<Integer, Long> fetched = consumer.positions();
        for (int partition : partitions) {
            Long position = fetched.get(partition);
            if (position != null) {
                positions.put(partition, position);
            }
        }
        for (int i = lastPoll.size() - 1; i >= printedOfLastPoll; i--) {
            ConsumedRecord unprinted = lastPoll.get(i);
            if (positions.containsKey(unprinted.partition())) {
                positions.put(unprinted.partition(), unprinted.offset());
            }
        }
        return positions;
    }

    @Override
    public void onRevoked(Set<Integer> partitions) {
        Map<Integer, Long> kept = committablePositions(currentPartitions());
        Map<Integer, Long> revoked = new TreeMap<>(kept);
        revoked.keySet().retainAll(partitions);
        commit(revoked, "revoking " + partitions);
        Set<Integer> remaining = new TreeSet<>(currentPartitions());
        remaining.removeAll(partitions);
        rebuild(remaining, kept);
    }

    @Override
    public void onLost(Set<Integer> partitions) {
        notices.accept("lost partitions " + partitions + " of " + member.topic().name() + " (fenced by the coordinator); rejoining");
        Set<Integer> remaining = new TreeSet<>(currentPartitions());
        remaining.removeAll(partitions);
        rebuild(remaining, committablePositions(remaining));
    }

    @Override
    public void onAssigned(Set<Integer> partitions) {
        Map<Integer, Long> positions = committablePositions(currentPartitions());
        Map<Integer, Long> committed = member.committedOffsets();
        List<Integer> withoutCommit = new ArrayList<>();
        for (int partition : partitions) {
            Long offset = committed.get(partition);
            if (offset != null) {
                positions.put(partition, offset);
            } else {
                withoutCommit.add(partition);
            }
        }
        Set<Integer> target = new TreeSet<>(currentPartitions());
        target.addAll(partitions);
        rebuild(target, positions);
        if (!withoutCommit.isEmpty()) {
            long timestamp = reset == TopicConsumer.OffsetReset.EARLIEST ? TopicConsumer.EARLIEST_TIMESTAMP : TopicConsumer.LATEST_TIMESTAMP;
            for (Map.Entry<Integer, Long> entry : consumer.listOffsets(withoutCommit, timestamp).entrySet()) {
                consumer.seek(entry.getKey(), entry.getValue());
            }
        }
    }

    private Set<Integer> currentPartitions() {
        return consumer == null ? Set.of() : Set.copyOf(consumer.partitions());
    }

    /**
     * Replaces the consumer by one reading exactly {@code partitions}, each from its entry in
     * {@code positions}; a partition without one must be sought by the caller before the next poll.
     */
    private void rebuild(Set<Integer> partitions, Map<Integer, Long> positions) {
        lastPoll = List.of();
        printedOfLastPoll = 0;
        if (partitions.isEmpty()) {
            consumer = null;
            return;
        }
        consumer = new TopicConsumer(cluster, member.topic(), new ArrayList<>(new TreeSet<>(partitions)), isolation, reset, notices);
        for (int partition : partitions) {
            Long position = positions.get(partition);
            if (position != null) {
                consumer.seek(partition, position);
            }
        }
    }

    private void sleep(int ms) {
        if (ms <= 0) {
            return;
        }
        try {
            cluster.time().sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
