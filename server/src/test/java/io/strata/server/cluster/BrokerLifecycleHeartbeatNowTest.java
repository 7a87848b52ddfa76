package io.strata.server.cluster;

import io.strata.common.MockTime;
import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.ControllerApi;
import io.strata.protocol.message.BrokerHeartbeatRequestData;
import io.strata.protocol.message.BrokerHeartbeatResponseData;
import io.strata.protocol.message.BrokerRegistrationResponseData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link BrokerLifecycleManager#heartbeatNow}: after a lost controller connection or a controller
 * change the next heartbeat goes at once, not at its schedule (a minute here), and never while
 * one is in flight (one request at a time).
 */
class BrokerLifecycleHeartbeatNowTest {
    private static final List<BrokerRegistration.Endpoint> ENDPOINTS = List.of(new BrokerRegistration.Endpoint("PLAINTEXT", "localhost", 9092,
        (short) 0));
    private static final long HEARTBEAT_INTERVAL_MS = 60_000;

    /** Heartbeats the fake controller received, each with the future that answers it. */
    private record Heartbeat(BrokerHeartbeatRequestData request, CompletableFuture<BrokerHeartbeatResponseData> answer) {
    }

    private final BlockingQueue<Heartbeat> heartbeats = new LinkedBlockingQueue<>();
    private final BrokerLifecycleManager lifecycle = new BrokerLifecycleManager(1, "cluster", controller(), () -> 10L, HEARTBEAT_INTERVAL_MS,
        new MockTime());

    private ControllerApi controller() {
        return (ControllerApi) Proxy.newProxyInstance(ControllerApi.class.getClassLoader(), new Class<?>[] {ControllerApi.class},
            (proxy, method, args) -> {
                if (method.getName().equals("registerBroker")) {
                    return CompletableFuture.completedFuture(new BrokerRegistrationResponseData().setBrokerEpoch(7L));
                }
                if (method.getName().equals("brokerHeartbeat")) {
                    CompletableFuture<BrokerHeartbeatResponseData> answer = new CompletableFuture<>();
                    heartbeats.add(new Heartbeat((BrokerHeartbeatRequestData) args[0], answer));
                    return answer;
                }
                if (method.getDeclaringClass() == Object.class) {
                    return method.getName().equals("hashCode") ? System.identityHashCode(proxy) : method.getName().equals("equals")
                        ? proxy == args[0] : "controller";
                }
                return new CompletableFuture<>();
            });
    }

    @AfterEach
    void close() {
        lifecycle.close();
    }

    private Heartbeat nextHeartbeat(String what) throws InterruptedException {
        Heartbeat heartbeat = heartbeats.poll(10, TimeUnit.SECONDS);
        assertThat(heartbeat).as(what).isNotNull();
        return heartbeat;
    }

    @Test
    void aRunningBrokerHeartbeatsAtOnceWhenToldAndNotAgainWhileOneIsInFlight() throws Exception {
        CompletableFuture<Long> unfenced = lifecycle.start(ENDPOINTS, null);
        nextHeartbeat("the first heartbeat after registering").answer().complete(new BrokerHeartbeatResponseData().setIsFenced(false));
        assertThat(unfenced.get(10, TimeUnit.SECONDS)).isEqualTo(7L);
        assertThat(heartbeats.poll(200, TimeUnit.MILLISECONDS)).as("the next one is a minute away").isNull();

        lifecycle.heartbeatNow();
        Heartbeat now = nextHeartbeat("a heartbeat at once after heartbeatNow");
        assertThat(now.request().brokerEpoch()).isEqualTo(7L);
        lifecycle.heartbeatNow();
        assertThat(heartbeats.poll(200, TimeUnit.MILLISECONDS)).as("one in flight: no second").isNull();

        now.answer().complete(new BrokerHeartbeatResponseData().setIsFenced(false));
        assertThat(heartbeats.poll(200, TimeUnit.MILLISECONDS)).as("answered: the schedule (a minute) resumes").isNull();
        lifecycle.heartbeatNow();
        nextHeartbeat("heartbeatNow again, nothing in flight").answer().complete(new BrokerHeartbeatResponseData().setIsFenced(false));
        assertThat(lifecycle.state()).isEqualTo(BrokerLifecycleManager.State.RUNNING);
    }
}
