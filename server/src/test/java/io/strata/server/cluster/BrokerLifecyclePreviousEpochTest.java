package io.strata.server.cluster;

import io.strata.common.MockTime;
import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.ControllerApi;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.BrokerRegistrationRequestData;
import io.strata.protocol.message.BrokerRegistrationResponseData;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/** KIP-966: every BrokerRegistration of a run carries the epoch the previous run's clean shutdown recorded. */
class BrokerLifecyclePreviousEpochTest {
    private static final List<BrokerRegistration.Endpoint> ENDPOINTS = List.of(new BrokerRegistration.Endpoint("PLAINTEXT", "localhost", 9092,
        (short) 0));

    /** A controller that refuses the first registration (so the broker registers again), then accepts with epoch 7; heartbeats never answer. */
    private static ControllerApi controller(List<BrokerRegistrationRequestData> registrations) {
        return (ControllerApi) Proxy.newProxyInstance(ControllerApi.class.getClassLoader(), new Class<?>[] {ControllerApi.class},
            (proxy, method, args) -> {
                if (method.getName().equals("registerBroker")) {
                    registrations.add((BrokerRegistrationRequestData) args[0]);
                    BrokerRegistrationResponseData response = new BrokerRegistrationResponseData();
                    return CompletableFuture.completedFuture(registrations.size() == 1
                        ? response.setErrorCode(ErrorCode.NOT_CONTROLLER.code()) : response.setBrokerEpoch(7L));
                }
                if (method.getDeclaringClass() == Object.class) {
                    return method.getName().equals("hashCode") ? System.identityHashCode(proxy) : method.getName().equals("equals")
                        ? proxy == args[0] : "controller";
                }
                return new CompletableFuture<>();
            });
    }

    private static List<BrokerRegistrationRequestData> registrationsOf(OptionalLong previousBrokerEpoch) {
        List<BrokerRegistrationRequestData> registrations = new CopyOnWriteArrayList<>();
        BrokerLifecycleManager lifecycle = new BrokerLifecycleManager(1, "cluster", controller(registrations), () -> -1L, 60_000L,
            new MockTime());
        try {
            if (previousBrokerEpoch == null) {
                lifecycle.start(ENDPOINTS, null);
            } else {
                lifecycle.start(ENDPOINTS, null, previousBrokerEpoch);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (lifecycle.brokerEpoch() != 7L && System.nanoTime() < deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
            assertThat(lifecycle.brokerEpoch()).as("registered within 30 s").isEqualTo(7L);
        } finally {
            lifecycle.close();
        }
        return registrations;
    }

    @Test
    void everyRegistrationSendsThePreviousRunsEpoch() {
        List<BrokerRegistrationRequestData> registrations = registrationsOf(OptionalLong.of(42L));

        assertThat(registrations).hasSize(2).allSatisfy(request -> assertThat(request.previousBrokerEpoch()).isEqualTo(42L));
    }

    @Test
    void unknownPreviousEpochIsSentAsMinusOne() {
        assertThat(registrationsOf(OptionalLong.empty())).allSatisfy(request -> assertThat(request.previousBrokerEpoch()).isEqualTo(-1L));
        assertThat(registrationsOf(null)).allSatisfy(request -> assertThat(request.previousBrokerEpoch()).isEqualTo(-1L));
    }
}
