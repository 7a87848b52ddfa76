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
public final class ExternalTools {
    private ExternalTools() {
    }

    public static void require(String description, boolean available) {
        if (!available && "true".equals(System.getenv("CI"))) {
            throw new AssertionError(description + " is not installed, but CI must run these tests (.ci/run installs it)");
        }
        Assumptions.assumeTrue(available, description + " is not installed; skipping (CI installs it)");
    }

    public static boolean onPath(String command) {
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
    public static Path nodeModulesRoot() {
        String configured = System.getenv("STRATA_NODE_MODULES");
        Path root = configured != null ? Path.of(configured) : Path.of("src/test/js").toAbsolutePath();
        return root;
    }

    public static boolean kafkajsInstalled() {
        return onPath("node") && Files.isDirectory(nodeModulesRoot().resolve("node_modules/kafkajs"));
    }

    /**
     * A long-running tool whose stdout lines the test reads while it runs; its stdin stays open
     * until {@link #closeInput()}. Tests wait on conditions over the lines seen so far with
     * {@link #await}, which wakes up on every new line of any such process.
     */
    static final class LineProcess implements AutoCloseable {
        /** Notified on every line read from any LineProcess. */
        private static final Object NEW_LINE = new Object();

        private final List<String> command;
        private final Process process;
        private final Path err;
        private final List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();

        private LineProcess(List<String> command, Process process, Path err) {
            this.command = command;
            this.process = process;
            this.err = err;
        }

        static LineProcess start(List<String> command) throws IOException {
            Path err = Files.createTempFile("strata-tool", ".err");
            Process process = new ProcessBuilder(command).redirectError(err.toFile()).start();
            LineProcess started = new LineProcess(command, process, err);
            Thread reader = new Thread(started::readLines, "stdout of " + command.get(0));
            reader.setDaemon(true);
            reader.start();
            return started;
        }

        private void readLines() {
            try (java.io.BufferedReader reader = new java.io.BufferedReader(
                new java.io.InputStreamReader(process.getInputStream(), java.nio.charset.StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    lines.add(line);
                    synchronized (NEW_LINE) {
                        NEW_LINE.notifyAll();
                    }
                }
            } catch (IOException e) {
                // The process was destroyed: no more lines.
            }
            synchronized (NEW_LINE) {
                NEW_LINE.notifyAll();
            }
        }

        /** Every stdout line so far. */
        List<String> lines() {
            return List.copyOf(lines);
        }

        /** Waits until {@code condition} holds (checked after every new line), failing with {@code what} at the deadline. */
        static void await(String what, java.time.Duration timeout, java.util.function.BooleanSupplier condition) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            synchronized (NEW_LINE) {
                while (!condition.getAsBoolean()) {
                    long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                    if (remainingMs <= 0) {
                        throw new AssertionError("timed out after " + timeout + " waiting for " + what);
                    }
                    NEW_LINE.wait(Math.min(remainingMs, 1000)); // re-check at least once a second: a process may have died
                }
            }
        }

        void closeInput() throws IOException {
            process.getOutputStream().close();
        }

        /** Waits for a clean exit; fails with stderr on a non-zero exit or at the deadline. */
        void awaitExit(long timeoutSeconds) throws IOException, InterruptedException {
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                throw new AssertionError(command + " did not finish in " + timeoutSeconds + " s; stderr: " + Files.readString(err));
            }
            if (process.exitValue() != 0) {
                throw new AssertionError(command + " exited with " + process.exitValue() + "; stderr: " + Files.readString(err));
            }
        }

        boolean isAlive() {
            return process.isAlive();
        }

        String stderr() throws IOException {
            return Files.readString(err);
        }

        @Override
        public void close() throws IOException {
            if (process.isAlive()) {
                process.destroyForcibly();
            }
            Files.deleteIfExists(err);
        }
    }

    /** Runs a command to completion (bounded), feeding {@code stdin}; returns stdout, failing on a non-zero exit. */
    public static String run(List<String> command, String stdin, long timeoutSeconds) throws IOException, InterruptedException {
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
