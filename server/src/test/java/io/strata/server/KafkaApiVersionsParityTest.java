package io.strata.server;

import io.strata.protocol.ApiVersionsTable;
import io.strata.protocol.message.ApiMessageType;
import io.strata.server.api.Features;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Strata advertises, for every API it implements, exactly the range an Apache Kafka 4.4 broker
 * advertises, and the same supported feature ranges for the features both know. The reference
 * is a recorded ApiVersions response of a real Kafka 4.4.0 broker
 * ({@code src/test/resources/kafka-4.4/api-versions.txt}), so a drift on either side (a new
 * Kafka version recorded, or a Strata range changed) fails here.
 */
class KafkaApiVersionsParityTest {
    private record Recorded(Map<Short, short[]> apis, Map<String, short[]> supportedFeatures) {
    }

    @Test
    void everyImplementedApiHasKafka44sRange() throws IOException {
        Recorded kafka = recorded();
        List<String> mismatches = new ArrayList<>();
        for (Map.Entry<ApiMessageType, ApiVersionsTable.Range> entry : StrataServer.apiVersions().ranges().entrySet()) {
            short[] expected = kafka.apis().get(entry.getKey().apiKey);
            ApiVersionsTable.Range actual = entry.getValue();
            if (expected == null) {
                mismatches.add(entry.getKey().apiName + " is not advertised by Kafka 4.4");
            } else if (expected[0] != actual.min() || expected[1] != actual.max()) {
                mismatches.add(entry.getKey().apiName + " strata " + actual.min() + "-" + actual.max() + " kafka " + expected[0] + "-" + expected[1]);
            }
        }
        assertThat(mismatches).isEmpty();
    }

    @Test
    void supportedFeatureRangesMatchKafka44() throws IOException {
        Recorded kafka = recorded();
        for (Map.Entry<String, short[]> feature : new Features().supported().entrySet()) {
            assertThat(kafka.supportedFeatures()).as(feature.getKey()).containsKey(feature.getKey());
            assertThat(feature.getValue()).as(feature.getKey()).containsExactly(kafka.supportedFeatures().get(feature.getKey()));
        }
    }

    private static Recorded recorded() throws IOException {
        Map<Short, short[]> apis = new LinkedHashMap<>();
        Map<String, short[]> features = new LinkedHashMap<>();
        try (InputStream in = KafkaApiVersionsParityTest.class.getResourceAsStream("/kafka-4.4/api-versions.txt")) {
            assertThat(in).as("recorded Kafka 4.4 ApiVersions").isNotNull();
            BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            String line;
            while ((line = reader.readLine()) != null) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] fields = line.trim().split("\\s+");
                if (fields[0].equals("supported")) {
                    features.put(fields[1], new short[] {Short.parseShort(fields[2]), Short.parseShort(fields[3])});
                } else if (!fields[0].equals("finalized")) {
                    apis.put(Short.parseShort(fields[1]), new short[] {Short.parseShort(fields[2]), Short.parseShort(fields[3])});
                }
            }
        }
        assertThat(apis).hasSizeGreaterThan(50);
        return new Recorded(apis, features);
    }
}
