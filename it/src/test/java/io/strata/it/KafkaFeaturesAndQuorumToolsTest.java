package io.strata.it;

import io.strata.server.metrics.PrometheusText;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.internals.Exit;
import org.apache.kafka.tools.FeatureCommand;
import org.apache.kafka.tools.MetadataQuorumCommand;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Finalized features and the metadata quorum through Kafka's own tools and Admin client:
 * a cluster formatted at transaction.version=1 ({@code strata.format.features}, Strata's
 * {@code kafka-storage format --feature}) is upgraded by kafka-features and by
 * Admin.updateFeatures, the level survives a restart, and a client that connects afterwards
 * uses transactions v2 (EndTxn v5); kafka-metadata-quorum describes the single voter. The
 * expected texts are what the same commands printed against Apache Kafka 4.4.0.
 */
class KafkaFeaturesAndQuorumToolsTest {
    private static final long TIMEOUT_MS = 30_000;

    @TempDir
    Path dataDir;

    private StrataTestServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private void startAtTransactionVersion1() throws Exception {
        server = new StrataTestServer(dataDir, Map.of("strata.format.features", "transaction.version=1",
            "transaction.state.log.num.partitions", "1", "offsets.topic.num.partitions", "1"));
    }

    private Admin admin() {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        return Admin.create(properties);
    }

    @Test
    void kafkaFeaturesUpgradesTransactionVersionAndNewClientsUseTransactionsV2() throws Exception {
        startAtTransactionVersion1();
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic("tx", 1, (short) 1))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        List<String> described = features("describe").lines();
        assertThat(described).anySatisfy(line -> assertThat(line).matches(
            "Feature: transaction\\.version\\s+SupportedMinVersion: 0\\s+SupportedMaxVersion: 2\\s+FinalizedVersionLevel: 1\\s+Epoch: \\d+\\s*"));
        assertThat(described).anySatisfy(line -> assertThat(line).matches("Feature: metadata\\.version\\s+SupportedMinVersion: 3\\.3-IV3\\s+"
            + "SupportedMaxVersion: 4\\.4-IV2\\s+FinalizedVersionLevel: 4\\.4-IV2\\s+Epoch: \\d+\\s*"));
        commitOneTransaction("before");
        assertThat(endTxnRequests(4)).as("EndTxn v4 at transaction.version 1").isPositive();
        assertThat(endTxnRequests(5)).isZero();

        assertThat(features("upgrade", "--feature", "transaction.version=2", "--dry-run").lines())
            .containsExactly("transaction.version can be upgraded to 2.");
        ToolRun tooHigh = features("upgrade", "--feature", "transaction.version=3");
        assertThat(tooHigh.exitCode()).isEqualTo(1);
        assertThat(tooHigh.lines()).containsExactly("Could not upgrade transaction.version to 3. The update failed for all features since "
                + "the following feature had an error: Invalid update version 3 for feature transaction.version. Local controller 1 only "
                + "supports versions 0-2"); // and "1 out of 1 operation(s) failed." on stderr
        ToolRun upgraded = features("upgrade", "--feature", "transaction.version=2");
        assertThat(upgraded.exitCode()).isZero();
        assertThat(upgraded.lines()).containsExactly("transaction.version was upgraded to 2.");

        // A new producer connects, reads the new finalized level and advertised versions, and uses transactions v2.
        commitOneTransaction("after");
        assertThat(endTxnRequests(5)).as("EndTxn v5 after the upgrade").isPositive();

