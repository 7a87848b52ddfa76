package io.strata.server.replica;

import io.strata.common.MockTime;
import io.strata.common.config.ConfigException;
import io.strata.storage.LogConfig;
import io.strata.storage.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * The replication throttle under a fake clock: Kafka's sampled rate (11 windows of 1 s, the
 * elapsed time never counted below 10 windows), the bound, and which partitions it throttles.
 */
class ReplicationQuotaManagerTest {
    private final MockTime time = new MockTime();

    private ReplicationQuotaManager manager(long bytesPerSecond) {
        ReplicationQuotaManager manager = new ReplicationQuotaManager(ReplicationQuotaManager.Side.LEADER, 11, 1, time);
        manager.updateQuota(bytesPerSecond);
        return manager;
    }

    @Test
    void aFirstBurstIsSpreadOverTenWindowsAndExpiresAfterElevenSeconds() {
        ReplicationQuotaManager quota = manager(100);
        quota.record(1_000);
        assertThat(quota.byteRate()).isCloseTo(100.0, within(0.001));
        assertThat(quota.isQuotaExceeded()).as("exactly at the bound is not over it").isFalse();
        quota.record(1);
        assertThat(quota.isQuotaExceeded()).isTrue();

        time.advance(10_000);
        assertThat(quota.byteRate()).as("10 s elapsed: still 10 windows").isCloseTo(100.1, within(0.001));
        time.advance(500);
        assertThat(quota.byteRate()).as("10.5 s elapsed").isCloseTo(1_001 / 10.5, within(0.001));
        time.advance(500);
        assertThat(quota.byteRate()).as("the window is 11 s old: obsolete").isZero();
        assertThat(quota.isQuotaExceeded()).isFalse();
    }

    @Test
    void aSteadyRateReadsAsThatRateOnceTheWindowsAreFull() {
        ReplicationQuotaManager quota = manager(1_000);
        for (int second = 0; second < 30; second++) {
            quota.record(500);
            time.advance(500);
            quota.record(500);
            time.advance(500);
        }
        assertThat(quota.byteRate()).isBetween(900.0, 1_100.0);
        quota.record(5_000);
        assertThat(quota.isQuotaExceeded()).isTrue();
    }

    @Test
    void theDefaultRateIsNeverExceededAndARateChangeKeepsTheMeasuredBytes() {
        ReplicationQuotaManager quota = manager(ReplicationQuotaManager.UNLIMITED);
        quota.record(Long.MAX_VALUE / 4);
        assertThat(quota.isQuotaExceeded()).isFalse();

        ReplicationQuotaManager limited = manager(ReplicationQuotaManager.UNLIMITED);
        limited.record(10_000);
        limited.updateQuota(500);
        assertThat(limited.upperBound()).isEqualTo(500);
        assertThat(limited.isQuotaExceeded()).isTrue();
        assertThatThrownBy(() -> limited.updateQuota(-1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
    }

    @Test
    void throttledPartitionsComeFromTheTopicConfigEntriesNamingThisBroker() {
        ReplicationQuotaManager quota = manager(100);
        quota.applyTopicConfig("orders", List.of("0:1", "1:2", "2:1"), 1);
        assertThat(quota.isThrottled(new TopicPartition("orders", 0))).isTrue();
        assertThat(quota.isThrottled(new TopicPartition("orders", 1))).as("names broker 2").isFalse();
        assertThat(quota.isThrottled(new TopicPartition("orders", 2))).isTrue();
        assertThat(quota.isThrottled(new TopicPartition("other", 0))).isFalse();

        quota.applyTopicConfig("orders", List.of("*"), 1);
        assertThat(quota.isThrottled(new TopicPartition("orders", 7))).isTrue();

        quota.applyTopicConfig("orders", List.of("1:2"), 1);
        assertThat(quota.throttledTopics()).as("no entry for this broker: no throttle").isEmpty();
        assertThat(ThrottledReplicas.partitionsOf(List.of(" 3:1 ", "", "4:1"), 1)).isEqualTo(Set.of(3, 4));
    }

    @Test
    void throttledReplicaListsAreValidatedWithKafkasMessage() {
        for (String valid : List.of("", "*", "0:1", "0:1,1:2", " 0:1 , 1:2 ")) {
            assertThatCode(() -> LogConfig.validateOverrides(Map.of(LogConfig.LEADER_THROTTLED_REPLICAS, valid))).doesNotThrowAnyException();
        }
        for (String invalid : List.of("0", "a:1", "0:1,*", "-1:1", "0:1:2")) {
            assertThatThrownBy(() -> LogConfig.validateOverrides(Map.of(LogConfig.FOLLOWER_THROTTLED_REPLICAS, invalid)))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("follower.replication.throttled.replicas must be the literal '*' or a list of replicas in the following"
                    + " format: [partitionId]:[brokerId],[partitionId]:[brokerId],...");
        }
    }
}
