package io.strata.coordinator;

import io.strata.coordinator.group.CoordinatorLog;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Which partition of a coordinator's internal topic holds a group ({@code __consumer_offsets})
 * or a transactional id ({@code __transaction_state}), and the one-time move of state that
 * Strata's earlier placement put elsewhere.
 *
 * <p>Kafka places an id at {@code abs(id.hashCode()) % partitions}, with {@code abs} of
 * {@code Integer.MIN_VALUE} taken as 0 ({@link #partitionFor}). Strata releases before this one
 * used {@code (hashCode & 0x7fffffff) % partitions} ({@link #legacyPartitionFor}): the same for
 * every id whose hash is not negative, another partition for about half of the rest. A data
 * directory written by Kafka is placed by Kafka's rule; one written by an earlier Strata holds
 * those ids in their legacy partition.
 *
 * <p>{@link #relocate} moves them: in every partition {@code p} it finds the records of ids
 * whose legacy partition is {@code p} and whose Kafka partition is not, copies what compaction
 * would keep of them (each key's last value; a committed transactional record counts at its
 * commit marker, as the coordinator applies it; aborted ones are dropped) to the Kafka
 * partition, and then writes a tombstone in {@code p} for every key it copied, so {@code p} no
 * longer loads them. An id sitting in its Kafka
 * partition is never moved, so a directory written by Kafka is left as it is. Run before the
 * coordinators load; rerunning after a crash half-way copies the same records again (replay
 * keeps the last), and a rerun after it finished finds nothing left to move.
 *
 * <p>Records of a transaction still open at the time (no marker yet) stay where they are: when
 * that transaction commits, its offsets apply to the legacy partition's copy, which nothing
 * serves. {@link Result#openTransactionIds} names those ids, and the caller logs them.
 */
public final class CoordinatorPlacement {
    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorPlacement.class);
    private static final long WRITE_TIMEOUT_MS = 60_000;
    /** Copies go out in batches of at most this many records. */
    private static final int BATCH_RECORDS = 500;

    private CoordinatorPlacement() {
    }

    /** Kafka's placement of a group or transactional id: {@code abs(hashCode) % partitions}, {@code abs(MIN_VALUE) = 0}. */
    public static int partitionFor(String id, int partitions) {
        int hash = id.hashCode();
        return (hash == Integer.MIN_VALUE ? 0 : Math.abs(hash)) % partitions;
    }

    /** Strata's placement before it followed Kafka's: {@code (hashCode & 0x7fffffff) % partitions}. */
    public static int legacyPartitionFor(String id, int partitions) {
        return (id.hashCode() & 0x7fffffff) % partitions;
    }

    /**
     * The id a record key of {@code __consumer_offsets} or {@code __transaction_state} belongs
     * to: every key type of both topics is a 16-bit version followed by the group or
     * transactional id as a string with a 16-bit length; null if the key is shorter or not UTF-8.
     */
    public static String idOfKey(ByteBuffer key) {
        if (key == null || key.remaining() < 4) {
            return null;
        }
        int position = key.position();
        int length = key.getShort(position + 2);
        if (length < 0 || key.remaining() < 4 + length) {
            return null;
        }
        byte[] bytes = new byte[length];
        key.duplicate().position(position + 4).get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** What {@link #relocate} moved. */
    public record Result(int recordsCopied, Set<String> idsMoved, Set<String> openTransactionIds) {
        public boolean movedAnything() {
            return recordsCopied > 0;
        }
    }

    /** Makes what was appended to a partition durable (an fsync of its log). */
    public interface Flusher {
        Flusher NONE = partition -> { };

        void flush(int partition) throws Exception;
    }

    /** {@link #relocate(String, CoordinatorLog, int, long, Flusher)} without flushing (for logs that are durable as written). */
    public static Result relocate(String topic, CoordinatorLog log, int partitions, long nowMs) throws Exception {
        return relocate(topic, log, partitions, nowMs, Flusher.NONE);
    }

    /**
     * Moves every id of {@code topic} (a name, for the log) found in its legacy partition into
     * Kafka's. {@code log} must reach every partition of the topic; waits for each write. The
     * copies are flushed before the tombstones are written, and the tombstones before it returns:
     * a crash can lose neither the copy of a key it removed from the legacy partition nor (once
     * the caller records the move as done) a tombstone.
     */
    public static Result relocate(String topic, CoordinatorLog log, int partitions, long nowMs, Flusher flusher) throws Exception {
        if (partitions <= 1) {
            return new Result(0, Set.of(), Set.of());
        }
        int copied = 0;
        Set<String> moved = new LinkedHashSet<>();
        Set<String> open = new LinkedHashSet<>();
        for (int source = 0; source < partitions; source++) {
            Strays strays = collect(log, source, partitions);
            open.addAll(strays.openTransactionIds);
            if (strays.copies.isEmpty()) {
                continue;
            }
            for (Map.Entry<Integer, List<byte[][]>> target : strays.copies.entrySet()) {
                write(log, topic, target.getKey(), target.getValue(), nowMs);
                flusher.flush(target.getKey());
                copied += target.getValue().size();
            }
            // Only once every copy is durable: the legacy partition stops loading these keys.
            List<byte[][]> tombstones = new ArrayList<>(strays.keys.size());
            for (ByteBuffer key : strays.keys) {
                byte[] bytes = new byte[key.remaining()];
                key.duplicate().get(bytes);
                tombstones.add(new byte[][] {bytes, null});
            }
            write(log, topic, source, tombstones, nowMs);
            flusher.flush(source);
            moved.addAll(strays.ids);
            LOG.info("Moved {} records of {} ids from {}-{} to the partitions Kafka places them in", strays.copies.values().stream()
                .mapToInt(List::size).sum(), strays.ids.size(), topic, source);
        }
        return new Result(copied, moved, open);
    }

    /** The records of one legacy partition that belong elsewhere, by target partition, in the order to apply them. */
    private static final class Strays {
        final Map<Integer, List<byte[][]>> copies = new TreeMap<>();
        final Set<ByteBuffer> keys = new LinkedHashSet<>();
        final Set<String> ids = new LinkedHashSet<>();
        final Set<String> openTransactionIds = new LinkedHashSet<>();
    }

    private record Pending(int target, String id, ByteBuffer key, byte[] value) {
    }

    /**
     * What a compacted copy of the legacy partition would hold for the ids that belong
     * elsewhere: each key's last value, in the order of those last records (a committed
     * transactional record counts at its marker), keys whose last record is a tombstone left
     * out. So a run after a finished one (its tombstones last) finds nothing, and the copy holds
     * what the coordinator keeps in memory anyway, not the partition's whole history.
     */
    private static Strays collect(CoordinatorLog log, int source, int partitions) {
        Map<ByteBuffer, Pending> latest = new LinkedHashMap<>();
        Map<Long, List<Pending>> pendingByProducer = new HashMap<>();
        log.replayTransactional(source, new CoordinatorLog.TransactionalReplay() {
            @Override
            public void record(ByteBuffer key, ByteBuffer value, long producerId, boolean transactional) {
                String id = idOfKey(key);
                if (id == null || legacyPartitionFor(id, partitions) != source || partitionFor(id, partitions) == source) {
                    return;
                }
                Pending record = new Pending(partitionFor(id, partitions), id, ByteBuffer.wrap(bytes(key)), value == null ? null : bytes(value));
                if (transactional) {
                    pendingByProducer.computeIfAbsent(producerId, ignored -> new ArrayList<>()).add(record);
                } else {
                    apply(record);
                }
            }

            @Override
            public void marker(long producerId, boolean commit) {
                List<Pending> records = pendingByProducer.remove(producerId);
                if (records != null && commit) {
                    records.forEach(this::apply);
                }
            }

            private void apply(Pending record) {
                latest.remove(record.key);
                if (record.value != null) {
                    latest.put(record.key, record);
                }
            }
        });
        Strays strays = new Strays();
        for (Pending record : latest.values()) {
            strays.copies.computeIfAbsent(record.target, ignored -> new ArrayList<>()).add(new byte[][] {bytes(record.key), record.value});
            strays.keys.add(record.key);
            strays.ids.add(record.id);
        }
        for (List<Pending> records : pendingByProducer.values()) {
            for (Pending record : records) {
                strays.openTransactionIds.add(record.id);
            }
        }
        return strays;
    }

    private static byte[] bytes(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }

    private static void write(CoordinatorLog log, String topic, int partition, List<byte[][]> records, long nowMs) throws Exception {
        for (int from = 0; from < records.size(); from += BATCH_RECORDS) {
            RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0);
            for (byte[][] record : records.subList(from, Math.min(records.size(), from + BATCH_RECORDS))) {
                builder.append(nowMs, record[0], record[1]);
            }
            MemoryRecords batch = builder.build();
            CompletableFuture<ErrorCode> done = new CompletableFuture<>();
            log.append(partition, batch, done::complete);
            ErrorCode error = done.get(WRITE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            if (error != ErrorCode.NONE) {
                throw new IllegalStateException("Could not write to " + topic + "-" + partition + " while moving coordinator state: " + error);
            }
        }
    }
}
