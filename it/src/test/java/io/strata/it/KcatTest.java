package io.strata.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * librdkafka through kcat: metadata, produce with keys, consume back every record (plain and
 * compressed), and a balanced consumer ({@code -G}, the classic group protocol) that reads
 * every record once and commits its offsets.
 */
class KcatTest {
    @TempDir
    Path dataDir;

    private StrataTestServer server;

    @BeforeEach
    void start() throws Exception {
        ExternalTools.require("kcat", ExternalTools.onPath("kcat"));
        server = new StrataTestServer(dataDir, java.util.Map.of("num.partitions", "3", "group.initial.rebalance.delay.ms", "0"));
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void metadataProduceAndConsumeRoundTrip() throws Exception {
        String metadata = ExternalTools.run(List.of("kcat", "-b", server.bootstrap(), "-L"), null, 60);
        assertThat(metadata).contains("1 brokers:").contains("broker 1 at " + server.bootstrap());

        for (String codec : List.of("none", "lz4", "zstd", "snappy", "gzip")) {
            String topic = "kcat-" + codec;
            StringBuilder input = new StringBuilder();
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 5000; i++) {
                input.append("key").append(i).append(':').append("value-").append(i).append('\n');
                expected.add("key" + i + "=value-" + i);
            }
            ExternalTools.run(List.of("kcat", "-b", server.bootstrap(), "-P", "-t", topic, "-K:", "-z", codec,
                "-X", "topic.metadata.refresh.interval.ms=1000"), input.toString(), 120);
            String consumed = ExternalTools.run(List.of("kcat", "-b", server.bootstrap(), "-C", "-t", topic, "-o", "beginning", "-e",
                "-f", "%k=%s\\n", "-X", "queued.min.messages=1000000"), null, 120);
            List<String> lines = consumed.lines().filter(line -> !line.isEmpty()).toList();
            assertThat(lines).as("records consumed with %s", codec).containsExactlyInAnyOrderElementsOf(expected);
            String metadataWithTopic = ExternalTools.run(List.of("kcat", "-b", server.bootstrap(), "-L", "-t", topic), null, 60);
            assertThat(metadataWithTopic).contains("topic \"" + topic + "\" with 3 partitions");
        }
    }

    @Test
    void balancedConsumerReadsEveryRecordOnceAndCommitsItsOffsets() throws Exception {
        int count = 3000;
        GroupClients.createAndProduce(server.bootstrap(), "kcat-group-topic", 3, count);

        // -G joins group kcat-group (JoinGroup, SyncGroup, Heartbeat, OffsetFetch, OffsetCommit, LeaveGroup);
        // -c stops after count records (-G does not support -e in every kcat version), and closing the consumer
        // commits the offsets of everything it delivered (enable.auto.commit).
        String consumed = ExternalTools.run(List.of("kcat", "-b", server.bootstrap(), "-G", "kcat-group", "kcat-group-topic",
            "-c", Integer.toString(count), "-f", "%p %o %s\\n", "-q",
            "-X", "auto.offset.reset=earliest", "-X", "enable.auto.commit=true"), null, 120);

        List<String> lines = consumed.lines().filter(line -> !line.isEmpty()).toList();
        List<String> values = lines.stream().map(line -> line.split(" ")[2]).toList();
        assertThat(values).as("every record exactly once").hasSize(count).doesNotHaveDuplicates();
        assertThat(values).allMatch(value -> value.startsWith("value-"));
        for (String line : lines) {
            String[] fields = line.split(" ");
            int i = Integer.parseInt(fields[2].substring("value-".length()));
            assertThat(Integer.parseInt(fields[0])).as("partition of %s", fields[2]).isEqualTo(i % 3);
            assertThat(Long.parseLong(fields[1])).as("offset of %s", fields[2]).isEqualTo(i / 3);
        }
        assertThat(GroupClients.committedOffsets(server.bootstrap(), "kcat-group"))
            .isEqualTo(GroupClients.endOffsets(server.bootstrap(), "kcat-group-topic", 3));
        assertThat(GroupClients.describe(server.bootstrap(), "kcat-group").groupState()).isEqualTo(org.apache.kafka.common.GroupState.EMPTY);
    }
}
