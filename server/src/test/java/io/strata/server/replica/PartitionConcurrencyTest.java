package io.strata.server.replica;

import io.strata.metadata.PartitionRegistration;
import io.strata.storage.LogConfig;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Appends, two followers' fetches and the shrink check racing on one leader. Forbidden outcomes:
 * the high watermark going back, passing a follower's recorded end offset while both are in the
 * ISR, or not reaching the log end once both followers fetched it.
 */
class PartitionConcurrencyTest {
    private static final int APPENDS = 2_000;

    @TempDir
    Path dataDir;

    @Test
    void theHighWatermarkIsMonotonicAndBoundedByTheIsrUnderConcurrentFetchesAndAppends() throws Exception {
        FakeReplicaContext context = new FakeReplicaContext(1);
        context.brokerEpochs.put(2, 10L);
        context.brokerEpochs.put(3, 20L);
        LogManager logManager = new LogManager(new LogManager.Settings(List.of(dataDir), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L,
            false), context.time);
        logManager.startup(topic -> LogConfig.defaults());
        try {
            TopicPartition tp = new TopicPartition("race", 0);
            UnifiedLog log = logManager.getOrCreateLog(tp, Optional.of(UUID.randomUUID()), LogConfig.of(Map.of(), Map.of()));
            Partition partition = new Partition(tp, log.topicId().orElseThrow(), log, context);
            partition.makeLeader(new PartitionRegistration(new int[] {1, 2, 3}, new int[] {1, 2, 3}, 1, 1, 1), context.time.milliseconds());
            AtomicBoolean appending = new AtomicBoolean(true);
            List<String> violations = java.util.Collections.synchronizedList(new ArrayList<>());

            CompletableFuture<Void> appender = CompletableFuture.runAsync(() -> {
                try {
                    for (int i = 0; i < APPENDS; i++) {
                        partition.appendRecordsToLeader(PartitionStateTest.records(1), UnifiedLog.AppendOrigin.CLIENT, (short) 1);
                    }
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                } finally {
                    appending.set(false);
                }
            });
            List<CompletableFuture<Void>> followers = new ArrayList<>();
            for (int replica : new int[] {2, 3}) {
                long epoch = replica * 10L;
                followers.add(CompletableFuture.runAsync(() -> {
                    while (appending.get()) {
                        long end = log.logEndOffset();
                        partition.updateFollowerFetchState(replica, end, 0, context.time.milliseconds(), end, epoch);
                        partition.maybeShrinkIsr(context.time.milliseconds());
                    }
                    long end = log.logEndOffset();
                    partition.updateFollowerFetchState(replica, end, 0, context.time.milliseconds(), end, epoch);
                }));
            }
            CompletableFuture<Void> checker = CompletableFuture.runAsync(() -> {
                long last = 0;
                while (appending.get()) {
                    long hw = log.highWatermark();
                    long bound = Math.max(partition.remoteReplica(2).logEndOffset(), 0);
                    if (hw < last) {
                        violations.add("high watermark went back from " + last + " to " + hw);
                    }
                    // Read after the high watermark: a follower's end only grows here, so the bound read later is an upper bound.
                    if (hw > Math.max(bound, partition.remoteReplica(2).logEndOffset())) {
                        violations.add("high watermark " + hw + " passed replica 2's end " + bound);
                    }
                    last = hw;
                }
            });
            appender.get(60, TimeUnit.SECONDS);
            for (CompletableFuture<Void> follower : followers) {
                follower.get(60, TimeUnit.SECONDS);
            }
            checker.get(60, TimeUnit.SECONDS);
            assertThat(violations).isEmpty();
            assertThat(context.submitted).as("nobody lagged on a clock that did not move").isEmpty();
            assertThat(log.logEndOffset()).isEqualTo(APPENDS);
            assertThat(log.highWatermark()).isEqualTo(APPENDS);
        } finally {
            logManager.close();
        }
    }
}
