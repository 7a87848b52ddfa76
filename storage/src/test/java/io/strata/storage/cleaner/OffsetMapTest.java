package io.strata.storage.cleaner;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OffsetMapTest {
    private static ByteBuffer key(String key) {
        return ByteBuffer.wrap(key.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void slotsAreTheLargestPrimeThatFitsTheMemory() {
        assertThat(new OffsetMap(1 << 20).slots()).isEqualTo(43_669);
        assertThat(new OffsetMap(OffsetMap.MIN_MEMORY_BYTES).slots()).isEqualTo(2);
        assertThat(OffsetMap.largestPrimeAtMost(100)).isEqualTo(97);
        assertThat(OffsetMap.largestPrimeAtMost(97)).isEqualTo(97);
        assertThatThrownBy(() -> new OffsetMap(OffsetMap.MIN_MEMORY_BYTES - 1)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("memoryBytes=47");
    }

    @Test
    void aLaterOffsetReplacesTheEarlierOneOfTheSameKey() {
        OffsetMap map = new OffsetMap(4096);
        map.put(key("a"), 3);
        map.put(key("b"), 4);
        map.put(key("a"), 7);
        assertThat(map.get(key("a"))).isEqualTo(7);
        assertThat(map.get(key("b"))).isEqualTo(4);
        assertThat(map.get(key("c"))).isEqualTo(-1);
        assertThat(map.size()).isEqualTo(2);
        assertThat(map.latestOffset()).isEqualTo(7);
        // Offset 0 is a real offset, not an empty slot.
        map.put(key("zero"), 0);
        assertThat(map.get(key("zero"))).isZero();
    }

    @Test
    void clearForgetsEverything() {
        OffsetMap map = new OffsetMap(4096);
        map.put(key("a"), 3);
        map.updateLatestOffset(10);
        map.clear();
        assertThat(map.get(key("a"))).isEqualTo(-1);
        assertThat(map.size()).isZero();
        assertThat(map.latestOffset()).isEqualTo(-1);
    }

    @Test
    void aFullMapRefusesNewKeysButStillUpdatesKnownOnes() {
        OffsetMap map = new OffsetMap(OffsetMap.MIN_MEMORY_BYTES);
        map.put(key("a"), 1);
        map.put(key("b"), 2);
        assertThat(map.utilization()).isEqualTo(1.0);
        map.put(key("a"), 5);
        assertThat(map.get(key("a"))).isEqualTo(5);
        assertThat(map.get(key("never"))).isEqualTo(-1);
        assertThatThrownBy(() -> map.put(key("c"), 6)).isInstanceOf(IllegalStateException.class).hasMessageContaining("slots=2");
    }

    @Test
    void agreesWithAHashMapUpToTheLoadFactor() {
        Random random = new Random(42);
        OffsetMap map = new OffsetMap(24 * 1000);
        Map<String, Long> model = new HashMap<>();
        int maxKeys = (int) (map.slots() * 0.9);
        for (long offset = 0; offset < 20_000; offset++) {
            String k = "key-" + random.nextInt(maxKeys);
            map.put(key(k), offset);
            model.put(k, offset);
        }
        assertThat(map.size()).isEqualTo(model.size());
        for (Map.Entry<String, Long> entry : model.entrySet()) {
            assertThat(map.get(key(entry.getKey()))).as(entry.getKey()).isEqualTo(entry.getValue());
        }
        for (int i = 0; i < 1000; i++) {
            assertThat(map.get(key("absent-" + i))).isEqualTo(-1);
        }
    }
}
