package io.strata.server.cluster;

import io.strata.common.Time;
import io.strata.metadata.NotControllerException;
import io.strata.protocol.message.BrokerHeartbeatRequestData;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.ElectLeadersRequestData;
import io.strata.server.config.QuorumVoter;
import io.strata.server.network.client.InterBrokerClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntSupplier;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A client's request that a broker forwards to the controller (CreateTopics, DeleteTopics,
 * CreatePartitions, IncrementalAlterConfigs, ElectLeaders, UpdateFeatures, reassignments) and that
 * found no active controller within the channel's timeout ends as Kafka's ForwardingManager ends
 * it: a timeout, answered REQUEST_TIMED_OUT ({@code ControllerErrors}), not NOT_CONTROLLER, which
 * a client would take as "this node is not the controller" and retry against the same broker. The
 * broker's own calls (heartbeats, registration, AlterPartition) keep their NOT_CONTROLLER end, which
 * their callers handle. Real {@link RemoteController} and {@link InterBrokerClient}: once with no
 * known quorum leader, once with a leader whose port refuses connections.
 */
class RemoteControllerForwardingTimeoutTest {
    private static final long CHANNEL_TIMEOUT_MS = 400;

    private InterBrokerClient client;

    @BeforeEach
    void startClient() {
        client = new InterBrokerClient(InterBrokerClient.Settings.defaults("forwarding-timeout-test"), 1, Time.SYSTEM, new Random(7));
    }

    @AfterEach
    void closeClient() {
        client.close();
    }

    @Test
    void noKnownLeaderEndsEveryForwardedClientRequestInATimeout() throws Exception {
        try (RemoteController controller = controller(() -> -1, 9)) {
            assertEndsInTimeout(controller.createTopics(List.of(new CreateTopicsRequestData.CreatableTopic().setName("t")
                .setNumPartitions(1).setReplicationFactor((short) 1)), false));
            assertEndsInTimeout(controller.deleteTopics(List.of("t"), java.util.Collections.singletonList((UUID) null)));
            assertEndsInTimeout(controller.createPartitions(List.of(), false));
            assertEndsInTimeout(controller.electLeaders(new ElectLeadersRequestData()));
            assertEndsInTimeout(controller.updateFeatures(Map.of(), Map.of(), true));
        }
    }

    @Test
    void anUnreachableLeaderEndsAForwardedRequestInATimeout() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        try (RemoteController controller = new RemoteController(() -> 1,
                new QuorumPeers(List.of(new QuorumVoter(1, "127.0.0.1", closedPort)), client), client, Time.SYSTEM, CHANNEL_TIMEOUT_MS)) {
            assertEndsInTimeout(controller.createTopics(List.of(new CreateTopicsRequestData.CreatableTopic().setName("t")
                .setNumPartitions(1).setReplicationFactor((short) 1)), false));
        }
    }

    @Test
    void theBrokersOwnCallsKeepTheirNotControllerEnd() throws Exception {
        try (RemoteController controller = controller(() -> -1, 9)) {
            CompletableFuture<?> heartbeat = controller.brokerHeartbeat(new BrokerHeartbeatRequestData().setBrokerId(1));
            assertThatThrownBy(() -> heartbeat.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(NotControllerException.class).hasMessageContaining("no active controller answered");
        }
    }

    private RemoteController controller(IntSupplier leader, int voterPort) {
        return new RemoteController(leader, new QuorumPeers(List.of(new QuorumVoter(1, "127.0.0.1", voterPort)), client), client, Time.SYSTEM,
            CHANNEL_TIMEOUT_MS);
    }

    private static void assertEndsInTimeout(CompletableFuture<?> forwarded) {
        assertThatThrownBy(() -> forwarded.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
            .cause().isInstanceOf(TimeoutException.class).hasMessageContaining("no active controller answered");
    }
}
