package io.strata.server.cluster;

import io.strata.common.MockTime;
import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.ControllerApi;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AssignReplicasToDirsRequestData;
import io.strata.protocol.message.AssignReplicasToDirsResponseData;
import io.strata.protocol.message.BrokerHeartbeatRequestData;
import io.strata.protocol.message.BrokerHeartbeatResponseData;
import io.strata.protocol.message.BrokerRegistrationRequestData;
import io.strata.protocol.message.BrokerRegistrationResponseData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * KIP-858 on the broker side: LogDirs in the registration, a failed directory in the heartbeats'
 * OfflineLogDirs, then its replicas in AssignReplicasToDirs (only after a heartbeat carrying the
 * directory was answered), retried until accepted; {@code log.dir.failure.timeout.ms} halts a
 * broker whose controller never accepts them.
 */
class BrokerLifecycleLogDirFailureTest {
    private static final List<BrokerRegistration.Endpoint> ENDPOINTS = List.of(new BrokerRegistration.Endpoint("PLAINTEXT", "localhost", 9092,
        (short) 0));
    private static final UUID HEALTHY = new UUID(1, 1);
    private static final UUID FAILED = new UUID(2, 2);
    private static final UUID TOPIC = new UUID(3, 3);

    private final BlockingQueue<BrokerHeartbeatRequestData> heartbeats = new LinkedBlockingQueue<>();
    private final BlockingQueue<AssignReplicasToDirsRequestData> assignments = new LinkedBlockingQueue<>();
    private final List<BrokerRegistrationRequestData> registrations = new CopyOnWriteArrayList<>();
    private final List<String> halts = new CopyOnWriteArrayList<>();
    private volatile ErrorCode assignmentAnswer = ErrorCode.NONE;
    private final BrokerLifecycleManager lifecycle = new BrokerLifecycleManager(1, "cluster", controller(), () -> 10L, 50, new MockTime());

    private ControllerApi controller() {
        return (ControllerApi) Proxy.newProxyInstance(ControllerApi.class.getClassLoader(), new Class<?>[] {ControllerApi.class},
            (proxy, method, args) -> switch (method.getName()) {
                case "registerBroker" -> {
                    registrations.add((BrokerRegistrationRequestData) args[0]);
                    yield CompletableFuture.completedFuture(new BrokerRegistrationResponseData().setBrokerEpoch(7L));
                }
                case "brokerHeartbeat" -> {
                    heartbeats.add((BrokerHeartbeatRequestData) args[0]);
                    yield CompletableFuture.completedFuture(new BrokerHeartbeatResponseData().setIsFenced(false));
                }
                case "assignReplicasToDirs" -> {
                    AssignReplicasToDirsRequestData request = (AssignReplicasToDirsRequestData) args[0];
                    assignments.add(request);
                    yield CompletableFuture.completedFuture(answer(request, assignmentAnswer));
                }
                case "hashCode" -> System.identityHashCode(proxy);
                case "equals" -> proxy == args[0];
                case "toString" -> "controller";
                default -> new CompletableFuture<>();
            });
    }

    /** Every partition answered NONE when {@code error} is NONE; else a top-level error. */
    private static AssignReplicasToDirsResponseData answer(AssignReplicasToDirsRequestData request, ErrorCode error) {
        AssignReplicasToDirsResponseData response = new AssignReplicasToDirsResponseData().setErrorCode(error.code());
        if (error != ErrorCode.NONE) {
            return response;
        }
        for (AssignReplicasToDirsRequestData.DirectoryData directory : request.directories()) {
            AssignReplicasToDirsResponseData.DirectoryData answered = new AssignReplicasToDirsResponseData.DirectoryData().setId(directory.id());
            for (AssignReplicasToDirsRequestData.TopicData topic : directory.topics()) {
                AssignReplicasToDirsResponseData.TopicData topicAnswer = new AssignReplicasToDirsResponseData.TopicData().setTopicId(topic.topicId());
                topic.partitions().forEach(partition -> topicAnswer.partitions().add(new AssignReplicasToDirsResponseData.PartitionData()
                    .setPartitionIndex(partition.partitionIndex()).setErrorCode(ErrorCode.NONE.code())));
                answered.topics().add(topicAnswer);
            }
            response.directories().add(answered);
        }
        return response;
    }

