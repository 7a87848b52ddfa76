package io.strata.tools.client;

import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.Record;

import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * Kafka's read_committed filter over the batches of one partition's fetched data. The broker
 * sends, with the data, the aborted transactions that overlap it (producer id and first
 * offset). A producer id counts as aborted from its transaction's first offset up to its ABORT
 * marker; its transactional batches in that span are withheld. Control batches (the markers)
 * are never handed out. With no aborted-transaction list (read_uncommitted) only the control
 * batches are withheld.
 *
 * <p>One instance per partition per fetch response; batches must be offered in offset order.
 * Not thread-safe.
 */
final class AbortedTransactionFilter {
    private final PriorityQueue<FetchResponseData.AbortedTransaction> pending =
        new PriorityQueue<>(Comparator.comparingLong(FetchResponseData.AbortedTransaction::firstOffset));
    private final Set<Long> abortedProducers = new HashSet<>();

    /** @param aborted the response's aborted transactions, or null */
    AbortedTransactionFilter(List<FetchResponseData.AbortedTransaction> aborted) {
        if (aborted != null) {
            pending.addAll(aborted);
        }
    }

    /** Whether the batch's records are withheld. */
    boolean skip(DefaultRecordBatch batch) {
        if (batch.hasProducerId()) {
            while (!pending.isEmpty() && pending.peek().firstOffset() <= batch.lastOffset()) {
                abortedProducers.add(pending.poll().producerId());
            }
        }
        if (batch.isControlBatch()) {
            List<Record> markers = batch.records();
            if (!markers.isEmpty() && ControlRecordType.parseKey(markers.get(0).key()) == ControlRecordType.ABORT) {
                abortedProducers.remove(batch.producerId());
            }
            return true;
        }
        return batch.isTransactional() && abortedProducers.contains(batch.producerId());
    }
}
