package io.strata.server.replica;

import io.strata.common.MockTime;
import io.strata.common.Time;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.storage.TopicPartition;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/** A {@link ReplicaContext} for tests: a fake clock, brokers the test registers, ISR changes captured with their futures. */
final class FakeReplicaContext implements ReplicaContext {
    /** One ISR change a partition sent, answered when the test says. */
    record Submitted(TopicPartition topicPartition, UUID topicId, AlterPartitionRequestData.PartitionData change,
                     CompletableFuture<AlterPartitionResponseData.PartitionData> future) {
        List<Integer> newIsr() {
            List<Integer> isr = new ArrayList<>();
            change.newIsrWithEpochs().forEach(state -> isr.add(state.brokerId()));
            return isr;
        }
    }

    final MockTime time = new MockTime();
    final int localBrokerId;
    long replicaLagTimeMaxMs = 30_000L;
    boolean strictMinIsr;
    /** broker id → broker epoch of every registered, usable broker. */
    final Map<Integer, Long> brokerEpochs = new HashMap<>();
    final Set<Integer> fenced = new HashSet<>();
    final List<Submitted> submitted = new ArrayList<>();
    int highWatermarkNotifications;

    FakeReplicaContext(int localBrokerId) {
        this.localBrokerId = localBrokerId;
    }

    @Override
    public int localBrokerId() {
        return localBrokerId;
    }

    @Override
    public Time time() {
        return time;
    }

    @Override
    public long replicaLagTimeMaxMs() {
        return replicaLagTimeMaxMs;
    }

    @Override
    public boolean isReplicaIsrEligible(int brokerId, long fetchBrokerEpoch) {
        Long epoch = brokerEpochs.get(brokerId);
        return epoch != null && !fenced.contains(brokerId) && (fetchBrokerEpoch == RemoteReplica.NO_BROKER_EPOCH || epoch == fetchBrokerEpoch);
    }

    @Override
    public boolean strictMinIsr() {
        return strictMinIsr;
    }

    @Override
    public synchronized CompletableFuture<AlterPartitionResponseData.PartitionData> submitIsrChange(TopicPartition topicPartition, UUID topicId,
                                                                                                    AlterPartitionRequestData.PartitionData change) {
        CompletableFuture<AlterPartitionResponseData.PartitionData> future = new CompletableFuture<>();
        submitted.add(new Submitted(topicPartition, topicId, change, future));
        return future;
    }

    @Override
    public synchronized void onHighWatermarkIncremented(TopicPartition topicPartition) {
        highWatermarkNotifications++;
    }

    Submitted lastSubmitted() {
        return submitted.get(submitted.size() - 1);
    }
}
