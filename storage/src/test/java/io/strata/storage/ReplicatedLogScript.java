package io.strata.storage;

import io.strata.common.MockTime;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.EndTransactionMarker;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Random;

/**
 * Writes a seeded random leader log, one batch per append as a produce does: plain batches (some
 * compressed), two idempotent producers, a transactional producer whose transactions end in commit
 * or abort markers, leader epochs that grow now and then, and timestamps that sometimes jump past
 * {@code segment.ms}. With {@link #CONFIG} the log rolls by size, time and full indexes.
 */
final class ReplicatedLogScript {
    /** Small segments, dense and tiny indexes, short segment.ms: every roll rule fires. */
    static final LogConfig CONFIG = LogConfig.of(Map.of(), Map.of(
        LogConfig.SEGMENT_BYTES, "3000",
        LogConfig.INDEX_INTERVAL_BYTES, "150",
        LogConfig.SEGMENT_INDEX_BYTES, "64",
        LogConfig.SEGMENT_MS, "60000"));
    static final long IDEMPOTENT_A = 1_001L;
    static final long IDEMPOTENT_B = 1_002L;
    static final long TRANSACTIONAL = 2_001L;
    static final int COORDINATOR_EPOCH = 3;

    private final Random random;
    private final MockTime time;
    private int leaderEpoch;
    private int sequenceA;
    private int sequenceB;
    private int sequenceTxn;
    private short txnProducerEpoch;
    private boolean txnOpen;

    ReplicatedLogScript(long seed, MockTime time) {
        this.random = new Random(seed);
        this.time = time;
    }

    /** Appends {@code appends} batches to {@code leader} as its leader. */
    void write(UnifiedLog leader, int appends) throws IOException {
        for (int i = 0; i < appends; i++) {
            if (random.nextInt(25) == 0) {
                leaderEpoch += 1 + random.nextInt(2);
            }
            time.advance(random.nextInt(10) == 0 ? 70_000L : random.nextInt(50));
            int kind = random.nextInt(10);
            if (kind < 4) {
                CompressionType compression = random.nextInt(4) == 0 ? CompressionType.GZIP : CompressionType.NONE;
                leader.appendAsLeader(plain(compression), leaderEpoch, UnifiedLog.AppendOrigin.CLIENT);
            } else if (kind < 6) {
                int count = 1 + random.nextInt(4);
                leader.appendAsLeader(producerBatch(IDEMPOTENT_A, (short) 0, sequenceA, false, count), leaderEpoch,
                    UnifiedLog.AppendOrigin.CLIENT);
                sequenceA += count;
            } else if (kind < 7) {
                int count = 1 + random.nextInt(4);
                leader.appendAsLeader(producerBatch(IDEMPOTENT_B, (short) 0, sequenceB, false, count), leaderEpoch,
                    UnifiedLog.AppendOrigin.CLIENT);
                sequenceB += count;
            } else if (kind < 9 || !txnOpen) {
                int count = 1 + random.nextInt(3);
                leader.appendAsLeader(producerBatch(TRANSACTIONAL, txnProducerEpoch, sequenceTxn, true, count), leaderEpoch,
                    UnifiedLog.AppendOrigin.CLIENT);
                sequenceTxn += count;
                txnOpen = true;
            } else {
                ControlRecordType type = random.nextBoolean() ? ControlRecordType.COMMIT : ControlRecordType.ABORT;
                leader.appendMarker(RecordBatchBuilder.endTransactionMarker(0L, time.milliseconds(), 0, TRANSACTIONAL, txnProducerEpoch,
                    new EndTransactionMarker(type, COORDINATOR_EPOCH)), leaderEpoch);
                txnOpen = false;
            }
        }
    }

    int leaderEpoch() {
        return leaderEpoch;
    }

    private MemoryRecords plain(CompressionType compression) {
        RecordBatchBuilder builder = new RecordBatchBuilder(compression, TimestampType.CREATE_TIME, 0L);
        int count = 1 + random.nextInt(5);
        for (int i = 0; i < count; i++) {
            builder.append(time.milliseconds(), ("k" + random.nextInt(100)).getBytes(StandardCharsets.UTF_8), value());
        }
        return builder.build();
    }

    private MemoryRecords producerBatch(long producerId, short epoch, int baseSequence, boolean transactional, int count) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L)
            .producerState(producerId, epoch, baseSequence, transactional);
        for (int i = 0; i < count; i++) {
            builder.append(time.milliseconds(), null, value());
        }
        return builder.build();
    }

    private byte[] value() {
        byte[] value = new byte[10 + random.nextInt(200)];
        random.nextBytes(value);
        return value;
    }
}
