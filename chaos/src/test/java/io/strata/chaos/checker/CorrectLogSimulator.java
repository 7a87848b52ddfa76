package io.strata.chaos.checker;

import io.strata.chaos.history.AssignValue;
import io.strata.chaos.history.DrainValue;
import io.strata.chaos.history.Message;
import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.OpValue;
import io.strata.chaos.history.PollValue;
import io.strata.chaos.history.SendValue;
import io.strata.chaos.history.TxnValue;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Generates the history of clients of a correct Kafka log, seeded: plain acks=all sends (ok, fail, info
 * with or without effect), consumers of one group with rebalances reading read_committed or
 * read_uncommitted prefixes from their positions, transactional producers whose transactions interleave
 * in the log (appends happen on send, commit/abort markers take an offset, the last stable offset stops
 * read_committed readers at the first open transaction), committed, aborted or unknown outcomes, and a
 * final drain at both isolation levels. Not thread-safe.
 */
final class CorrectLogSimulator {
    static final List<String> PLAIN = List.of("p-0", "p-1");
    static final List<String> TRANSACTIONAL = List.of("t-0", "t-1");
    static final String GROUP = "g";
    static final int[] PRODUCERS = {0, 1, 2};
    static final int[] CONSUMERS = {20, 21, 22};
    static final int[] TXN_PRODUCERS = {10, 11};

    private static final int OPEN = 0;
    private static final int COMMITTED = 1;
    private static final int ABORTED = 2;
    private static final long NO_TXN = -1;
    private static final long MARKER = Long.MIN_VALUE;

    private final Random random;
    private final List<Op> ops = new ArrayList<>();
    private final Map<String, List<long[]>> log = new LinkedHashMap<>(); // per partition: {value, txn}
    private final List<Integer> txnState = new ArrayList<>();
    private final Map<Integer, Map<String, Long>> positions = new HashMap<>();
    private final Map<Integer, Boolean> readCommitted = new HashMap<>();
    private final Map<Integer, PendingTxn> pending = new HashMap<>();
    private long nextValue = 1;
    private int generation;
    private long clock;

    /** A transaction in flight: its planned sends, those done, and the polls made. */
    private static final class PendingTxn {
        final int id;
        final List<MicroOp> planned = new ArrayList<>();
        final List<MicroOp> done = new ArrayList<>();
        final Map<String, Long> positionsAtStart;

        PendingTxn(int id, Map<String, Long> positionsAtStart) {
            this.id = id;
            this.positionsAtStart = positionsAtStart;
        }
    }

    CorrectLogSimulator(long seed) {
        this.random = new Random(seed);
        for (String p : PLAIN) {
            log.put(p, new ArrayList<>());
        }
        for (String p : TRANSACTIONAL) {
            log.put(p, new ArrayList<>());
        }
        readCommitted.put(20, true);
        readCommitted.put(21, true);
        readCommitted.put(22, false);
        for (int t : TXN_PRODUCERS) {
            positions.put(t, new HashMap<>());
        }
    }

    /** @return the ops of a whole run of {@code steps} steps followed by the drains */
    List<Op> run(int steps) {
        rebalance();
        for (int i = 0; i < steps; i++) {
            int action = random.nextInt(100);
            if (action < 35) {
                plainSend(PRODUCERS[random.nextInt(PRODUCERS.length)]);
            } else if (action < 60) {
                poll(CONSUMERS[random.nextInt(CONSUMERS.length)]);
            } else if (action < 64) {
                rebalance();
            } else {
                txnStep(TXN_PRODUCERS[random.nextInt(TXN_PRODUCERS.length)]);
            }
        }
        for (int t : TXN_PRODUCERS) {
            PendingTxn txn = pending.remove(t);
            if (txn != null) {
                // the client vanished: the coordinator aborts the transaction on timeout, no completion
                end(txn, ABORTED);
            }
        }
        drain(true);
        drain(false);
        return ops;
    }

