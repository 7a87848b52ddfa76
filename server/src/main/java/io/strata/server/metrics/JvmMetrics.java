package io.strata.server.metrics;

import com.sun.management.GarbageCollectionNotificationInfo;
import com.sun.management.UnixOperatingSystemMXBean;

import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryUsage;
import java.lang.management.OperatingSystemMXBean;
import java.lang.management.RuntimeMXBean;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * JVM and process metrics under the names of the Prometheus Java client ({@code jvm_*},
 * {@code process_*}), so the usual JVM dashboards work unchanged: heap and non-heap memory,
 * memory pools, buffer pools (Netty's direct memory shows up as "direct"), GC time per
 * collector, a histogram of GC pauses (from the JVM's GC notifications), threads, classes,
 * CPU time, open file descriptors and resident memory.
 *
 * <p>Everything but the pause histogram is read from the management beans at scrape time.
 * {@link #close()} removes the GC notification listeners.
 */
public final class JvmMetrics implements MetricsCollector, AutoCloseable {
    /** GC pause bounds, in seconds. */
    private static final double[] PAUSE_BOUNDS_SECONDS = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
    private static final double NANOS_PER_SECOND = 1e9;

    private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final RuntimeMXBean runtime = ManagementFactory.getRuntimeMXBean();
    private final OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    /** Pause histograms per (collector, action), in nanoseconds. */
    private final Map<PauseKey, Histogram> pauses = new ConcurrentHashMap<>();
    private final List<Runnable> unsubscribe = new ArrayList<>();

    private record PauseKey(String gc, String action) implements Comparable<PauseKey> {
        @Override
        public int compareTo(PauseKey other) {
            int byGc = gc.compareTo(other.gc);
            return byGc != 0 ? byGc : action.compareTo(other.action);
        }
    }

    public JvmMetrics() {
        for (GarbageCollectorMXBean collector : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (collector instanceof NotificationEmitter emitter) {
                NotificationListener listener = this::onGcNotification;
                emitter.addNotificationListener(listener, null, null);
                unsubscribe.add(() -> {
                    try {
                        emitter.removeNotificationListener(listener);
                    } catch (ListenerNotFoundException ignored) {
                        // already gone
                    }
                });
            }
        }
    }

    private void onGcNotification(Notification notification, Object handback) {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(notification.getType())) {
            return;
        }
        GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from((CompositeData) notification.getUserData());
        long durationNanos = info.getGcInfo().getDuration() * 1_000_000L;
        pauses.computeIfAbsent(new PauseKey(info.getGcName(), info.getGcAction()), key -> pauseHistogram()).record(durationNanos);
    }

    private static Histogram pauseHistogram() {
        long[] bounds = new long[PAUSE_BOUNDS_SECONDS.length];
        for (int i = 0; i < bounds.length; i++) {
            bounds[i] = Math.round(PAUSE_BOUNDS_SECONDS[i] * NANOS_PER_SECOND);
        }
        return new Histogram(bounds);
    }

    @Override
    public void collect(List<MetricFamily> out) {
        collectMemory(out);
        collectGc(out);
        collectThreads(out);
        collectProcess(out);
    }

    private void collectMemory(List<MetricFamily> out) {
        MetricFamily used = MetricFamily.gauge("jvm_memory_used_bytes", "Used bytes of a JVM memory area.", "area");
        MetricFamily committed = MetricFamily.gauge("jvm_memory_committed_bytes", "Committed bytes of a JVM memory area.", "area");
        MetricFamily max = MetricFamily.gauge("jvm_memory_max_bytes", "Max bytes of a JVM memory area (-1 if undefined).", "area");
        addUsage(memory.getHeapMemoryUsage(), "heap", used, committed, max);
        addUsage(memory.getNonHeapMemoryUsage(), "nonheap", used, committed, max);
        MetricFamily poolUsed = MetricFamily.gauge("jvm_memory_pool_used_bytes", "Used bytes of a JVM memory pool.", "pool");
        MetricFamily poolCommitted = MetricFamily.gauge("jvm_memory_pool_committed_bytes", "Committed bytes of a JVM memory pool.", "pool");
        MetricFamily poolMax = MetricFamily.gauge("jvm_memory_pool_max_bytes", "Max bytes of a JVM memory pool (-1 if undefined).", "pool");
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            MemoryUsage usage = pool.getUsage();
            if (usage != null) {
                addUsage(usage, pool.getName(), poolUsed, poolCommitted, poolMax);
            }
        }
        MetricFamily bufferUsed = MetricFamily.gauge("jvm_buffer_pool_used_bytes", "Used bytes of a JVM buffer pool (direct, mapped).", "pool");
        MetricFamily bufferCapacity = MetricFamily.gauge("jvm_buffer_pool_capacity_bytes", "Capacity of a JVM buffer pool.", "pool");
        MetricFamily buffers = MetricFamily.gauge("jvm_buffer_pool_used_buffers", "Buffers in a JVM buffer pool.", "pool");
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            bufferUsed.add(pool.getMemoryUsed(), pool.getName());
            bufferCapacity.add(pool.getTotalCapacity(), pool.getName());
            buffers.add(pool.getCount(), pool.getName());
        }
        out.addAll(List.of(used, committed, max, poolUsed, poolCommitted, poolMax, bufferUsed, bufferCapacity, buffers));
    }

    private static void addUsage(MemoryUsage usage, String label, MetricFamily used, MetricFamily committed, MetricFamily max) {
        used.add(usage.getUsed(), label);
        committed.add(usage.getCommitted(), label);
        max.add(usage.getMax(), label);
    }

    private void collectGc(List<MetricFamily> out) {
        MetricFamily collections = MetricFamily.summary("jvm_gc_collection_seconds", "Time spent in a garbage collector.", "gc");
        for (GarbageCollectorMXBean collector : ManagementFactory.getGarbageCollectorMXBeans()) {
            collections.addSummary(Math.max(0, collector.getCollectionCount()), Math.max(0, collector.getCollectionTime()) / 1000.0,
                collector.getName());
        }
        MetricFamily pause = MetricFamily.histogram("jvm_gc_pause_seconds", "GC pauses, by collector and action.", "gc", "action");
        for (Map.Entry<PauseKey, Histogram> entry : new java.util.TreeMap<>(pauses).entrySet()) {
            pause.addHistogram(entry.getValue().snapshot(), NANOS_PER_SECOND, entry.getKey().gc(), entry.getKey().action());
        }
        out.addAll(List.of(collections, pause));
    }

    private void collectThreads(List<MetricFamily> out) {
        out.add(MetricFamily.gauge("jvm_threads_current", "Live JVM threads.").add(threads.getThreadCount()));
        out.add(MetricFamily.gauge("jvm_threads_daemon", "Live daemon threads.").add(threads.getDaemonThreadCount()));
        out.add(MetricFamily.gauge("jvm_threads_peak", "Peak live threads.").add(threads.getPeakThreadCount()));
        out.add(MetricFamily.counter("jvm_threads_started_total", "Threads started since the JVM started.")
            .add(threads.getTotalStartedThreadCount()));
        Map<Thread.State, Integer> byState = new EnumMap<>(Thread.State.class);
        for (Thread.State state : Thread.State.values()) {
            byState.put(state, 0);
        }
        for (java.lang.management.ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds(), 0)) {
            if (info != null) {
                byState.merge(info.getThreadState(), 1, Integer::sum);
            }
        }
        MetricFamily states = MetricFamily.gauge("jvm_threads_state", "Threads by state.", "state");
        byState.forEach((state, count) -> states.add(count, state.name()));
        out.add(states);
        out.add(MetricFamily.gauge("jvm_classes_currently_loaded", "Classes loaded now.")
            .add(ManagementFactory.getClassLoadingMXBean().getLoadedClassCount()));
        out.add(MetricFamily.gauge("jvm_info", "JVM version.", "version", "vendor", "runtime")
            .add(1, System.getProperty("java.runtime.version", ""), System.getProperty("java.vm.vendor", ""),
                System.getProperty("java.runtime.name", "")));
    }

    private void collectProcess(List<MetricFamily> out) {
        if (os instanceof com.sun.management.OperatingSystemMXBean sunOs) {
            out.add(MetricFamily.counter("process_cpu_seconds_total", "CPU time of the process (user and system), seconds.")
                .add(sunOs.getProcessCpuTime() / NANOS_PER_SECOND));
        }
        if (os instanceof UnixOperatingSystemMXBean unix) {
            out.add(MetricFamily.gauge("process_open_fds", "Open file descriptors.").add(unix.getOpenFileDescriptorCount()));
            out.add(MetricFamily.gauge("process_max_fds", "File descriptor limit.").add(unix.getMaxFileDescriptorCount()));
        }
        out.add(MetricFamily.gauge("process_start_time_seconds", "Start time of the process since the Unix epoch, seconds.")
            .add(runtime.getStartTime() / 1000.0));
        long[] memoryBytes = procStatusMemory();
        if (memoryBytes != null) {
            out.add(MetricFamily.gauge("process_resident_memory_bytes", "Resident memory (VmRSS).").add(memoryBytes[0]));
            out.add(MetricFamily.gauge("process_virtual_memory_bytes", "Virtual memory (VmSize).").add(memoryBytes[1]));
        }
    }

    /** VmRSS and VmSize in bytes from /proc/self/status, or null where there is no procfs. */
    private static long[] procStatusMemory() {
        Path status = Path.of("/proc/self/status");
        if (!Files.isReadable(status)) {
            return null;
        }
        long rss = -1;
        long size = -1;
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("VmRSS:")) {
                    rss = kilobytes(line) * 1024;
                } else if (line.startsWith("VmSize:")) {
                    size = kilobytes(line) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return null;
        }
        return rss < 0 || size < 0 ? null : new long[] {rss, size};
    }

    private static long kilobytes(String line) {
        String[] parts = line.trim().split("\\s+");
        return Long.parseLong(parts[1]);
    }

    @Override
    public void close() {
        unsubscribe.forEach(Runnable::run);
    }
}
