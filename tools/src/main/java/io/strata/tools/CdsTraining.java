package io.strata.tools;

import io.strata.common.Time;
import io.strata.server.StrataServer;
import io.strata.server.config.ServerConfig;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;

/**
 * The training run for the class-data-sharing archive {@code bin/strata} keeps next to the jar:
 * run once under {@code -XX:ArchiveClassesAtExit=FILE}, it goes through what a start and the
 * first requests load (the CLI model of {@code strata server}, a node formatting and starting in
 * a temporary directory, a topic created, a few records produced and consumed with the CLI, a
 * clean shutdown), and the JVM writes those classes, already parsed and verified, into FILE. Later
 * starts map the file instead of loading the classes from the jar, which roughly halves the time
 * to a ready broker.
 *
 * <p>Nothing here is kept: the node listens on ephemeral ports on 127.0.0.1 and its directory is
 * deleted at the end. Exit code 0 when every step worked; the archive is useful either way.
 */
public final class CdsTraining {
    private CdsTraining() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("io.netty.jfr.enabled", "false");
        Path dir = Files.createTempDirectory("strata-cds-training");
        PrintStream out = System.out;
        InputStream in = System.in;
        int failures = 0;
        try {
            StrataCli.commandLine("server").parseArgs("server", "--override", "num.partitions=1");
            ServerConfig config = ServerConfig.load(null, Map.of(
                ServerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
                ServerConfig.LOG_DIRS, dir.resolve("data").toString(),
                ServerConfig.METRICS_LISTENER, "http://127.0.0.1:0"));
            StrataServer server = new StrataServer(config, Time.SYSTEM);
            try {
                server.startup();
                String bootstrap = "127.0.0.1:" + server.boundPort();
                System.setOut(new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8));
                failures += StrataCli.run("topics", "create", "cds-training", "--partitions", "1", "--bootstrap-server", bootstrap);
                System.setIn(new ByteArrayInputStream("k1:one\nk2:two\n".getBytes(StandardCharsets.UTF_8)));
                failures += StrataCli.run("produce", "cds-training", "--key-separator", ":", "--bootstrap-server", bootstrap);
                failures += StrataCli.run("consume", "cds-training", "--from-beginning", "-n", "2", "--bootstrap-server", bootstrap);
                failures += StrataCli.run("topics", "list", "--bootstrap-server", bootstrap);
            } finally {
                System.setOut(out);
                System.setIn(in);
                server.close();
            }
        } finally {
            deleteRecursively(dir);
        }
        System.exit(failures == 0 ? 0 : 1);
    }

    private static void deleteRecursively(Path root) throws IOException {
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path directory, IOException e) throws IOException {
                Files.delete(directory);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