    private void plainSend(int process) {
        String partition = PLAIN.get(random.nextInt(PLAIN.size()));
        long value = nextValue++;
        add(process, Op.Type.INVOKE, Op.Function.SEND, new SendValue(partition, value, -1));
        int roll = random.nextInt(10);
        if (roll < 8) {
            long offset = append(partition, value, NO_TXN);
            add(process, Op.Type.OK, Op.Function.SEND, new SendValue(partition, value, offset));
        } else if (roll < 9) {
            add(process, Op.Type.FAIL, Op.Function.SEND, new SendValue(partition, value, -1));
        } else {
            if (random.nextBoolean()) {
                append(partition, value, NO_TXN);
            }
            add(process, Op.Type.INFO, Op.Function.SEND, new SendValue(partition, value, -1));
        }
    }

    private void poll(int consumer) {
        boolean committedOnly = readCommitted.get(consumer);
        add(consumer, Op.Type.INVOKE, Op.Function.POLL, new PollValue(committedOnly, List.of()));
        if (random.nextInt(10) == 0) {
            add(consumer, random.nextBoolean() ? Op.Type.INFO : Op.Type.FAIL, Op.Function.POLL,
                    new PollValue(committedOnly, List.of()));
            // the client may have lost its position: it restarts from an earlier one
            positions.get(consumer).replaceAll((p, position) -> (long) random.nextInt((int) (position + 1)));
            return;
        }
        List<Message> messages = new ArrayList<>();
        for (Map.Entry<String, Long> e : positions.get(consumer).entrySet()) {
            if (random.nextBoolean()) {
                e.setValue(read(e.getKey(), e.getValue(), committedOnly, 1 + random.nextInt(4), messages));
            }
        }
        add(consumer, Op.Type.OK, Op.Function.POLL, new PollValue(committedOnly, messages));
    }

    private void rebalance() {
        generation++;
        List<String> partitions = new ArrayList<>(log.keySet());
        Collections.shuffle(partitions, random);
        Map<Integer, List<String>> assignment = new HashMap<>();
        for (int c : CONSUMERS) {
            assignment.put(c, new ArrayList<>());
        }
        for (String p : partitions) {
            assignment.get(CONSUMERS[random.nextInt(CONSUMERS.length)]).add(p);
        }
        for (int c : CONSUMERS) {
            AssignValue value = new AssignValue(GROUP, generation, assignment.get(c));
            add(c, Op.Type.INVOKE, Op.Function.ASSIGN, value);
            add(c, Op.Type.OK, Op.Function.ASSIGN, value);
            Map<String, Long> start = new HashMap<>();
            for (String p : assignment.get(c)) {
                start.put(p, (long) random.nextInt(log.get(p).size() + 1));
            }
            positions.put(c, start);
        }
    }

    private void txnStep(int process) {
        PendingTxn txn = pending.get(process);
        if (txn == null) {
            begin(process);
            return;
        }
        int action = random.nextInt(10);
        if (txn.done.stream().filter(m -> m.kind() == MicroOp.Kind.SEND).count() < txn.planned.size() && action < 6) {
            MicroOp next = txn.planned.get((int) txn.done.stream().filter(m -> m.kind() == MicroOp.Kind.SEND).count());
            long offset = append(next.partition(), next.value(), txn.id);
            txn.done.add(MicroOp.send(next.partition(), random.nextInt(10) < 7 ? offset : -1, next.value()));
        } else if (action < 8) {
            String source = random.nextBoolean() ? PLAIN.get(random.nextInt(PLAIN.size()))
                    : TRANSACTIONAL.get(random.nextInt(TRANSACTIONAL.size()));
            Map<String, Long> position = positions.get(process);
            List<Message> read = new ArrayList<>();
            position.put(source, read(source, position.getOrDefault(source, 0L), true, 1 + random.nextInt(3), read));
            for (Message m : read) {
                txn.done.add(MicroOp.poll(m.partition(), m.offset(), m.value()));
            }
        } else if (txn.done.stream().filter(m -> m.kind() == MicroOp.Kind.SEND).count() == txn.planned.size()) {
            complete(process, txn);
        }
    }

