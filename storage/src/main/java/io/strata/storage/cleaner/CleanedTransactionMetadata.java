package io.strata.storage.cleaner;

import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.Record;
import io.strata.storage.AbortedTxn;
import io.strata.storage.TransactionIndex;

import java.io.IOException;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * The transactions the cleaner is inside of while it reads a log in offset order, which decide
 * what transactional data and markers may go (Kafka's rules):
 * <ul>
 *   <li>a data batch of a transaction that was aborted (it appears in a transaction index) is
 *       removed;</li>
 *   <li>an abort marker is kept while this pass still saw batches of its transaction (the
 *       marker and its transaction index entry go in a later pass, once the data is gone);</li>
 *   <li>a commit marker is kept while this pass saw batches of its transaction;</li>
 *   <li>a marker that may go is first given a delete horizon, like a tombstone, and removed by a
 *       pass after it (see {@link Cleaner}).</li>
 * </ul>
 * Aborted transactions are fed in from the transaction indexes ({@link #addAbortedTransactions})
 * and become "ongoing" once the reader reaches their first offset.
 *
 * <p>Not thread-safe: one per cleaning pass.
 */
final class CleanedTransactionMetadata {
    private final PriorityQueue<AbortedTxn> abortedTransactions = new PriorityQueue<>(Comparator.comparingLong(AbortedTxn::firstOffset));
    /** Producer id → its aborted transaction the reader is inside of. */
    private final Map<Long, OngoingAbortedTxn> ongoingAbortedTxns = new HashMap<>();
    /** Producers the reader is inside a (not aborted, so committed) transaction of. */
    private final Set<Long> ongoingCommittedTxns = new HashSet<>();
    /** Where kept abort markers' index entries go: the cleaned segment's transaction index, or null while mapping. */
    private TransactionIndex cleanedIndex;

    private static final class OngoingAbortedTxn {
        final AbortedTxn abortedTxn;
        boolean sawBatch;

        OngoingAbortedTxn(AbortedTxn abortedTxn) {
            this.abortedTxn = abortedTxn;
        }
    }

    void addAbortedTransactions(List<AbortedTxn> aborted) {
        abortedTransactions.addAll(aborted);
    }

    void setCleanedIndex(TransactionIndex cleanedIndex) {
        this.cleanedIndex = cleanedIndex;
    }

    /**
     * Reads a control batch; returns true if it may be removed (once its delete horizon passed).
     * A kept abort marker's transaction index entry is copied to the cleaned index.
     */
    boolean onControlBatchRead(DefaultRecordBatch controlBatch) throws IOException {
        consumeAbortedTxnsUpTo(controlBatch.lastOffset());
        List<Record> records = controlBatch.records();
        if (records.isEmpty()) {
            // An empty control batch was emptied by an earlier pass: nothing depends on it.
            return true;
        }
        long producerId = controlBatch.producerId();
        ControlRecordType type = ControlRecordType.parseKey(records.get(0).key());
        if (type == ControlRecordType.ABORT) {
            OngoingAbortedTxn aborted = ongoingAbortedTxns.remove(producerId);
            if (aborted != null && aborted.sawBatch) {
                if (cleanedIndex != null) {
                    cleanedIndex.append(aborted.abortedTxn);
                }
                return false;
            }
            return true;
        }
        if (type == ControlRecordType.COMMIT) {
            return !ongoingCommittedTxns.remove(producerId);
        }
        return false;
    }

    /** Reads a data batch; returns true if it belongs to an aborted transaction and must be removed. */
    boolean onBatchRead(DefaultRecordBatch batch) {
        consumeAbortedTxnsUpTo(batch.lastOffset());
        if (!batch.isTransactional()) {
            return false;
        }
        OngoingAbortedTxn aborted = ongoingAbortedTxns.get(batch.producerId());
        if (aborted != null) {
            aborted.sawBatch = true;
            return true;
        }
        ongoingCommittedTxns.add(batch.producerId());
        return false;
    }

    private void consumeAbortedTxnsUpTo(long offset) {
        while (!abortedTransactions.isEmpty() && abortedTransactions.peek().firstOffset() <= offset) {
            AbortedTxn aborted = abortedTransactions.poll();
            ongoingAbortedTxns.putIfAbsent(aborted.producerId(), new OngoingAbortedTxn(aborted));
        }
    }
}
