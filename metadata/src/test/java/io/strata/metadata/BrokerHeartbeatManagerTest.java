package io.strata.metadata;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.strata.metadata.TestRecords.register;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** BrokerHeartbeatManager on a fake clock: sessions, one report per silence, failover reset, fixed catch-up target. */
class BrokerHeartbeatManagerTest {
    private static final long SESSION_TIMEOUT_MS = 9_000;

    private final BrokerHeartbeatManager manager = new BrokerHeartbeatManager();
    private final Set<Integer> fenced = new HashSet<>();
    private long nowMs = 1_000_000;

    @BeforeEach
    void registerThreeBrokers() {
        for (int id = 1; id <= 3; id++) {
            manager.register(id, nowMs, 100);
        }
    }

    private List<Integer> expired() {
        return manager.expired(nowMs, SESSION_TIMEOUT_MS, id -> !fenced.contains(id));
    }

    @Test
    void aBrokerExpiresOnlyAfterAFullSessionWithoutContact() {
        nowMs += SESSION_TIMEOUT_MS;
        assertThat(expired()).as("exactly the timeout: still valid").isEmpty();
        nowMs += 1;
        assertThat(expired()).containsExactly(1, 2, 3);
    }

    @Test
    void touchingStartsTheSessionAgain() {
        nowMs += 5_000;
        manager.touch(2, nowMs);
        nowMs += 5_000;
        assertThat(expired()).containsExactly(1, 3);
        assertThat(manager.lastContactMs(2)).isEqualTo(1_005_000);
        nowMs += 5_000;
        assertThat(expired()).containsExactly(2);
    }

    @Test
    void anExpiredBrokerIsReportedOnceUntilTouchedAgain() {
        nowMs += SESSION_TIMEOUT_MS + 1;
        assertThat(expired()).containsExactly(1, 2, 3);
        nowMs += 60_000;
        assertThat(expired()).isEmpty();
        manager.touch(1, nowMs);
        nowMs += SESSION_TIMEOUT_MS + 1;
        assertThat(expired()).containsExactly(1);
    }

    @Test
    void onlyFencingCandidatesAreReportedAndAFencedBrokerIsReportedOnceUnfenced() {
        fenced.add(2);
        nowMs += SESSION_TIMEOUT_MS + 1;
        assertThat(expired()).containsExactly(1, 3);
        fenced.remove(2);
        assertThat(expired()).containsExactly(2);
    }

    @Test
    void theImageOverloadTakesTheUnfencedBrokersAsCandidates() {
        MetadataImage image = MetadataImage.EMPTY.apply(List.of(register(1, 1, null, false), register(2, 2, null, true)), 1);
        nowMs += SESSION_TIMEOUT_MS + 1;
        assertThat(manager.expired(nowMs, SESSION_TIMEOUT_MS, image)).as("2 fenced, 3 not in the image").containsExactly(1);
    }

    @Test
    void aRemovedBrokerIsForgottenAndARegistrationStartsANewSession() {
        manager.remove(3);
        assertThat(manager.isRegistered(3)).isFalse();
        nowMs += SESSION_TIMEOUT_MS + 1;
        assertThat(expired()).containsExactly(1, 2);
        manager.register(1, nowMs, 500);
        nowMs += SESSION_TIMEOUT_MS + 1;
        assertThat(expired()).containsExactly(1);
        assertThatThrownBy(() -> manager.touch(3, nowMs)).isInstanceOf(IllegalStateException.class).hasMessageContaining("broker 3");
    }

    @Test
    void aControllerBecomingActiveGivesEveryRegisteredBrokerAFullSessionEvenWithoutHeartbeats() {
        nowMs += 8_000;
        manager.resetAll(List.of(1, 2, 3, 4), nowMs, 700);
        nowMs += SESSION_TIMEOUT_MS;
        assertThat(expired()).as("brokers silent since before the failover keep a full session from the failover").isEmpty();
        nowMs += 1;
        assertThat(expired()).as("including 4, which never heartbeated to this controller").containsExactly(1, 2, 3, 4);
        assertThat(manager.catchUpTargetOffset(4)).isEqualTo(700);
    }

    @Test
    void resetAllForgetsBrokersNoLongerRegistered() {
        manager.resetAll(List.of(1), nowMs, 0);
        assertThat(manager.isRegistered(2)).isFalse();
        nowMs += SESSION_TIMEOUT_MS + 1;
        assertThat(expired()).containsExactly(1);
    }

    @Test
    void catchUpIsAgainstTheTargetFixedAtRegistrationNotTheMovingCommittedOffset() {
        assertThat(manager.caughtUp(1, 99)).isFalse();
        assertThat(manager.caughtUp(1, 100)).isTrue();
        // The controller keeps committing (NoOp records); the target does not move with it.
        for (int i = 0; i < 10; i++) {
            nowMs += 500;
            manager.touch(1, nowMs);
        }
        assertThat(manager.catchUpTargetOffset(1)).isEqualTo(100);
        assertThat(manager.caughtUp(1, 100)).isTrue();
        manager.register(1, nowMs, 250);
        assertThat(manager.caughtUp(1, 200)).as("a new registration fixes a new target").isFalse();
    }

    @Test
    void aLateTouchDoesNotMoveTheLastContactBack() {
        manager.touch(1, nowMs + 5_000);
        manager.touch(1, nowMs);
        assertThat(manager.lastContactMs(1)).isEqualTo(nowMs + 5_000);
    }

