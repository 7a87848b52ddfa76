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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Plants one anomaly of a given kind into a clean history of {@link CorrectLogSimulator}, choosing the
 * victim with a seeded {@link Random}. Returns null when the history offers no victim (e.g. no aborted
 * transaction to read). Each plant names the kinds it may cause besides its own (collateral), so a test can
 * require the planted anomaly and nothing unexplained.
 */
final class AnomalyPlanter {
    private static final long FRESH_VALUE = 1_000_000_000L;
    private static final int FRESH_PROCESS = 1000;

    /** A planted history: what must be found, and what else may be. */
    record Planted(List<Op> ops, Anomaly.Kind kind, Long value, Set<Anomaly.Kind> collateral) {
    }

    private AnomalyPlanter() {
    }

    static Planted plant(List<Op> clean, Anomaly.Kind kind, Random random) {
        List<Op> ops = new ArrayList<>(clean);
        return switch (kind) {
            case LOST_WRITE -> lostWrite(ops, random);
            case DUPLICATE -> duplicate(ops, random);
            case INCONSISTENT_OFFSET -> inconsistentOffset(ops, random);
            case FAILED_WRITE_READ -> failedWriteRead(ops, random);
            case NON_MONOTONIC_POLL -> nonMonotonicPoll(ops, random);
            case UNEXPECTED_GAP -> unexpectedGap(ops);
            case ABORTED_READ_G1A -> abortedRead(ops, random);
            case INTERMEDIATE_READ_G1B -> intermediateRead(ops, random);
            case CYCLE_G0 -> writeCycle(ops, random);
            case CYCLE_G1C -> readCycle(ops);
            case SPLIT_OWNERSHIP -> splitOwnership(ops, random);
        };
    }

