package io.strata.storage;

import java.util.List;

/**
 * Result of {@link TransactionIndex#collectAbortedTxns(long, long)}.
 *
 * @param abortedTransactions aborted transactions overlapping the fetch range, in index order
 * @param isComplete          true when no later segment can hold an aborted transaction that
 *                            overlaps the fetch range, so the caller may stop searching
 */
public record TxnIndexSearchResult(List<AbortedTxn> abortedTransactions, boolean isComplete) {
    public TxnIndexSearchResult {
        abortedTransactions = List.copyOf(abortedTransactions);
    }
}
