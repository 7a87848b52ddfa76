package io.strata.storage;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A child JVM started by a test with the test's own java binary and class path, for code
 * that must run in its own process: a writer the test kills, or a tool that calls
 * {@code System.exit}. Stdout lines go to a consumer on a reader thread; stderr goes to a file
 * so that a chatty child can never block on a full pipe.
 *
 * <p>Only the process started here is ever killed, by its own handle.
 */
final class ChildJvm implements AutoCloseable {
    /** Flags that start a short-lived JVM quickly on a small machine. */
    private static final List<String> JVM_FLAGS = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m",
        "-XX:-UsePerfData");

    private final Process process;
    private final Thread stdoutReader;
    private final Path stderrFile;

    private ChildJvm(Process process, Thread stdoutReader, Path stderrFile) {
        this.process = process;
        this.stdoutReader = stdoutReader;
        this.stderrFile = stderrFile;
    }

    /**
     * Starts {@code mainClass} with {@code args}; each stdout line is passed to {@code onLine}
     * (on a reader thread), and {@code onEnd} runs once stdout is closed.
     */
    static ChildJvm start(Class<?> mainClass, List<String> args, Path stderrFile, Consumer<String> onLine, Runnable onEnd)
        throws IOException {
        return start(mainClass.getName(), args, stderrFile, onLine, onEnd);
    }

    /** As {@link #start(Class, List, Path, Consumer, Runnable)}, for a main class named by a string (e.g. a tool's). */
    static ChildJvm start(String mainClass, List<String> args, Path stderrFile, Consumer<String> onLine, Runnable onEnd)
        throws IOException {
        List<String> command = new ArrayList<>();
        command.add(javaBinary());
        command.addAll(JVM_FLAGS);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(args);
        Process process = new ProcessBuilder(command)
            .redirectError(stderrFile.toFile())
            .redirectInput(ProcessBuilder.Redirect.PIPE)
            .start();
        process.getOutputStream().close();
        Thread reader = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    onLine.accept(line);
                }
            } catch (IOException e) {
                // The pipe breaks only if the process is gone; the test checks what arrived.
            } finally {
                onEnd.run();
            }
        }, "child-stdout-" + process.pid());
        reader.setDaemon(true);
        reader.start();
        return new ChildJvm(process, reader, stderrFile);
    }

    private static String javaBinary() {
        return ProcessHandle.current().info().command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    long pid() {
        return process.pid();
    }

    /**
     * SIGKILL, and wait for the process to be gone. Sent through the {@link ProcessHandle}
     * ({@code destroyForcibly} is SIGKILL on Unix) rather than {@link Process#destroyForcibly},
     * which also closes our end of the stdout pipe and would drop the lines still in it.
     */
    void kill(long timeoutMs) throws InterruptedException {
        process.toHandle().destroyForcibly();
        if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
            throw new AssertionError("child " + process.pid() + " still alive " + timeoutMs + " ms after SIGKILL");
        }
    }

    /** Waits for the child to exit by itself and for its stdout to be fully read; returns the exit code. */
    int awaitExit(long timeoutMs) throws InterruptedException {
        if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
            throw new AssertionError("child " + process.pid() + " did not exit within " + timeoutMs + " ms; stderr:\n" + stderr());
        }
        awaitStdoutClosed(timeoutMs);
        return process.exitValue();
    }

    /** Waits until every stdout line the child wrote has been passed on. */
    void awaitStdoutClosed(long timeoutMs) throws InterruptedException {
        stdoutReader.join(timeoutMs);
        if (stdoutReader.isAlive()) {
            throw new AssertionError("stdout of child " + process.pid() + " still open " + timeoutMs + " ms after it ended");
        }
    }

    String stderr() {
        try {
            return Files.exists(stderrFile) ? Files.readString(stderrFile, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Kills the child if the test left it running (a failed assertion). */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
