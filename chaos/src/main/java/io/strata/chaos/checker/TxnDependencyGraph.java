package io.strata.chaos.checker;

import io.strata.chaos.history.History;
import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.Operation;
import io.strata.chaos.history.TxnValue;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The Elle list-append view of the transactions: each partition is a list, each send an append, each
 * poll inside a transaction a read; nodes are committed transactions, edges their dependencies.
 *
 * <p>Committed: ok transactions, and info ones of which some value was read with read_committed
 * (then the transaction committed). Other transactions are not nodes' dependencies (they get no edges).
 *
 * <p>Edges, each sound for Kafka (a cycle is impossible in a correct broker):
 * <ul>
 *   <li><b>ww</b> (version order): T1 → T2 when, in one partition, every offset T1 wrote is below every
 *       offset T2 wrote, and T1 and T2 are transactions of the same process. Kafka appends a transaction's
 *       records when they are sent, not at commit, so the offset order of concurrent transactions of
 *       different producers is no dependency (interleaving is legal, and an offset-derived edge between
 *       them could close a cycle a correct broker produces); one transactional producer runs its
 *       transactions one after another, so for them offset order must agree in every partition. Only
 *       neighbours in offset order get an edge (the rest follows transitively).</li>
 *   <li><b>wr</b>: T1 → T2 when T2 read, with read_committed, a value T1 wrote (T1 committed before T2's
 *       read, which precedes T2's commit).</li>
 *   <li><b>po</b> (process order): T1 → T2 when T1 completed ok and T2 is the next committed transaction the
 *       same process invoked: T1's records were appended before T1's commit returned, T2's after T2 began, so
 *       in every partition T1's offsets lie below T2's. With the ww edge of a partition where T2's writes lie
 *       below T1's, it closes a cycle: a single inverted pair is enough, no second partition needed.</li>
 * </ul>
 * Offsets of sends come from their acknowledgement, else from any observation of the value.
 *
 * <p>Immutable after construction; not shared between threads.
 */
final class TxnDependencyGraph {
    private final TxnIndex txns;
    private final boolean[] committed;
    private final IntPairs wwEdges = new IntPairs();
    private final IntPairs wrEdges = new IntPairs();
    private final IntPairs poEdges = new IntPairs();

    TxnDependencyGraph(History history) {
        txns = new TxnIndex(history, operation -> operation.outcome() != Op.Type.FAIL);
        committed = new boolean[txns.txns().size()];
        PartitionMaps offsetOfValue = new PartitionMaps();
        Observations.forEach(history, (partition, offset, value, opIndex, source, readCommitted) -> {
            offsetOfValue.of(partition).putIfAbsent(value, offset);
            long writer = txns.writerOf(partition, value);
            if (writer != TxnIndex.NO_TXN && readCommitted && source != Observations.Source.ACK) {
                committed[(int) writer] = true;
            }
        });
        for (int txn = 0; txn < committed.length; txn++) {
            committed[txn] |= txns.txns().get(txn).outcome() == Op.Type.OK;
        }
        addWriteEdges(offsetOfValue);
        addReadEdges();
        addProcessOrderEdges();
    }

    int nodeCount() {
        return committed.length;
    }

    /** @return the operation of node {@code node} */
    Operation txn(int node) {
        return txns.txns().get(node);
    }

    IntPairs wwEdges() {
        return wwEdges;
    }

    IntPairs wrEdges() {
        return wrEdges;
    }

    /** @return the non-trivial strongly connected components of the ww and po edges, plus the wr edges if asked */
    List<int[]> cycles(boolean withReadEdges) {
        int[] degree = new int[nodeCount() + 1];
        wwEdges.forEach((from, to) -> degree[from + 1]++);
        poEdges.forEach((from, to) -> degree[from + 1]++);
        if (withReadEdges) {
            wrEdges.forEach((from, to) -> degree[from + 1]++);
        }
        for (int i = 1; i < degree.length; i++) {
            degree[i] += degree[i - 1];
        }
        int[] start = degree.clone();
        int[] fill = Arrays.copyOf(degree, degree.length);
        int[] target = new int[start[nodeCount()]];
        wwEdges.forEach((from, to) -> target[fill[from]++] = to);
        poEdges.forEach((from, to) -> target[fill[from]++] = to);
        if (withReadEdges) {
            wrEdges.forEach((from, to) -> target[fill[from]++] = to);
        }
        return StronglyConnectedComponents.nonTrivial(nodeCount(), start, target);
    }

    private void addWriteEdges(PartitionMaps offsetOfValue) {
        // per (process, partition): spans {firstOffset, lastOffset, txn}
        Map<String, List<long[]>> spans = new HashMap<>();
        for (int txn = 0; txn < committed.length; txn++) {
            if (!committed[txn]) {
                continue;
            }
            Map<String, long[]> spanOfPartition = new HashMap<>();
            for (MicroOp send : txns.sends(txn)) {
                long offset = send.offset() >= 0 ? send.offset() : offsetOfValue.get(send.partition(), send.value(), -1);
                if (offset < 0) {
                    continue;
                }
                long[] span = spanOfPartition.computeIfAbsent(send.partition(), p -> new long[] {offset, offset, 0});
                span[0] = Math.min(span[0], offset);
                span[1] = Math.max(span[1], offset);
            }
            int process = txns.txns().get(txn).process();
            for (Map.Entry<String, long[]> e : spanOfPartition.entrySet()) {
                long[] span = e.getValue();
                span[2] = txn;
                spans.computeIfAbsent(process + "\u0000" + e.getKey(), k -> new ArrayList<>()).add(span);
            }
        }
        for (List<long[]> list : spans.values()) {
            list.sort((a, b) -> Long.compare(a[0], b[0]));
            for (int i = 0; i + 1 < list.size(); i++) {
                if (list.get(i)[1] < list.get(i + 1)[0]) {
                    wwEdges.add((int) list.get(i)[2], (int) list.get(i + 1)[2]);
                }
            }
        }
    }

    private void addProcessOrderEdges() {
        Map<Integer, Integer> lastOkOfProcess = new HashMap<>();
        for (int txn = 0; txn < committed.length; txn++) {
            if (!committed[txn]) {
                continue;
            }
            Operation operation = txns.txns().get(txn);
            Integer previous = lastOkOfProcess.remove(operation.process());
            if (previous != null) {
                poEdges.add(previous, txn);
            }
            if (operation.outcome() == Op.Type.OK) {
                lastOkOfProcess.put(operation.process(), txn);
            }
        }
    }

    private void addReadEdges() {
        for (int txn = 0; txn < committed.length; txn++) {
            TxnValue value = (TxnValue) txns.txns().get(txn).value();
            if (!committed[txn] || !value.readCommitted()) {
                continue;
            }
            for (MicroOp m : value.ops()) {
                if (m.kind() != MicroOp.Kind.POLL) {
                    continue;
                }
                long writer = txns.writerOf(m.partition(), m.value());
                if (writer != TxnIndex.NO_TXN && writer != txn && committed[(int) writer]) {
                    wrEdges.add((int) writer, txn);
                }
            }
        }
    }

    /** A growable list of int pairs (edges), two ints per entry. Not thread-safe. */
    static final class IntPairs {
        private int[] data = new int[32];
        private int size;

        void add(int from, int to) {
            if (size * 2 == data.length) {
                data = Arrays.copyOf(data, data.length * 2);
            }
            data[size * 2] = from;
            data[size * 2 + 1] = to;
            size++;
        }

        void forEach(PairVisitor visitor) {
            for (int i = 0; i < size; i++) {
                visitor.accept(data[i * 2], data[i * 2 + 1]);
            }
        }

        /** Receives one pair. */
        interface PairVisitor {
            void accept(int from, int to);
        }
    }
}
