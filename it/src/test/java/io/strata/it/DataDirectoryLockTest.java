package io.strata.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two server processes on one data directory: the second stops before it touches anything,
 * naming the directory and the process that holds it; the first's metadata log is byte for byte
 * what it was, and the first goes on serving.
 */
class DataDirectoryLockTest {
    @TempDir
    Path tempDir;

    private Process startServer(Path dataDir, Path output) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-Xmx256m", "-cp",
            System.getProperty("java.class.path"), ServerProcessMain.class.getName(), "listeners=PLAINTEXT://127.0.0.1:0",
            // No NoOp records: the running holder must leave its metadata log byte for byte as it was, so that any change is the refused process's.
            "log.dirs=" + dataDir, "num.network.threads=1", "metadata.max.idle.interval.ms=0");
        builder.redirectErrorStream(true);
        builder.redirectOutput(output.toFile());
        return builder.start();
    }

    private static int awaitPort(Process child, Path output) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline && child.isAlive()) {
            for (String line : Files.readAllLines(output, StandardCharsets.UTF_8)) {
                if (line.startsWith("PORT ")) {
                    return Integer.parseInt(line.substring(5).trim());
                }
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("the server did not report its port: " + Files.readString(output));
    }

    /** Every file of the metadata log directory → its bytes. */
    private static Map<String, byte[]> metadataLog(Path dataDir) throws IOException {
        Map<String, byte[]> files = new TreeMap<>();
        try (Stream<Path> list = Files.list(dataDir.resolve("__cluster_metadata-0"))) {
            for (Path file : list.toList()) {
                files.put(file.getFileName().toString(), Files.readAllBytes(file));
            }
        }
        return files;
    }

    private static void createTopic(int port, String name) throws Exception {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        try (Admin admin = Admin.create(properties)) {
            admin.createTopics(List.of(new NewTopic(name, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS)).contains(name);
        }
    }

    @Test
    void aSecondProcessOnTheSameDirectoryExitsNamingTheHolderAndLeavesTheMetadataLogAlone() throws Exception {
        Path dataDir = tempDir.resolve("data");
        Process first = startServer(dataDir, tempDir.resolve("first.out"));
        try {
            int port = awaitPort(first, tempDir.resolve("first.out"));
            createTopic(port, "before");
            Map<String, byte[]> before = metadataLog(dataDir);
            assertThat(Files.readString(dataDir.resolve(".lock"))).contains("pid=" + first.pid());

            Path secondOutput = tempDir.resolve("second.out");
            Process second = startServer(dataDir, secondOutput);
            assertThat(second.waitFor(60, TimeUnit.SECONDS)).as("the second process exits").isTrue();
            String output = Files.readString(secondOutput);
            assertThat(second.exitValue()).as(output).isNotZero();
            assertThat(output).contains("Start-up failed: Data directory " + dataDir + " is in use by another process: pid " + first.pid()
                + " on host ");
            assertThat(output).doesNotContain("PORT ");

            assertThat(metadataLog(dataDir)).as("the metadata log after the refused start").containsOnlyKeys(before.keySet())
                .allSatisfy((file, bytes) -> assertThat(bytes).as(file).isEqualTo(before.get(file)));
            assertThat(first.isAlive()).isTrue();
            createTopic(port, "after");
        } finally {
            first.getOutputStream().close();
            if (!first.waitFor(30, TimeUnit.SECONDS)) {
                first.destroyForcibly();
            }
        }
    }
}
