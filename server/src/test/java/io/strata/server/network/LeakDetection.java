package io.strata.server.network;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;

import java.lang.reflect.Field;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Netty's leak detector on paranoid (every buffer tracked, every access recorded) with its
 * reports collected, so tests can assert on them. The buffer detector is a static created when
 * Netty's buffers are first used, possibly by an earlier test in this JVM, so the listener is
 * attached to that instance rather than through a system property read at class load.
 *
 * <p>The detector finds a leak only after the garbage collector has collected the unreleased
 * buffer; {@link #assertNoLeaks()} collects and polls a few times, which catches leaks of
 * buffers no longer referenced. Tests that keep buffers reachable check their reference counts
 * as well.
 */
final class LeakDetection {
    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();
    private static ResourceLeakDetector.Level previousLevel;
    private static ResourceLeakDetector<?> detector;

    private LeakDetection() {
    }

    static synchronized void enableParanoid() {
        if (detector == null) {
            detector = byteBufDetector();
            detector.setLeakListener((resourceType, records) -> LEAKS.add(resourceType + ": " + records));
        }
        previousLevel = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        LEAKS.clear();
    }

    static synchronized void restoreLevel() {
        if (previousLevel != null) {
            ResourceLeakDetector.setLevel(previousLevel);
        }
    }

    private static ResourceLeakDetector<?> byteBufDetector() {
        try {
            Field field = Class.forName("io.netty.buffer.AbstractByteBuf").getDeclaredField("leakDetector");
            field.setAccessible(true);
            return (ResourceLeakDetector<?>) field.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot reach Netty's buffer leak detector", e);
        }
    }

    /** Collects garbage and lets the detector look at what was collected; true once a leak is reported. */
    static boolean pollForLeaks() {
        System.gc();
        // Each tracked allocation makes the detector drain its queue of collected buffers.
        for (int i = 0; i < 64; i++) {
            ByteBuf probe = UnpooledByteBufAllocator.DEFAULT.directBuffer(1);
            probe.release();
        }
        return !LEAKS.isEmpty();
    }

    static void assertNoLeaks() {
        for (int round = 0; round < 3; round++) {
            if (pollForLeaks()) {
                throw new AssertionError("Netty reported leaked buffers:\n" + String.join("\n", LEAKS));
            }
        }
    }

    static List<String> leaks() {
        return List.copyOf(LEAKS);
    }

    static void clear() {
        LEAKS.clear();
    }
}