        server.restart();
        assertThat(features("describe").lines()).anySatisfy(line -> assertThat(line).matches(
            "Feature: transaction\\.version\\s+SupportedMinVersion: 0\\s+SupportedMaxVersion: 2\\s+FinalizedVersionLevel: 2\\s+Epoch: \\d+\\s*"));
        commitOneTransaction("after-restart");
        assertThat(endTxnRequests(5)).as("EndTxn v5 after a restart").isPositive();
        assertThat(endTxnRequests(4)).isZero();
    }

    @Test
    void adminUpdateFeaturesValidatesWritesAndRefusesAsKafka() throws Exception {
        startAtTransactionVersion1();
        try (Admin admin = admin()) {
            FeatureMetadata before = admin.describeFeatures().featureMetadata().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            assertThat(before.finalizedFeatures().get("transaction.version").maxVersionLevel()).isEqualTo((short) 1);

            admin.updateFeatures(Map.of("transaction.version", new FeatureUpdate((short) 2, FeatureUpdate.UpgradeType.UPGRADE)),
                new UpdateFeaturesOptions().validateOnly(true)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            assertThat(finalizedTransactionVersion(admin)).as("validateOnly writes nothing").isEqualTo((short) 1);

            assertRefused(admin, "transaction.version", (short) 2, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE,
                "Invalid update version 2 for feature transaction.version. Can't downgrade to a newer version.");
            assertRefused(admin, "foo.version", (short) 1, FeatureUpdate.UpgradeType.UPGRADE,
                "Invalid update version 1 for feature foo.version. Local controller 1 does not support this feature.");
            assertRefused(admin, "metadata.version", (short) 30, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE, "Invalid update version 30 for "
                + "feature metadata.version. Unsupported metadata.version downgrade from 33 to 30. Refusing to perform the requested downgrade "
                + "because it might delete metadata information.");

            admin.updateFeatures(Map.of("transaction.version", new FeatureUpdate((short) 2, FeatureUpdate.UpgradeType.UPGRADE)),
                new UpdateFeaturesOptions()).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            FeatureMetadata after = admin.describeFeatures().featureMetadata().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            assertThat(after.finalizedFeatures().get("transaction.version").maxVersionLevel()).isEqualTo((short) 2);
            assertThat(after.finalizedFeaturesEpoch().orElseThrow()).isGreaterThan(before.finalizedFeaturesEpoch().orElseThrow());

            assertRefused(admin, "transaction.version", (short) 1, FeatureUpdate.UpgradeType.UPGRADE, "Invalid update version 1 for feature "
                + "transaction.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.");

            admin.updateFeatures(Map.of("transaction.version", new FeatureUpdate((short) 1, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE)),
                new UpdateFeaturesOptions()).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            assertThat(finalizedTransactionVersion(admin)).isEqualTo((short) 1);
        }
        assertThat(features("disable", "--feature", "transaction.version").lines()).containsExactly("transaction.version was disabled.");
        try (Admin admin = admin()) {
            assertThat(admin.describeFeatures().featureMetadata().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).finalizedFeatures())
                .doesNotContainKey("transaction.version");
        }
    }

    @Test
    void kafkaMetadataQuorumDescribesTheSingleVoter() throws Exception {
        startAtTransactionVersion1();
        QuorumInfo quorum;
        try (Admin admin = admin()) {
            quorum = admin.describeMetadataQuorum().quorumInfo().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        int nodeId = server.server().nodeId();
        assertThat(quorum.leaderId()).isEqualTo(nodeId);
        assertThat(quorum.leaderEpoch()).isEqualTo(1);
        assertThat(quorum.observers()).isEmpty();
        QuorumInfo.ReplicaState voter = quorum.voters().get(0);
        assertThat(quorum.voters()).hasSize(1);
        assertThat(voter.replicaId()).isEqualTo(nodeId);
        assertThat(voter.logEndOffset()).isEqualTo(quorum.highWatermark()).isPositive();
        assertThat(voter.lastFetchTimestamp()).isPresent();
        assertThat(voter.lastCaughtUpTimestamp()).isPresent();
        assertThat(voter.replicaDirectoryId().toString()).isNotEqualTo("AAAAAAAAAAAAAAAAAAAAAA");
        assertThat(quorum.nodes().get(nodeId).endpoints()).anySatisfy(endpoint -> assertThat(endpoint.port()).isEqualTo(server.port()));

        ToolRun status = quorumTool("describe", "--status");
        assertThat(status.exitCode()).isZero();
        String directoryId = voter.replicaDirectoryId().toString();
        assertThat(status.lines()).containsExactly(
            "ClusterId:              " + server.server().clusterId(),
            "LeaderId:               " + nodeId,
            "LeaderEpoch:            1",
            status.lines().get(3), // the high watermark moves with every metadata write
            "MaxFollowerLag:         0",
            "MaxFollowerLagTimeMs:   0",
            "CurrentVoters:          [{\"id\": " + nodeId + ", \"directoryId\": \"" + directoryId + "\", \"endpoints\": [\"PLAINTEXT://"
                + "127.0.0.1:" + server.port() + "\"]}]",
            "CurrentObservers:       []");
        assertThat(status.lines().get(3)).matches("HighWatermark:          \\d+");

        ToolRun replication = quorumTool("describe", "--replication");
        assertThat(replication.exitCode()).isZero();
        assertThat(replication.lines()).hasSize(2);
        assertThat(replication.lines().get(0).split("\\s+")).containsExactly("NodeId", "DirectoryId", "LogEndOffset", "Lag",
            "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status");
        String[] row = replication.lines().get(1).trim().split("\\s+");
        assertThat(row[0]).isEqualTo(Integer.toString(nodeId));
        assertThat(row[1]).isEqualTo(directoryId);
        assertThat(Long.parseLong(row[2])).isPositive();
        assertThat(row[3]).isEqualTo("0");
        assertThat(row[6]).isEqualTo("Leader");
    }

    private static void assertRefused(Admin admin, String feature, short level, FeatureUpdate.UpgradeType type, String reason) {
        assertThatThrownBy(() -> admin.updateFeatures(Map.of(feature, new FeatureUpdate(level, type)), new UpdateFeaturesOptions())
            .all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS))
            .isInstanceOf(ExecutionException.class).cause().isInstanceOf(InvalidUpdateVersionException.class)
            .hasMessage("The update failed for all features since the following feature had an error: " + reason);
    }

    private static short finalizedTransactionVersion(Admin admin) throws Exception {
        return admin.describeFeatures().featureMetadata().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).finalizedFeatures()
            .get("transaction.version").maxVersionLevel();
    }

    private void commitOneTransaction(String value) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        properties.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "features-tx");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>("tx", value, value));
            producer.commitTransaction();
        }
    }

    private double endTxnRequests(int version) throws Exception {
        PrometheusText scrape = MetricsScrape.parsed(server.server().metricsPort());
        return scrape.sum("kafka_network_requestmetrics_requests_total", "request", "EndTxn", "version", Integer.toString(version));
    }

    private ToolRun features(String... command) {
        return run(FeatureCommand::main, prepend("--bootstrap-server", server.bootstrap(), command));
    }

    private ToolRun quorumTool(String... command) {
        return run(MetadataQuorumCommand::main, prepend("--bootstrap-server", server.bootstrap(), command));
    }

    private static String[] prepend(String option, String value, String[] rest) {
        String[] args = new String[rest.length + 2];
        args[0] = option;
        args[1] = value;
        System.arraycopy(rest, 0, args, 2, rest.length);
        return args;
    }

    /** What a tool printed on stdout (log lines of this module's logback pattern left out) and its exit status. */
    private record ToolRun(int exitCode, String stdout) {
        private static final java.util.regex.Pattern LOG_LINE = java.util.regex.Pattern.compile("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} ");

        List<String> lines() {
            return stdout.lines().filter(line -> !line.isBlank() && !LOG_LINE.matcher(line).lookingAt()).toList();
        }
    }

    @FunctionalInterface
    private interface ToolMain {
        void main(String[] args) throws Exception;
    }

    /**
     * Runs a Kafka tool's {@code main} in this JVM as its script would, with stdout captured.
     * The tools end through {@link Exit#exit}; while one runs, exiting throws instead, and the
     * status is the tool's exit code. System.out is process-wide, so runs are serialised.
     */
    private static synchronized ToolRun run(ToolMain main, String... args) {
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        int[] status = {0};
        boolean[] exited = {false};
        Exit.Procedure exit = (code, message) -> {
            if (!exited[0]) {
                exited[0] = true;
                status[0] = code;
            }
            throw new ToolExited();
        };
        Exit.setExitProcedure(exit);
        Exit.setHaltProcedure(exit);
        try {
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            main.main(args);
        } catch (ToolExited e) {
            // the status was recorded
        } catch (Exception e) {
            throw new AssertionError("tool failed: " + String.join(" ", args) + "\n" + captured.toString(StandardCharsets.UTF_8), e);
        } finally {
            System.out.flush();
            System.setOut(out);
            Exit.resetExitProcedure();
            Exit.resetHaltProcedure();
        }
        return new ToolRun(status[0], captured.toString(StandardCharsets.UTF_8));
    }

    private static final class ToolExited extends RuntimeException {
        ToolExited() {
            super("exit", null, false, false);
        }
    }
}
