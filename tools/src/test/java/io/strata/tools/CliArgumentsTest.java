package io.strata.tools;

import io.strata.protocol.records.CompressionType;
import io.strata.tools.client.HostPort;
import io.strata.tools.client.IsolationLevel;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Option parsing and usage errors of the client commands; nothing here reaches a broker. */
class CliArgumentsTest {
    @SuppressWarnings("unchecked")
    private static <T> T parse(String... args) {
        CommandLine.ParseResult result = StrataCli.commandLine(args.length > 0 ? args[0] : "").parseArgs(args);
        while (result.hasSubcommand()) {
            result = result.subcommand();
        }
        return (T) result.commandSpec().userObject();
    }

    @Test
    void produceDefaultsMatchKafkasProducer() {
        ProduceCommand produce = parse("produce", "orders");

        assertThat(produce.topic).isEqualTo("orders");
        assertThat(produce.producerOptions.acks).isEqualTo((short) -1);
        assertThat(produce.producerOptions.compression).isEqualTo(CompressionType.NONE);
        assertThat(produce.producerOptions.idempotence).isNull();
        assertThat(produce.producerOptions.batchSizeBytes).isEqualTo(16384);
        assertThat(produce.partition).isNull();
        assertThat(produce.keySeparator).isNull();
        assertThat(produce.connection.bootstrapServers).containsExactly(new HostPort("127.0.0.1", 9092));
    }

    @Test
    void produceOptionsAreParsed() {
        ProduceCommand produce = parse("produce", "orders", "--key-separator", "::", "--header", "a=1", "--header", "b=x=y",
            "--partition", "2", "--acks", "all", "--compression", "ZSTD", "--no-idempotence", "--batch-size", "1000",
            "--bootstrap-server", "h1:1,[::1]:2");

        assertThat(produce.keySeparator).isEqualTo("::");
        assertThat(produce.headers).containsExactly("a=1", "b=x=y");
        assertThat(produce.partition).isEqualTo(2);
        assertThat(produce.producerOptions.acks).isEqualTo((short) -1);
        assertThat(produce.producerOptions.compression).isEqualTo(CompressionType.ZSTD);
        assertThat(produce.producerOptions.idempotence).isFalse();
        assertThat(produce.producerOptions.batchSizeBytes).isEqualTo(1000);
        assertThat(produce.connection.bootstrapServers).containsExactly(new HostPort("h1", 1), new HostPort("::1", 2));
    }

    @Test
    void acksTakesEveryKafkaSpelling() {
        assertThat(((ProduceCommand) parse("produce", "t", "--acks", "-1")).producerOptions.acks).isEqualTo((short) -1);
        assertThat(((ProduceCommand) parse("produce", "t", "--acks=-1")).producerOptions.acks).isEqualTo((short) -1);
        assertThat(((ProduceCommand) parse("produce", "t", "--acks", "0")).producerOptions.acks).isEqualTo((short) 0);
        assertThat(((ProduceCommand) parse("produce", "t", "--acks", "1")).producerOptions.acks).isEqualTo((short) 1);
    }

    @Test
    void consumeOptionsAreParsed() {
        ConsumeCommand consume = parse("consume", "orders", "--partition", "1", "--offset", "42", "-n", "10", "--timeout-ms", "500",
            "--format", "key-value", "--isolation", "read_committed");

        assertThat(consume.partition).isEqualTo(1);
        assertThat(consume.offset).isEqualTo(42L);
        assertThat(consume.maxMessages).isEqualTo(10L);
        assertThat(consume.timeoutMs).isEqualTo(500L);
        assertThat(consume.format).isEqualTo(RecordFormat.KEY_VALUE);
        assertThat(consume.isolation).isEqualTo(IsolationLevel.READ_COMMITTED);
    }

    @Test
    void consumeDefaultsToValuesFromTheEndReadUncommitted() {
        ConsumeCommand consume = parse("consume", "orders");

        assertThat(consume.format).isEqualTo(RecordFormat.VALUE);
        assertThat(consume.isolation).isEqualTo(IsolationLevel.READ_UNCOMMITTED);
        assertThat(consume.fromBeginning).isFalse();
        assertThat(consume.offset).isNull();
        assertThat(consume.fromTimestamp).isNull();
        assertThat(consume.maxMessages).isNull();
        assertThat(consume.timeoutMs).isNull();
    }

    @Test
    void topicsSubcommandsAreParsed() {
        TopicsCreateCommand create = parse("topics", "create", "t", "--partitions", "6", "--replication-factor", "1", "--config", "a=b");
        assertThat(create.partitions).isEqualTo(6);
        assertThat(create.replicationFactor).isEqualTo((short) 1);
        assertThat(create.configs).containsExactly("a=b");

        TopicsAlterCommand alter = parse("topics", "alter", "t", "--partitions", "8", "--config", "x=1", "--delete-config", "y");
        assertThat(alter.partitions).isEqualTo(8);
        assertThat(alter.configs).containsExactly("x=1");
        assertThat(alter.deleteConfigs).containsExactly("y");

        TopicsDeleteCommand delete = parse("topics", "delete", "a", "b");
        assertThat(delete.names).containsExactly("a", "b");

        TopicsDescribeCommand describe = parse("topics", "describe");
        assertThat(describe.names).isEmpty();
    }