    @AfterEach
    void close() {
        lifecycle.close();
    }

    @Test
    void aFailedDirectoryIsReportedInHeartbeatsThenItsReplicasAreAssignedToIt() throws Exception {
        lifecycle.setLogDirs(List.of(HEALTHY, FAILED));
        lifecycle.setLogDirFailureTimeout(60_000, (status, reason) -> halts.add(reason));
        lifecycle.start(ENDPOINTS, null).get(10, TimeUnit.SECONDS);
        assertThat(registrations.get(0).logDirs()).containsExactly(HEALTHY, FAILED);
        assertThat(heartbeats.poll(10, TimeUnit.SECONDS).offlineLogDirs()).isEmpty();

        lifecycle.onLogDirFailure(FAILED, Map.of(TOPIC, Set.of(0, 2)));

        BrokerHeartbeatRequestData reported = nextHeartbeatWithOfflineDirs();
        assertThat(reported.offlineLogDirs()).containsExactly(FAILED);
        AssignReplicasToDirsRequestData assignment = assignments.poll(10, TimeUnit.SECONDS);
        assertThat(assignment).as("the replicas are assigned to the failed directory").isNotNull();
        assertThat(assignment.brokerEpoch()).isEqualTo(7L);
        assertThat(assignment.directories()).hasSize(1);
        assertThat(assignment.directories().get(0).id()).isEqualTo(FAILED);
        assertThat(assignment.directories().get(0).topics().get(0).topicId()).isEqualTo(TOPIC);
        assertThat(assignment.directories().get(0).topics().get(0).partitions()).extracting(AssignReplicasToDirsRequestData.PartitionData::partitionIndex)
            .containsExactly(0, 2);
        assertThat(assignments.poll(300, TimeUnit.MILLISECONDS)).as("accepted: not sent again").isNull();
        assertThat(nextHeartbeatWithOfflineDirs().offlineLogDirs()).as("every later heartbeat repeats it").containsExactly(FAILED);
        assertThat(halts).isEmpty();
    }

    @Test
    void aControllerThatNeverAcceptsTheAssignmentHaltsTheBrokerAfterTheTimeout() throws Exception {
        assignmentAnswer = ErrorCode.NOT_CONTROLLER;
        lifecycle.setLogDirFailureTimeout(500, (status, reason) -> halts.add(status + " " + reason));
        lifecycle.start(ENDPOINTS, null).get(10, TimeUnit.SECONDS);

        lifecycle.onLogDirFailure(FAILED, Map.of(TOPIC, Set.of(1)));

        assertThat(assignments.poll(10, TimeUnit.SECONDS)).isNotNull();
        assertThat(assignments.poll(10, TimeUnit.SECONDS)).as("refused: retried").isNotNull();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (halts.isEmpty()) {
            assertThat(System.nanoTime()).as("the broker halts after log.dir.failure.timeout.ms").isLessThan(deadline);
            Thread.sleep(10);
        }
        assertThat(halts.get(0)).startsWith("1 ").contains("log.dir.failure.timeout.ms=500").contains(FAILED.toString());
    }

    private BrokerHeartbeatRequestData nextHeartbeatWithOfflineDirs() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            BrokerHeartbeatRequestData heartbeat = heartbeats.poll(1, TimeUnit.SECONDS);
            if (heartbeat != null && !heartbeat.offlineLogDirs().isEmpty()) {
                return heartbeat;
            }
        }
        throw new AssertionError("no heartbeat reported an offline directory");
    }
}
