package io.strata.coordinator.group;

import io.strata.common.MockTime;
import io.strata.coordinator.group.consumer.ConsumerGroupSettings;
import io.strata.coordinator.group.consumer.TopicsView;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.JoinGroupRequestData;
import io.strata.protocol.message.JoinGroupResponseData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When leadership of a {@code __consumer_offsets} partition moves to another broker the shard is
 * unloaded: a member waiting for its JoinGroup answer is told NOT_COORDINATOR at once, and every
 * later request for the shard's groups is NOT_COORDINATOR; leading it again reloads it.
 */
class GroupCoordinatorResignationTest {
    private final MockTime time = new MockTime();
    private final OffsetExpirationTest.MemoryLog log = new OffsetExpirationTest.MemoryLog();
    private GroupCoordinator coordinator;

    @AfterEach
    void stop() {
        if (coordinator != null) {
            coordinator.close();
        }
    }

    private void awaitLoaded() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!coordinator.isLoaded() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(coordinator.isLoaded()).isTrue();
    }

    private CompletableFuture<JoinGroupResponseData> join(String group) {
        JoinGroupRequestData join = new JoinGroupRequestData().setGroupId(group).setMemberId("").setProtocolType("consumer")
            .setSessionTimeoutMs(30_000).setRebalanceTimeoutMs(60_000);
        join.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(new byte[0]));
        return coordinator.joinGroup(join, (short) 3, "client", "/127.0.0.1");
    }

    @Test
    void losingLeadershipAnswersWaitingJoinsAndLaterRequestsWithNotCoordinator() throws Exception {
        // A long initial rebalance delay keeps the first JoinGroup waiting in the shard.
        coordinator = new GroupCoordinator(new GroupCoordinatorSettings(1, 1, 3_600_000, 600_000, 100, 4096, 1, TimeUnit.DAYS.toMillis(7),
            TimeUnit.DAYS.toMillis(365)), log, time);
        coordinator.configureConsumerGroups(new ConsumerGroupSettings(1000, 3_600_000, 100, ConsumerGroupSettings.DEFAULT_ASSIGNORS),
            () -> TopicsView.EMPTY);
        coordinator.onPartitionsLed(Set.of(0));
        awaitLoaded();
        CompletableFuture<JoinGroupResponseData> waiting = join("app");
        assertThat(waiting).isNotDone();

        coordinator.onPartitionsLed(Set.of());

        assertThat(ErrorCode.forCode(waiting.get(10, TimeUnit.SECONDS).errorCode())).isEqualTo(ErrorCode.NOT_COORDINATOR);
        assertThat(ErrorCode.forCode(join("app").get(10, TimeUnit.SECONDS).errorCode())).isEqualTo(ErrorCode.NOT_COORDINATOR);

        coordinator.onPartitionsLed(Set.of(0));
        awaitLoaded();
        assertThat(coordinator.shard(0)).isNotNull();
    }
}