    /** Removes an acknowledged plain value from both drains (its offset then is a gap too). */
    private static Planted lostWrite(List<Op> ops, Random random) {
        List<SendValue> acked = new ArrayList<>();
        for (Op op : ops) {
            if (op.function() == Op.Function.SEND && op.type() == Op.Type.OK) {
                acked.add((SendValue) op.value());
            }
        }
        if (acked.isEmpty()) {
            return null;
        }
        SendValue victim = acked.get(random.nextInt(acked.size()));
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i).function() == Op.Function.DRAIN && ops.get(i).isCompletion()) {
                DrainValue d = (DrainValue) ops.get(i).value();
                List<Message> kept = new ArrayList<>(d.messages());
                kept.removeIf(m -> m.partition().equals(victim.partition()) && m.value() == victim.value());
                ops.set(i, with(ops.get(i), new DrainValue(d.readCommitted(), kept, d.endOffsets())));
            }
        }
        return new Planted(ops, Anomaly.Kind.LOST_WRITE, victim.value(), Set.of(Anomaly.Kind.UNEXPECTED_GAP));
    }

    /** Appends an acknowledged plain value again at the end of the read_uncommitted drain. */
    private static Planted duplicate(List<Op> ops, Random random) {
        int drain = lastDrain(ops, false);
        DrainValue d = (DrainValue) ops.get(drain).value();
        List<Message> plain = d.messages().stream().filter(m -> m.partition().startsWith("p-")).toList();
        if (plain.isEmpty()) {
            return null;
        }
        Message victim = plain.get(random.nextInt(plain.size()));
        long end = d.endOffsets().get(victim.partition());
        List<Message> messages = new ArrayList<>(d.messages());
        messages.add(new Message(victim.partition(), end, victim.value()));
        Map<String, Long> ends = new HashMap<>(d.endOffsets());
        ends.put(victim.partition(), end + 1);
        ops.set(drain, with(ops.get(drain), new DrainValue(false, messages, ends)));
        return new Planted(ops, Anomaly.Kind.DUPLICATE, victim.value(), Set.of());
    }

    /** A new reader sees a fresh value at an offset the drain shows with another value. */
    private static Planted inconsistentOffset(List<Op> ops, Random random) {
        DrainValue d = (DrainValue) ops.get(lastDrain(ops, false)).value();
        List<Message> plain = d.messages().stream().filter(m -> m.partition().startsWith("p-")).toList();
        if (plain.isEmpty()) {
            return null;
        }
        Message victim = plain.get(random.nextInt(plain.size()));
        appendPoll(ops, FRESH_PROCESS, false, List.of(new Message(victim.partition(), victim.offset(), FRESH_VALUE)));
        return new Planted(ops, Anomaly.Kind.INCONSISTENT_OFFSET, victim.value(), Set.of());
    }

    /** Repeats the last message of an ok poll at its end. */
    private static Planted nonMonotonicPoll(List<Op> ops, Random random) {
        List<Integer> polls = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (op.function() == Op.Function.POLL && op.type() == Op.Type.OK && !((PollValue) op.value()).messages().isEmpty()) {
                polls.add(i);
            }
        }
        if (polls.isEmpty()) {
            return null;
        }
        int index = polls.get(random.nextInt(polls.size()));
        PollValue poll = (PollValue) ops.get(index).value();
        List<Message> messages = new ArrayList<>(poll.messages());
        Message last = messages.get(messages.size() - 1);
        messages.add(last);
        ops.set(index, with(ops.get(index), new PollValue(poll.readCommitted(), messages)));
        return new Planted(ops, Anomaly.Kind.NON_MONOTONIC_POLL, last.value(), Set.of());
    }

    /** The read_committed drain of p-0 claims one more offset than it returned. */
    private static Planted unexpectedGap(List<Op> ops) {
        int drain = lastDrain(ops, true);
        DrainValue d = (DrainValue) ops.get(drain).value();
        Map<String, Long> ends = new HashMap<>(d.endOffsets());
        ends.merge("p-0", 1L, Long::sum);
        ops.set(drain, with(ops.get(drain), new DrainValue(true, d.messages(), ends)));
        return new Planted(ops, Anomaly.Kind.UNEXPECTED_GAP, null, Set.of());
    }

    /** The read_committed drain returns an aborted record (found in the read_uncommitted drain). */
    private static Planted abortedRead(List<Op> ops, Random random) {
        Map<String, Map<Long, Long>> abortedOffsets = new HashMap<>();
        for (Op op : ops) {
            if (op.function() == Op.Function.TXN && op.type() == Op.Type.FAIL) {
                for (MicroOp m : ((TxnValue) op.value()).ops()) {
                    if (m.kind() == MicroOp.Kind.SEND) {
                        abortedOffsets.computeIfAbsent(m.partition(), p -> new HashMap<>()).put(m.value(), -1L);
                    }
                }
            }
        }
        DrainValue uncommitted = (DrainValue) ops.get(lastDrain(ops, false)).value();
        List<Message> candidates = uncommitted.messages().stream()
                .filter(m -> abortedOffsets.getOrDefault(m.partition(), Map.of()).containsKey(m.value())).toList();
        if (candidates.isEmpty()) {
            return null;
        }
        Message victim = candidates.get(random.nextInt(candidates.size()));
        int drain = lastDrain(ops, true);
        DrainValue d = (DrainValue) ops.get(drain).value();
        List<Message> messages = new ArrayList<>(d.messages());
        messages.add(victim);
        ops.set(drain, with(ops.get(drain), new DrainValue(true, messages, d.endOffsets())));
        return new Planted(ops, Anomaly.Kind.ABORTED_READ_G1A, victim.value(), Set.of());
    }

    /** A new read_committed reader reads a whole partition but one inner value of a committed txn. */
    private static Planted intermediateRead(List<Op> ops, Random random) {
        Map<Long, Integer> txnOfValue = new HashMap<>();
        int txnNumber = 0;
        for (Op op : ops) {
            if (op.function() == Op.Function.TXN && op.type() == Op.Type.OK) {
                for (MicroOp m : ((TxnValue) op.value()).ops()) {
                    if (m.kind() == MicroOp.Kind.SEND) {
                        txnOfValue.put(m.value(), txnNumber);
                    }
                }
                txnNumber++;
            }
        }
        DrainValue d = (DrainValue) ops.get(lastDrain(ops, true)).value();
        List<Message> candidates = new ArrayList<>();
        for (String partition : CorrectLogSimulator.TRANSACTIONAL) {
            List<Message> read = d.messages().stream().filter(m -> m.partition().equals(partition)).toList();
            for (int i = 1; i + 1 < read.size(); i++) {
                Integer txn = txnOfValue.get(read.get(i).value());
                if (txn != null && read.stream().filter(m -> txn.equals(txnOfValue.get(m.value()))).count() >= 2) {
                    candidates.add(read.get(i));
                }
            }
        }
        if (candidates.isEmpty()) {
            return null;
        }
        Message victim = candidates.get(random.nextInt(candidates.size()));
        List<Message> read = new ArrayList<>(d.messages().stream().filter(m -> m.partition().equals(victim.partition())).toList());
        read.remove(victim);
        appendPoll(ops, FRESH_PROCESS, true, read);
        return new Planted(ops, Anomaly.Kind.INTERMEDIATE_READ_G1B, victim.value(), Set.of());
    }

    /**
     * One new producer's two txns, ordered one way in one partition and the other way in another; or (half
     * the seeds) its later txn written below its earlier one in a single partition.
     */
    private static Planted writeCycle(List<Op> ops, Random random) {
        if (random.nextBoolean()) {
            appendTxn(ops, FRESH_PROCESS, List.of(MicroOp.send("g0-a", 2, FRESH_VALUE), MicroOp.send("g0-a", 3, FRESH_VALUE + 1)));
            appendTxn(ops, FRESH_PROCESS, List.of(MicroOp.send("g0-a", 0, FRESH_VALUE + 2), MicroOp.send("g0-a", 1, FRESH_VALUE + 3)));
            return new Planted(ops, Anomaly.Kind.CYCLE_G0, null, Set.of());
        }
        appendTxn(ops, FRESH_PROCESS, List.of(MicroOp.send("g0-a", 0, FRESH_VALUE), MicroOp.send("g0-b", 1, FRESH_VALUE + 1)));
        appendTxn(ops, FRESH_PROCESS, List.of(MicroOp.send("g0-a", 1, FRESH_VALUE + 2), MicroOp.send("g0-b", 0, FRESH_VALUE + 3)));
        return new Planted(ops, Anomaly.Kind.CYCLE_G0, null, Set.of());
    }

    /** An acknowledged plain send that a drain shows is recorded as failed instead. */
    private static Planted failedWriteRead(List<Op> ops, Random random) {
        List<Integer> acked = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (op.function() == Op.Function.SEND && op.type() == Op.Type.OK) {
                acked.add(i);
            }
        }
        if (acked.isEmpty()) {
            return null;
        }
        int index = acked.get(random.nextInt(acked.size()));
        Op op = ops.get(index);
        SendValue send = (SendValue) op.value();
        ops.set(index, new Op(op.process(), Op.Type.FAIL, op.function(), new SendValue(send.partition(), send.value(), -1), op.wallMs(),
                op.monotonicNs()));
        return new Planted(ops, Anomaly.Kind.FAILED_WRITE_READ, send.value(), Set.of());
    }

    /** Two new txns each reading the other's write. */
    private static Planted readCycle(List<Op> ops) {
        appendTxn(ops, FRESH_PROCESS, List.of(MicroOp.send("g1c-a", 0, FRESH_VALUE), MicroOp.poll("g1c-b", 0, FRESH_VALUE + 1)));
        appendTxn(ops, FRESH_PROCESS + 1, List.of(MicroOp.send("g1c-b", 0, FRESH_VALUE + 1), MicroOp.poll("g1c-a", 0, FRESH_VALUE)));
        return new Planted(ops, Anomaly.Kind.CYCLE_G1C, null, Set.of());
    }

    /** A new consumer is assigned a partition someone owns in the same generation. */
    private static Planted splitOwnership(List<Op> ops, Random random) {
        List<AssignValue> assigns = new ArrayList<>();
        for (Op op : ops) {
            if (op.function() == Op.Function.ASSIGN && op.type() == Op.Type.OK && !((AssignValue) op.value()).partitions().isEmpty()) {
                assigns.add((AssignValue) op.value());
            }
        }
        if (assigns.isEmpty()) {
            return null;
        }
        AssignValue victim = assigns.get(random.nextInt(assigns.size()));
        String partition = victim.partitions().get(random.nextInt(victim.partitions().size()));
        AssignValue value = new AssignValue(victim.group(), victim.generation(), List.of(partition));
        add(ops, FRESH_PROCESS, Op.Type.INVOKE, Op.Function.ASSIGN, value);
        add(ops, FRESH_PROCESS, Op.Type.OK, Op.Function.ASSIGN, value);
        return new Planted(ops, Anomaly.Kind.SPLIT_OWNERSHIP, null, Set.of());
    }

    private static int lastDrain(List<Op> ops, boolean readCommitted) {
        for (int i = ops.size() - 1; i >= 0; i--) {
            Op op = ops.get(i);
            if (op.function() == Op.Function.DRAIN && op.isCompletion() && ((DrainValue) op.value()).readCommitted() == readCommitted) {
                return i;
            }
        }
        throw new IllegalStateException("no drain with readCommitted=" + readCommitted);
    }

    private static void appendPoll(List<Op> ops, int process, boolean readCommitted, List<Message> messages) {
        add(ops, process, Op.Type.INVOKE, Op.Function.POLL, new PollValue(readCommitted, List.of()));
        add(ops, process, Op.Type.OK, Op.Function.POLL, new PollValue(readCommitted, messages));
    }

    private static void appendTxn(List<Op> ops, int process, List<MicroOp> microOps) {
        add(ops, process, Op.Type.INVOKE, Op.Function.TXN, new TxnValue(true, List.of()));
        add(ops, process, Op.Type.OK, Op.Function.TXN, new TxnValue(true, microOps));
    }

    private static void add(List<Op> ops, int process, Op.Type type, Op.Function function, OpValue value) {
        long time = ops.isEmpty() ? 0 : ops.get(ops.size() - 1).monotonicNs() + 1_000;
        ops.add(new Op(process, type, function, value, 1_764_640_000_000L + time / 1_000, time));
    }

    private static Op with(Op op, OpValue value) {
        return new Op(op.process(), op.type(), op.function(), value, op.wallMs(), op.monotonicNs());
    }
}