    /** Usage errors exit 2 with a message naming the problem, before any connection is attempted. */
    @Test
    void usageErrorsExitTwoWithAMessage() {
        assertUsageError("--offset needs --partition", "consume", "t", "--offset", "3");
        assertUsageError("choose one of --from-beginning, --offset and --from-timestamp", "consume", "t", "--from-beginning",
            "--from-timestamp", "5");
        assertUsageError("--max-messages must be positive", "consume", "t", "-n", "0");
        assertUsageError("expected one of [value, key-value, json], got 'xml'", "consume", "t", "--format", "xml");
        assertUsageError("expected read_committed or read_uncommitted", "consume", "t", "--isolation", "serializable");
        assertUsageError("expected -1 (or all), 0 or 1", "produce", "t", "--acks", "2");
        assertUsageError("expected none, gzip, snappy, lz4 or zstd", "produce", "t", "--compression", "brotli");
        assertUsageError("--idempotence needs --acks -1 (all)", "produce", "t", "--idempotence", "--acks", "1");
        assertUsageError("--header needs key=value, got: 'novalue'", "produce", "t", "--header", "novalue");
        assertUsageError("--batch-size must be 1..1048576", "produce", "t", "--batch-size", "0");
        assertUsageError("expected host:port, got 'localhost'", "topics", "list", "--bootstrap-server", "localhost");
        assertUsageError("--config needs key=value, got: 'retention.ms'", "topics", "create", "t", "--config", "retention.ms");
        assertUsageError("--partitions must be at least 1", "topics", "create", "t", "--partitions", "0");
        assertUsageError("nothing to alter", "topics", "alter", "t");
        assertUsageError("config a is both set and deleted", "topics", "alter", "t", "--config", "a=1", "--delete-config", "a");
        assertUsageError("Missing required parameter", "topics", "delete");
        assertUsageError("--request-timeout-ms: request timeout must exceed the fetch wait", "topics", "list", "--request-timeout-ms", "100");
    }

    private static void assertUsageError(String expectedMessage, String... args) {
        CliRunner.Result result = CliRunner.run(args);
        assertThat(result.exitCode()).as(String.join(" ", args) + "\n" + result).isEqualTo(2);
        assertThat(result.err()).as(String.join(" ", args)).contains(expectedMessage);
    }

    @Test
    void anUnreachableBrokerIsOneCleanLineAndExitCodeOne() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        for (List<String> command : List.of(List.of("topics", "list"), List.of("consume", "t"), List.of("produce", "t"))) {
            String[] args = new String[command.size() + 2];
            command.toArray(args);
            args[command.size()] = "--bootstrap-server";
            args[command.size() + 1] = "127.0.0.1:" + port;

            CliRunner.Result result = CliRunner.runWithInput("line\n", args);

            assertThat(result.exitCode()).as(result.toString()).isEqualTo(1);
            assertThat(result.err()).as(command.toString()).endsWith("strata: cannot connect to 127.0.0.1:" + port + ": Connection refused\n");
            assertThat(result.out()).isEmpty();
        }
    }

    @Test
    void helpListsTheClientCommands() {
        CliRunner.Result result = CliRunner.run("--help");

        assertThat(result.out()).contains("topics", "produce", "consume");
        assertThat(CliRunner.run("topics", "--help").out()).contains("create", "list", "describe", "alter", "delete");
    }

    @Test
    void resetOffsetsTakesExactlyOneScenario() {
        GroupsResetOffsetsCommand reset = parse("groups", "reset-offsets", "--group", "g", "--topic", "t:0,2", "--topic", "u", "--shift-by", "-3");

        assertThat(reset.groupId).isEqualTo("g");
        assertThat(reset.topicArguments).containsExactly("t:0,2", "u");
        assertThat(reset.scenario.shiftBy).isEqualTo(-3L);
        assertThat(reset.execute).isFalse();
        assertThat(((GroupsResetOffsetsCommand) parse("groups", "reset-offsets", "--group", "g", "--all-topics",
            "--to-datetime", "2024-05-01T12:00:00Z", "--execute")).scenario.toDateTimeMs).isEqualTo(1714564800000L);

        CliRunner.Result twoScenarios = CliRunner.run("groups", "reset-offsets", "--group", "g", "--topic", "t", "--to-earliest", "--to-latest");
        assertThat(twoScenarios.exitCode()).isEqualTo(2);
        assertThat(twoScenarios.err()).contains("mutually exclusive");
        CliRunner.Result badDate = CliRunner.run("groups", "reset-offsets", "--group", "g", "--topic", "t", "--to-datetime", "last tuesday");
        assertThat(badDate.exitCode()).isEqualTo(2);
        assertThat(badDate.err()).contains("'last tuesday'");
    }

    @Test
    void groupCommandsRefuseContradictoryOptionsBeforeConnecting() {
        // No broker listens on the default address in tests: a usage error must come first.
        CliRunner.Result views = CliRunner.run("groups", "describe", "g", "--members", "--state");
        assertThat(views.exitCode()).isEqualTo(2);
        assertThat(views.err()).contains("choose one of --members, --state and --offsets");

        CliRunner.Result noGroups = CliRunner.run("groups", "describe");
        assertThat(noGroups.exitCode()).isEqualTo(2);

        CliRunner.Result scope = CliRunner.run("groups", "reset-offsets", "--group", "g", "--to-earliest");
        assertThat(scope.exitCode()).isEqualTo(2);
        assertThat(scope.err()).contains("choose the partitions with --topic, or give --all-topics");

        CliRunner.Result both = CliRunner.run("groups", "reset-offsets", "--group", "g", "--topic", "t", "--to-earliest", "--execute", "--dry-run");
        assertThat(both.exitCode()).isEqualTo(2);
    }
}