    private void begin(int process) {
        PendingTxn txn = new PendingTxn(txnState.size(), new HashMap<>(positions.get(process)));
        txnState.add(OPEN);
        int sends = 1 + random.nextInt(3);
        for (int i = 0; i < sends; i++) {
            txn.planned.add(MicroOp.send(TRANSACTIONAL.get(random.nextInt(TRANSACTIONAL.size())), -1, nextValue++));
        }
        pending.put(process, txn);
        add(process, Op.Type.INVOKE, Op.Function.TXN, new TxnValue(true, txn.planned));
    }

    private void complete(int process, PendingTxn txn) {
        pending.remove(process);
        int roll = random.nextInt(10);
        Op.Type outcome = roll < 7 ? Op.Type.OK : roll < 9 ? Op.Type.FAIL : Op.Type.INFO;
        int state = outcome == Op.Type.OK ? COMMITTED : outcome == Op.Type.FAIL ? ABORTED
                : random.nextBoolean() ? COMMITTED : ABORTED;
        end(txn, state);
        List<MicroOp> reported = txn.done;
        if (outcome != Op.Type.OK) {
            reported = new ArrayList<>();
            for (MicroOp m : txn.done) {
                reported.add(m.kind() == MicroOp.Kind.SEND ? MicroOp.send(m.partition(), -1, m.value()) : m);
            }
            // the read-process-write loop rewinds to its committed position
            positions.put(process, new HashMap<>(txn.positionsAtStart));
        }
        add(process, outcome, Op.Function.TXN, new TxnValue(true, reported));
    }

    private void end(PendingTxn txn, int state) {
        txnState.set(txn.id, state);
        for (String p : TRANSACTIONAL) {
            boolean wrote = txn.done.stream().anyMatch(m -> m.kind() == MicroOp.Kind.SEND && m.partition().equals(p));
            if (wrote) {
                log.get(p).add(new long[] {MARKER, txn.id});
            }
        }
    }

    private void drain(boolean committedOnly) {
        add(HistoryBuilder.DRAINER, Op.Type.INVOKE, Op.Function.DRAIN, new DrainValue(committedOnly, List.of(), Map.of()));
        List<Message> messages = new ArrayList<>();
        Map<String, Long> ends = new HashMap<>();
        for (String p : log.keySet()) {
            ends.put(p, read(p, 0, committedOnly, Integer.MAX_VALUE, messages));
        }
        add(HistoryBuilder.DRAINER, Op.Type.OK, Op.Function.DRAIN, new DrainValue(committedOnly, messages, ends));
    }

    private long append(String partition, long value, long txn) {
        List<long[]> records = log.get(partition);
        records.add(new long[] {value, txn});
        return records.size() - 1;
    }

    /** Reads up to {@code max} messages from {@code position}; @return the new position. */
    private long read(String partition, long position, boolean committedOnly, int max, List<Message> out) {
        List<long[]> records = log.get(partition);
        long end = committedOnly ? lastStableOffset(partition) : records.size();
        int taken = 0;
        long offset = position;
        while (offset < end && taken < max) {
            long[] record = records.get((int) offset);
            boolean aborted = record[1] != NO_TXN && txnState.get((int) record[1]) == ABORTED;
            if (record[0] != MARKER && !(committedOnly && aborted)) {
                out.add(new Message(partition, offset, record[0]));
                taken++;
            }
            offset++;
        }
        return offset;
    }

    private long lastStableOffset(String partition) {
        List<long[]> records = log.get(partition);
        for (int i = 0; i < records.size(); i++) {
            long txn = records.get(i)[1];
            if (records.get(i)[0] != MARKER && txn != NO_TXN && txnState.get((int) txn) == OPEN) {
                return i;
            }
        }
        return records.size();
    }

    private void add(int process, Op.Type type, Op.Function function, OpValue value) {
        clock++;
        ops.add(new Op(process, type, function, value, 1_764_640_000_000L + clock, clock * 1_000));
    }
}
