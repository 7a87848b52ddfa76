package io.strata.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code bin/strata server} as a user runs it: the script from the repository with the built
 * jar, in a private copy (so the class-data-sharing archive it trains lands in a temp dir, not
 * the build tree). Checks the script's JVM options, the trained archive, the log format, that a
 * Kafka client works, and that SIGTERM shuts down cleanly.
 */
class StrataScriptTest {
    private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern LISTENING = Pattern.compile("Listening for PLAINTEXT on /127\\.0\\.0\\.1:(\\d+)");
    /** {@code 2026-11-29 20:11:05.123 INFO  [main] StrataServer: ...}: date, padded level, thread, simple logger name. */
    private static final Pattern LINE = Pattern.compile("\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3} (TRACE|DEBUG|INFO |WARN |ERROR) \\[[^]]+] \\w+: .*");

    @Test
    void serverStartsWithTheScriptsOptionsAndStopsCleanlyOnSigterm(@TempDir Path home) throws Exception {
        Path jar = REPO.resolve("tools/target/strata.jar");
        assertThat(jar).as("the reactor builds tools (and its jar) before this module").isRegularFile();
        Files.createDirectories(home.resolve("bin"));
        Files.createDirectories(home.resolve("tools/target"));
        Files.copy(REPO.resolve("bin/strata"), home.resolve("bin/strata"), StandardCopyOption.COPY_ATTRIBUTES);
        Files.copy(jar, home.resolve("tools/target/strata.jar"));

        ProcessBuilder builder = new ProcessBuilder(home.resolve("bin/strata").toString(), "server",
            "--override", "listeners=PLAINTEXT://127.0.0.1:0",
            "--override", "log.dirs=" + home.resolve("data"),
            "--override", "metrics.listener=http://127.0.0.1:0")
            .directory(home.toFile());
        builder.environment().put("STRATA_LOG_LEVEL", "INFO");
        builder.environment().remove("STRATA_JAVA_OPTS");
        builder.environment().remove("STRATA_HEAP_OPTS");
        builder.environment().remove("STRATA_CDS");
        Path err = home.resolve("stderr.log");
        Path out = home.resolve("stdout.log");
        builder.redirectError(err.toFile()).redirectOutput(out.toFile());
        Process process = builder.start();
        try {
            int port = awaitPort(err);

            // The JVM bin/strata exec'ed: the script's server options and the archive it trained.
            List<String> commandLine = List.of(Files.readString(Path.of("/proc/" + process.pid() + "/cmdline")).split("\0"));
            assertThat(commandLine).contains("-Xms64m", "-Xmx1g", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20");
            String archiveOption = commandLine.stream().filter(o -> o.startsWith("-XX:SharedArchiveFile=")).findFirst().orElseThrow();
            Path archive = Path.of(archiveOption.substring("-XX:SharedArchiveFile=".length()));
            assertThat(archive.getParent()).isEqualTo(home.resolve("tools/target"));
            assertThat(Files.size(archive)).as("trained archive").isGreaterThan(1_000_000);
            try (Stream<Path> leftovers = Files.list(home.resolve("tools/target"))) {
                assertThat(leftovers.filter(p -> p.toString().endsWith(".tmp"))).as("no half-written archive").isEmpty();
            }

            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port))) {
                admin.createTopics(List.of(new NewTopic("script-test", 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
                assertThat(admin.describeTopics(List.of("script-test")).allTopicNames().get(30, TimeUnit.SECONDS)
                    .get("script-test").partitions()).hasSize(3);
            }
            assertThat(Files.readAllLines(out)).anySatisfy(line -> assertThat(line).startsWith("Strata is ready on"));
        } finally {
            process.destroy(); // SIGTERM
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("exits after SIGTERM").isTrue();
        }
        int exitCode = process.exitValue();
        assertThat(exitCode).as("SIGTERM ends the JVM through its shutdown hooks (128 + 15)").isEqualTo(143);
        List<String> errLines = Files.readAllLines(err);
        assertThat(errLines).anyMatch(line -> line.contains("StrataServer: Shut down in"));
        assertThat(errLines).as("every line in the one-line format: " + errLines).allMatch(line -> LINE.matcher(line).matches());
        assertThat(errLines).anyMatch(line -> line.contains(" INFO  [main] StrataServer: Strata node 1 of cluster "));
        assertThat(home.resolve("data/.kafka_cleanshutdown")).exists();
    }

    /** Waits up to 120 s (the first run trains the archive) for the listener's line in the log. */
    private static int awaitPort(Path log) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline) {
            Matcher matcher = LISTENING.matcher(Files.readString(log));
            if (matcher.find()) {
                return Integer.parseInt(matcher.group(1));
            }
            Thread.sleep(20);
        }
        throw new AssertionError("not listening after 120 s; the log: " + Files.readString(log));
    }
}
