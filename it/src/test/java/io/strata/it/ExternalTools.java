package io.strata.it;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Third-party clients the integration tests drive as child processes. Locally a missing tool
 * skips its tests; in CI ({@code CI=true}, where {@code .ci/run} installs them) a missing tool
 * fails them, so CI can never pass without running them.
 */
final class ExternalTools {
    private ExternalTools() {
    }

    static void require(String description, boolean available) {
        if (!available && "true".equals(System.getenv("CI"))) {
            throw new AssertionError(description + " is not installed, but CI must run these tests (.ci/run installs it)");
        }
        Assumptions.assumeTrue(available, description + " is not installed; skipping (CI installs it)");
    }

    static boolean onPath(String command) {
        try {
            Process process = new ProcessBuilder("sh", "-c", "command -v " + command).redirectErrorStream(true).start();
            return process.waitFor(10, TimeUnit.SECONDS) && process.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The directory holding the npm-installed node_modules for the JavaScript clients. */
    static Path nodeModulesRoot() {
        String configured = System.getenv("STRATA_NODE_MODULES");
        Path root = configured != null ? Path.of(configured) : Path.of("src/test/js").toAbsolutePath();
        return root;
    }

    static boolean kafkajsInstalled() {
        return onPath("node") && Files.isDirectory(nodeModulesRoot().resolve("node_modules/kafkajs"));
    }

    /** Runs a command to completion (bounded), feeding {@code stdin}; returns stdout, failing on a non-zero exit. */
    static String run(List<String> command, String stdin, long timeoutSeconds) throws IOException, InterruptedException {
        Path out = Files.createTempFile("strata-tool", ".out");
        Path err = Files.createTempFile("strata-tool", ".err");
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
            Process process = builder.start();
            if (stdin != null) {
                process.getOutputStream().write(stdin.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
            process.getOutputStream().close();
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(command + " did not finish in " + timeoutSeconds + " s; stderr: " + Files.readString(err));
            }
            if (process.exitValue() != 0) {
                throw new AssertionError(command + " exited with " + process.exitValue() + "; stderr: " + Files.readString(err));
            }
            return Files.readString(out);
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }
}
