package io.strata.chaos.workload;

import io.strata.chaos.history.Op;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.UnknownProducerIdException;
import org.apache.kafka.common.errors.UnsupportedVersionException;

/**
 * Which client error proves an operation did not happen ({@link Op.Type#FAIL}) and which leaves it unknown
 * ({@link Op.Type#INFO}); and which errors leave a client unusable, so the workload builds a new one.
 *
 * <p>Sends of an idempotent producer. A record may be written by any attempt of its batch, and the producer
 * retries a batch after a timeout or a lost connection without telling the application; the error a callback
 * finally gets describes the <em>last</em> attempt only. A retry of a written batch is normally answered with
 * the original offset (duplicate detection), but the broker checks, e.g., {@code min.insync.replicas} before
 * duplicates, so {@code NOT_ENOUGH_REPLICAS} on a retry says nothing about an earlier attempt; a delivery
 * timeout says nothing either. Hence the rule: an error is a fail only when
 * <ul>
 *   <li>the record never entered the producer (the error was raised inside {@code send()}, before the
 *       record was appended to a batch: metadata wait timed out, serialization, client-side size check,
 *       producer closed or in a fatal state), or</li>
 *   <li>the broker rejects the same bytes the same way on every attempt, so no attempt can have been
 *       written: record or batch too large, an invalid record, authorization (the campaign changes no ACLs;
 *       a run that does must drop this case).</li>
 * </ul>
 * Everything else is info, and the process that got it is retired (a fresh process id), since the
 * record may still appear later.
 *
 * <p>Transactions ({@link #unfinishedTxn}): a transaction can commit only through the
 * {@code EndTxn(COMMIT)} that {@code commitTransaction()} sends. A transaction whose commit was never called
 * can therefore never commit, whatever went wrong (the coordinator aborts it when the next producer of the
 * transactional id initializes, or on {@code transaction.timeout.ms}): fail. Once commit was called, an
 * exception (timeout, fencing, a lost coordinator) leaves the outcome unknown: info.
 *
 * <p>Stateless; thread-safe.
 */
public final class Outcomes {
    private Outcomes() {
    }

    /**
     * @param error what the send's callback got, or what {@code send()} threw
     * @param beforeAppend whether the error was raised before the record entered the producer's buffer
     *     (thrown by {@code send()}, or delivered to the callback from inside {@code send()})
     * @return fail or info
     */
    public static Op.Type send(Exception error, boolean beforeAppend) {
        if (beforeAppend || rejectedOnEveryAttempt(error)) {
            return Op.Type.FAIL;
        }
        return Op.Type.INFO;
    }

    /** Whether the broker refuses these bytes deterministically, so that no attempt can have been written. */
    static boolean rejectedOnEveryAttempt(Exception error) {
        return error instanceof RecordTooLargeException
                || error instanceof RecordBatchTooLargeException
                || error instanceof InvalidRecordException
                || error instanceof SerializationException
                || error instanceof AuthorizationException;
    }

    /**
     * Whether a producer that saw {@code error} must be replaced by a new instance: a fatal error (the producer
     * refuses every later call), a fencing, or a sequence/producer-id error after which a fresh producer id is
     * the clean way on. A non-API {@link KafkaException} thrown by a call (not delivered to a callback) also
     * means the producer is in an error state.
     */
    public static boolean producerUnusable(Exception error) {
        return error instanceof ProducerFencedException
                || error instanceof InvalidProducerEpochException
                || error instanceof OutOfOrderSequenceException
                || error instanceof UnknownProducerIdException
                || error instanceof AuthenticationException
                || error instanceof AuthorizationException
                || error instanceof UnsupportedVersionException
                || error instanceof IllegalStateException
                || (error instanceof KafkaException && !(error instanceof ApiException));
    }

    /**
     * The outcome of a transaction that did not complete with {@code commitTransaction()} returning.
     *
     * @param commitCalled whether {@code commitTransaction()} was called (it threw, or never returned)
     * @return fail when the transaction can never commit, info when it may have
     */
    public static Op.Type unfinishedTxn(boolean commitCalled) {
        return commitCalled ? Op.Type.INFO : Op.Type.FAIL;
    }
}
