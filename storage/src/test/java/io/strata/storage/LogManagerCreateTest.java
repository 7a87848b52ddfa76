package io.strata.storage;

import io.strata.common.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class LogManagerCreateTest {
    @TempDir
    Path dataDir;
    @TempDir
    Path secondDir;

    private LogManager manager(List<Path> dirs) throws Exception {
        LogManager manager = new LogManager(new LogManager.Settings(dirs, 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L, false),
            Time.SYSTEM);
        manager.startup(topic -> LogConfig.defaults());
        return manager;
    }

    @Test
    void threadsCreatingTheSameAndDifferentLogsAtOnceGetOneLogPerPartition() throws Exception {
        int threads = 4;
        int partitions = 40;
        UUID topicId = UUID.randomUUID();
        LogManager manager = manager(List.of(dataDir, secondDir));
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CyclicBarrier start = new CyclicBarrier(threads);
            List<Future<List<UnifiedLog>>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                results.add(pool.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    List<UnifiedLog> logs = new ArrayList<>();
                    // Every thread asks for every partition: each is created once, the others wait for it.
                    for (int index = 0; index < partitions; index++) {
                        logs.add(manager.getOrCreateLog(new TopicPartition("t", index), Optional.of(topicId), LogConfig.defaults()));
                    }
                    return logs;
                }));
            }
            List<UnifiedLog> first = results.get(0).get(30, TimeUnit.SECONDS);
            for (Future<List<UnifiedLog>> result : results) {
                List<UnifiedLog> logs = result.get(30, TimeUnit.SECONDS);
                for (int index = 0; index < partitions; index++) {
                    assertThat(logs.get(index)).as("partition %d", index).isSameAs(first.get(index));
                }
            }
            assertThat(manager.allLogs()).hasSize(partitions);
            Set<Path> parents = ConcurrentHashMap.newKeySet();
            int inFirst = 0;
            for (UnifiedLog log : manager.allLogs()) {
                assertThat(log.topicId()).contains(topicId);
                parents.add(log.dir().getParent());
                if (log.dir().getParent().equals(dataDir)) {
                    inFirst++;
                }
            }
            assertThat(parents).containsExactlyInAnyOrder(dataDir, secondDir);
            // The least loaded directory counts the logs still being created, so both get about half.
            assertThat(inFirst).isBetween(partitions / 2 - threads, partitions / 2 + threads);
        } finally {
            pool.shutdownNow();
            manager.close();
        }
    }
}
