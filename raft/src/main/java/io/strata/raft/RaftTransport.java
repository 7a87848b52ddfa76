package io.strata.raft;

/**
 * Sends quorum messages to other replicas. Delivery is best effort: a message may be lost,
 * delayed or reordered, and the quorum copes (it retries on its timers). Answers and requests
 * from others come back through {@link RaftClient#receive(RaftMessage)}.
 */
@FunctionalInterface
public interface RaftTransport {
    void send(RaftMessage message);
}
