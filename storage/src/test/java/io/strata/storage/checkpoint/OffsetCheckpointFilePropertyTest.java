package io.strata.storage.checkpoint;

import io.strata.storage.ScratchDirectory;
import io.strata.storage.TopicPartition;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class OffsetCheckpointFilePropertyTest {

    @Property(tries = 200)
    void anyMapOfLegalTopicsRoundTrips(@ForAll("offsets") Map<TopicPartition, Long> offsets) throws IOException {
        try (ScratchDirectory scratch = new ScratchDirectory()) {
            OffsetCheckpointFile checkpoint = new OffsetCheckpointFile(scratch.resolve("replication-offset-checkpoint"));
            checkpoint.write(offsets);
            assertThat(checkpoint.read()).isEqualTo(offsets);
            assertThat(Files.readString(checkpoint.file(), StandardCharsets.UTF_8)).startsWith("0\n" + offsets.size() + "\n");
        }
    }

    @Provide
    Arbitrary<Map<TopicPartition, Long>> offsets() {
        Arbitrary<TopicPartition> partitions = Arbitraries.strings().withChars("abcXYZ019._-").ofMinLength(1).ofMaxLength(30)
            .flatMap(topic -> Arbitraries.integers().between(0, Integer.MAX_VALUE).map(p -> new TopicPartition(topic, p)));
        return Arbitraries.maps(partitions, Arbitraries.longs()).ofMaxSize(50);
    }
}
