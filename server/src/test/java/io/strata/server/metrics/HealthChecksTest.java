package io.strata.server.metrics;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HealthChecksTest {
    @Test
    void readinessReadsItsSourcesAtEveryCheckAndNamesTheFirstFailedOne() {
        AtomicBoolean metadataLoaded = new AtomicBoolean();
        AtomicBoolean started = new AtomicBoolean();
        AtomicBoolean shuttingDown = new AtomicBoolean();
        HealthChecks health = new HealthChecks(new HealthChecks.Sources(metadataLoaded::get, () -> true, started::get, shuttingDown::get,
            () -> null, () -> null, () -> null));

        HealthChecks.Status replaying = health.readiness();
        assertThat(replaying.healthy()).isFalse();
        assertThat(replaying.reason()).isEqualTo("metadata: replaying the metadata log");
        assertThat(replaying.checks()).containsEntry("logs", "log manager not created")
            .containsEntry("coordinators", "coordinators not created")
            .containsEntry("listeners", "listeners and request handlers not started")
            .doesNotContainKey("shutdown");

        metadataLoaded.set(true);
        started.set(true);
        HealthChecks.Status noLogs = health.readiness();
        assertThat(noLogs.reason()).isEqualTo("logs: log manager not created");
        assertThat(noLogs.checks()).containsEntry("metadata", "ok").containsEntry("listeners", "ok");

        shuttingDown.set(true);
        assertThat(health.readiness().checks()).containsEntry("shutdown", "shutting down");
        assertThat(health.liveness().healthy()).isTrue();
    }

    @Test
    void aNodeWithoutTheBrokerRoleIsReadyWithoutLogsOrCoordinators() {
        AtomicBoolean metadataLoaded = new AtomicBoolean();
        AtomicBoolean started = new AtomicBoolean();
        HealthChecks controllerOnly = new HealthChecks(new HealthChecks.Sources(metadataLoaded::get, () -> false, started::get, () -> false,
            () -> null, () -> null, () -> null, false));
        assertThat(controllerOnly.readiness().reason()).isEqualTo("metadata: replaying the metadata log");
        metadataLoaded.set(true);
        assertThat(controllerOnly.readiness().reason()).isEqualTo("listeners: listeners and request handlers not started");
        started.set(true);
        HealthChecks.Status ready = controllerOnly.readiness();
        assertThat(ready.healthy()).isTrue();
        assertThat(ready.checks()).containsOnlyKeys("metadata", "listeners");

        // The same sources with the broker role wait for the logs and coordinators.
        HealthChecks broker = new HealthChecks(new HealthChecks.Sources(metadataLoaded::get, () -> false, started::get, () -> false,
            () -> null, () -> null, () -> null, true));
        assertThat(broker.readiness().reason()).isEqualTo("logs: log manager not created");
    }

    @Test
    void everySourceIsRequired() {
        assertThatThrownBy(() -> new HealthChecks.Sources(() -> true, () -> true, () -> true, () -> true, () -> null, () -> null, null))
            .isInstanceOf(NullPointerException.class).hasMessage("transactionCoordinator");
        assertThatThrownBy(() -> new HealthChecks(null)).isInstanceOf(NullPointerException.class);
    }
}