    @Test
    void aNonPositiveSessionTimeoutIsABug() {
        assertThatThrownBy(() -> manager.expired(nowMs, 0, id -> true)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("sessionTimeoutMs must be positive: sessionTimeoutMs=0");
    }

    // ------------------------------------------------------------ dead-broker fast path (strata.broker.disconnect.fence.ms)

    private static final long GRACE_MS = 1_000;

    private List<Integer> expiredWithGrace(long graceMs) {
        return manager.expired(nowMs, SESSION_TIMEOUT_MS, graceMs, id -> !fenced.contains(id));
    }

    @Test
    void aBrokerWhoseHeartbeatConnectionClosedIsFencedAfterTheGraceNotTheSession() {
        manager.touch(1, nowMs, "conn-1");
        manager.touch(2, nowMs, "conn-2");
        nowMs += 300;
        assertThat(manager.connectionClosed("conn-1", nowMs)).containsExactly(1);
        assertThat(manager.isSuspect(1)).isTrue();
        assertThat(manager.isSuspect(2)).isFalse();
        nowMs += GRACE_MS;
        assertThat(expiredWithGrace(GRACE_MS)).as("exactly the grace: still valid").isEmpty();
        nowMs += 1;
        assertThat(expiredWithGrace(GRACE_MS)).containsExactly(1);
        assertThat(expiredWithGrace(GRACE_MS)).as("reported once").isEmpty();
    }

    @Test
    void aHeartbeatOverANewConnectionClearsTheSuspicion() {
        manager.touch(1, nowMs, "conn-1");
        manager.connectionClosed("conn-1", nowMs);
        nowMs += 200;
        manager.touch(1, nowMs, "conn-9");
        assertThat(manager.isSuspect(1)).isFalse();
        nowMs += GRACE_MS + 1;
        assertThat(expiredWithGrace(GRACE_MS)).isEmpty();
        nowMs += SESSION_TIMEOUT_MS;
        assertThat(expiredWithGrace(GRACE_MS)).as("the session still ends as usual").containsExactly(1, 2, 3);
    }

    @Test
    void theCloseOfAnOlderConnectionSeenAfterAHeartbeatOnTheNewOneIsIgnored() {
        manager.touch(1, nowMs, "conn-1");
        manager.touch(1, nowMs + 10, "conn-2");
        assertThat(manager.connectionClosed("conn-1", nowMs + 20)).isEmpty();
        nowMs += GRACE_MS + 100;
        assertThat(manager.isSuspect(1)).isFalse();
        assertThat(expiredWithGrace(GRACE_MS)).isEmpty();
    }

    @Test
    void aSecondCloseKeepsTheFirstSuspicionTime() {
        manager.touch(1, nowMs, "conn-1");
        manager.connectionClosed("conn-1", nowMs);
        nowMs += 600;
        manager.connectionClosed("conn-1", nowMs);
        nowMs += 401;
        assertThat(expiredWithGrace(GRACE_MS)).containsExactly(1);
    }

    @Test
    void aGraceOfZeroTurnsTheFastPathOff() {
        manager.touch(1, nowMs, "conn-1");
        manager.connectionClosed("conn-1", nowMs);
        nowMs += SESSION_TIMEOUT_MS;
        assertThat(expiredWithGrace(0)).as("a suspect broker keeps its full session").isEmpty();
        assertThat(expired()).as("the grace-less overload is the same").isEmpty();
        nowMs += 1;
        assertThat(expiredWithGrace(0)).containsExactly(1, 2, 3);
    }

    @Test
    void aSuspectBrokerAlreadyFencedIsNotReportedAndSessionExpiryIsUnchanged() {
        manager.touch(1, nowMs, "conn-1");
        manager.connectionClosed("conn-1", nowMs);
        fenced.add(1);
        nowMs += GRACE_MS + 1;
        assertThat(expiredWithGrace(GRACE_MS)).isEmpty();
        nowMs += SESSION_TIMEOUT_MS;
        assertThat(expiredWithGrace(GRACE_MS)).as("2 and 3 expire by session as without the fast path").containsExactly(2, 3);
    }

    @Test
    void aNegativeGraceIsABug() {
        assertThatThrownBy(() -> manager.expired(nowMs, SESSION_TIMEOUT_MS, -1, id -> true)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("disconnectFenceMs must be 0 (off) or positive: disconnectFenceMs=-1");
    }

    @Test
    void aRefusedProbeMakesOnlyAnUnheardBrokerSuspect() {
        long graceMs = 1_000;
        assertThat(manager.unheard(id -> true)).containsExactly(1, 2, 3);
        manager.touch(1, nowMs, "conn-1");
        assertThat(manager.unheard(id -> id != 3)).as("heard from, or not a candidate").containsExactly(2);

        assertThat(manager.refusedConnection(1, nowMs)).as("heard from: its connection is watched instead").isFalse();
        assertThat(manager.refusedConnection(2, nowMs)).isTrue();
        assertThat(manager.refusedConnection(2, nowMs + 500)).as("already suspect: the first time stands").isFalse();
        assertThat(manager.isSuspect(2)).isTrue();
        assertThat(manager.unheard(id -> true)).as("suspect brokers are not probed again").containsExactly(3);

        nowMs += graceMs;
        assertThat(manager.expired(nowMs, SESSION_TIMEOUT_MS, graceMs, id -> true)).isEmpty();
        nowMs += 1;
        assertThat(manager.expired(nowMs, SESSION_TIMEOUT_MS, graceMs, id -> true)).containsExactly(2);

        manager.resetAll(List.of(1, 2, 3), nowMs, 100);
        assertThat(manager.unheard(id -> true)).as("a new active controller has heard from nobody").containsExactly(1, 2, 3);
    }
}
