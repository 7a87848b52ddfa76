package io.strata.chaos.workload;

import java.time.Duration;
import java.util.List;

/**
 * A client load of the fault campaign: unmodified Kafka clients doing one kind of operation and recording each
 * one in the history (invoke, then ok / fail / info) through the {@link Recorder} of its {@link WorkloadContext}.
 *
 * <p>Life cycle: the campaign creates the {@link #topics()} (the workload never creates topics itself), calls
 * {@link #start} once, lets the nemeses run, calls {@link #stop} once, then drains every partition. A workload
 * never throws out of its threads: a client error is an operation outcome (fail when the error proves the
 * operation did not happen, info when it may have), and the workload goes on with a fresh process id after an
 * info, as Jepsen does, since a process has one operation in flight.
 */
public interface Workload {

    /** A short name for logs and the summary, e.g. {@code idempotent-producer}. */
    String name();

    /** The topics the campaign creates before {@link #start}. */
    List<TopicSpec> topics();

    /** Starts the workload's threads; returns at once. */
    void start(WorkloadContext context) throws Exception;

    /**
     * Stops invoking operations and waits up to {@code timeout} for those in flight to complete; an operation
     * still in flight afterwards is recorded {@code info}. Closes the clients. Idempotent.
     */
    void stop(Duration timeout) throws InterruptedException;
}
